import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ProviderConfigError, ProviderPreflightError } from "../errors.js";
import { startOpenAIChatServer } from "../testing/openai-chat-server.js";
import { preflightProvider } from "./preflight.js";

const STORIES =
  process.env["RUBRIC_SHARED_DIR"] === undefined
    ? fileURLToPath(new URL("../../../../../shared/models/stories260K.gguf", import.meta.url))
    : join(process.env["RUBRIC_SHARED_DIR"], "models/stories260K.gguf");

afterEach(() => {
  vi.unstubAllEnvs();
});

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("preflightProvider: llama-cpp", () => {
  it("passes a real GGUF file, refuses a missing one and a file that is not GGUF, naming the path", async () => {
    expect((await preflightProvider(`llama-cpp:${STORIES}`)).checked).toBe(`model file ${STORIES}`);
    const dir = mkdtempSync(join(tmpdir(), "preflight-"));
    await expect(preflightProvider("llama-cpp:none.gguf", { cwd: dir })).rejects.toThrow(ProviderConfigError);
    await expect(preflightProvider("llama-cpp:none.gguf", { cwd: dir })).rejects.toThrow(
      `no model file at ${join(dir, "none.gguf")}`,
    );
    writeFileSync(join(dir, "page.gguf"), "<html>Not Found</html>");
    const notGguf = preflightProvider("llama-cpp:page.gguf", { cwd: dir });
    await expect(notGguf).rejects.toThrow(ProviderPreflightError);
    await expect(notGguf).rejects.toThrow(`${join(dir, "page.gguf")} is not a GGUF model file`);
  });
});

describe("preflightProvider: openai-compatible, against a local server speaking OpenAI's wire", () => {
  it("a server that serves the model passes, sending the key the run will send; nothing is generated", async () => {
    vi.stubEnv("JUDGE_KEY", "sk-local");
    const server = await startOpenAIChatServer({ models: ["qwen", "llama"], requireKey: "sk-local" });
    try {
      const result = await preflightProvider(`openai-compatible:${server.url}/v1#qwen`, { apiKeyEnv: "JUDGE_KEY" });
      expect(result).toEqual({ checked: `${server.url}/v1/models serves qwen` });
      expect(server.requests.map((request) => `${request.method} ${request.path}`)).toEqual(["GET /v1/models"]);
      expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-local");
    } finally {
      await server.close();
    }
  });

  it("a refused key stops the run, naming the variable; no key sent says how to send one", async () => {
    vi.stubEnv("JUDGE_KEY", "sk-wrong");
    const server = await startOpenAIChatServer({ models: ["qwen"], requireKey: "sk-local" });
    try {
      const refused = preflightProvider(`openai-compatible:${server.url}#qwen`, { apiKeyEnv: "JUDGE_KEY" });
      await expect(refused).rejects.toThrow(ProviderPreflightError);
      await expect(refused).rejects.toThrow(
        `${server.url}/v1/models answered HTTP 401: the key in $JUDGE_KEY was refused`,
      );
      await expect(preflightProvider(`openai-compatible:${server.url}#qwen`)).rejects.toThrow(
        /HTTP 401: no key was sent: name the variable that holds it/,
      );
    } finally {
      await server.close();
    }
  });

  it("a server nothing listens on stops the run, naming the URL and the cause", async () => {
    const port = await closedPort();
    const unreachable = preflightProvider(`openai-compatible:http://127.0.0.1:${port}/v1#qwen`);
    await expect(unreachable).rejects.toThrow(ProviderPreflightError);
    await expect(unreachable).rejects.toThrow(
      new RegExp(`cannot reach http://127\\.0\\.0\\.1:${port}/v1/models: .*ECONNREFUSED`, "u"),
    );
  });

  it("a model the server does not list is a warning (gateways serve aliases); a server without the list passes", async () => {
    const listing = await startOpenAIChatServer({ models: ["llama"] });
    const bare = await startOpenAIChatServer();
    try {
      const missing = await preflightProvider(`openai-compatible:${listing.url}#qwen`, { apiKeyEnv: false });
      expect(missing.warning).toBe(
        `${listing.url}/v1/models does not list the model "qwen" (it lists llama); its calls may fail`,
      );
      const unlisted = await preflightProvider(`openai-compatible:${bare.url}#qwen`, { apiKeyEnv: false });
      expect(unlisted).toEqual({ checked: `${bare.url}/v1/models answers (it lists no models: HTTP 404)` });
    } finally {
      await Promise.all([listing.close(), bare.close()]);
    }
  });
});

describe("preflightProvider: hf", () => {
  it("needs the token's variable, and sends nothing", async () => {
    vi.stubEnv("HF_TOKEN", "");
    await expect(preflightProvider("hf:org/model")).rejects.toThrow(/HF_TOKEN is not set/);
    vi.stubEnv("HF_TOKEN", "hf_x");
    expect((await preflightProvider("hf:org/model")).checked).toMatch(/^a token for Hugging Face \(not sent/);
  });
});
