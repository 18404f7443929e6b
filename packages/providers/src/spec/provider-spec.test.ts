import { afterEach, describe, expect, it, vi } from "vitest";
import { chatReply, startOpenAIChatServer } from "../testing/openai-chat-server.js";
import { ProviderSpecError } from "../errors.js";
import { parseProviderSpec, providerFromSpec } from "./provider-spec.js";

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("parseProviderSpec", () => {
  it.each([
    ["llama-cpp:models/judge.gguf", { kind: "llama-cpp", modelPath: "models/judge.gguf" }],
    ["llama-cpp:/abs/Path With Space.GGUF", { kind: "llama-cpp", modelPath: "/abs/Path With Space.GGUF" }],
    ["hf:meta-llama/Llama-3.1-8B-Instruct", { kind: "hf", model: "meta-llama/Llama-3.1-8B-Instruct" }],
    ["  hf:org/model@together ", { kind: "hf", model: "org/model", provider: "together" }],
    [
      "openai-compatible:http://127.0.0.1:8000/v1#Qwen/Qwen2.5-7B-Instruct",
      { kind: "openai-compatible", baseUrl: "http://127.0.0.1:8000/v1", model: "Qwen/Qwen2.5-7B-Instruct" },
    ],
  ])("%s", (spec, expected) => {
    expect(parseProviderSpec(spec)).toEqual(expected);
  });

  it.each([
    ["", /empty/],
    ["gpt-4o", /no provider prefix/],
    ["ollama:llama3", /unknown provider "ollama"/],
    ["llama-cpp:model.bin", /\.gguf/],
    ["hf:", /Hub model id/],
    ["hf:org/model@nowhere", /unknown Inference Provider "nowhere"/],
    ["openai-compatible:127.0.0.1:8000#m", /http\(s\) base URL/],
    ["openai-compatible:http://127.0.0.1:8000", /model after '#'/],
  ])("rejects %j", (spec, reason) => {
    expect(() => parseProviderSpec(spec)).toThrow(ProviderSpecError);
    expect(() => parseProviderSpec(spec)).toThrow(reason);
  });

  it("names every accepted form in the error", () => {
    expect(() => parseProviderSpec("x")).toThrow(
      /llama-cpp:<path\.gguf>, hf:<model>, hf:<model>@<provider>, openai-compatible:<baseUrl>#<model>/,
    );
  });
});

describe("providerFromSpec", () => {
  it("builds a working openai-compatible model", async () => {
    const server = await startOpenAIChatServer({ replies: [chatReply.completion("hello")] });
    try {
      const model = providerFromSpec(`openai-compatible:${server.url}/v1#judge`, { apiKeyEnv: false });
      expect([model.provider, model.modelId]).toEqual(["openai-compatible", "judge"]);
      const response = await model.generate({ messages: [{ role: "user", content: "hi" }] });
      expect(response.choices[0]?.text).toBe("hello");
      expect(server.requests[0]?.body?.model).toBe("judge");
    } finally {
      await server.close();
    }
  });

  it("builds an hf model whose id round-trips through the spec", () => {
    vi.stubEnv("HF_TOKEN", "hf_test");
    const model = providerFromSpec("hf:org/model@groq");
    expect([model.provider, model.modelId]).toEqual(["hf", "org/model@groq"]);
    expect(parseProviderSpec(`hf:${model.modelId}`)).toEqual({ kind: "hf", model: "org/model", provider: "groq" });
  });

  it("builds a llama-cpp model lazily, resolving relative paths against cwd", async () => {
    const model = providerFromSpec("llama-cpp:judge.gguf", { cwd: "/models", llamaCpp: { threads: 1 } });
    expect([model.provider, model.modelId]).toEqual(["llama-cpp", "judge.gguf"]);
    await expect(model.generate({ messages: [{ role: "user", content: "hi" }] })).rejects.toThrow(
      /no model file at \/models\/judge\.gguf/,
    );
    await model.dispose?.();
    // checkFiles: the same fault, before any call.
    expect(() => providerFromSpec("llama-cpp:judge.gguf", { cwd: "/models", checkFiles: true })).toThrow(
      /llamaCpp: no model file at \/models\/judge\.gguf/,
    );
  });
});
