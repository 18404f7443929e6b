import { execFile, spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUBRIC_BIN, runRubric } from "./__fixtures__/run-cli.js";

/**
 * `rubric serve` as a user runs it (the built binary, stopped by SIGTERM), asked by the Python
 * client as a user installs it (`pip install ./python/rubric-reward`, into a directory of its own).
 */
const TIMEOUT_MS = 180_000; // a guard for a busy 2-core machine, not a measurement
const run = promisify(execFile);
const PYTHON = "/usr/bin/python3";
const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

const rubric = {
  id: "answer",
  criteria: [
    { id: "mentions-paris", text: "Names Paris", weight: 2, verifier: { kind: "includes", terms: ["Paris"] } },
    { id: "one-sentence", text: "Ends with a full stop", weight: 1, verifier: { kind: "regex", pattern: "\\.$" } },
  ],
};
const judged = {
  id: "judged",
  criteria: [
    { id: "mentions-paris", text: "Names Paris", weight: 1, verifier: { kind: "includes", terms: ["Paris"] } },
    { id: "tone", text: "Is polite", weight: 1, verifier: { kind: "llm-judge" } },
  ],
};

let dir: string;
let site: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rubric-serve-"));
  writeFileSync(join(dir, "rubric.json"), JSON.stringify(rubric));
  writeFileSync(join(dir, "judged.json"), JSON.stringify(judged));
  // A copy, so pip's build leaves nothing in the repository.
  cpSync(repo("python/rubric-reward"), join(dir, "rubric-reward"), { recursive: true });
  site = join(dir, "site");
  await run(
    PYTHON,
    [
      "-m",
      "pip",
      "install",
      "--quiet",
      "--no-deps",
      "--no-build-isolation",
      "--no-index",
      "--target",
      site,
      join(dir, "rubric-reward"),
    ],
    { timeout: 120_000 },
  );
}, TIMEOUT_MS);

/** Starts `rubric serve` on any free port and resolves with its URL once it prints it. */
async function startServe(args: readonly string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [RUBRIC_BIN, "serve", "--port", "0", ...args], {
    env: { ...process.env, OPENAI_API_KEY: "", HF_TOKEN: "", ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      const found = /at (http:\/\/[^ ]+) \(/.exec(stdout)?.[1];
      if (found) resolve(found);
    });
    child.on("close", (code) => reject(new Error(`rubric serve exited ${code}: ${stderr}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  return { child, url, exited, output: () => ({ stdout, stderr }) };
}

/** Runs Python with the pip-installed client importable. */
async function python(script: string, args: readonly string[], env: Record<string, string> = {}) {
  const { stdout } = await run(PYTHON, ["-c", script, ...args], {
    env: { ...process.env, PYTHONPATH: site, ...env },
    timeout: 60_000,
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe("rubric serve with the pip-installed Python client", () => {
  let served: Awaited<ReturnType<typeof startServe>>;
  beforeAll(async () => {
    served = await startServe(["--rubric", join(dir, "rubric.json"), "--max-batch", "3"]);
  });
  afterAll(() => served?.child.kill("SIGTERM"));

  it(
    "scores TRL's prompts and completions in server-sized batches, and says what it scored",
    async () => {
      const out = await python(
        `
import json, os, sys
from rubric_reward import RewardClient, RewardServerError, make_trl_reward, trl_reward
url = sys.argv[1]
prompts = ["Capital of France?", [{"role": "user", "content": "Capital of France?"}], "Capital of Italy?", "Say hi"]
completions = ["It is Paris.", [{"role": "assistant", "content": "paris, I think"}], "Rome.", "hi"]
reward = make_trl_reward(url, max_batch=3)
out = {"rewards": reward(prompts, completions, answer=["a", "b", "c", "d"]), "name": reward.__name__}
out["health"] = RewardClient(url).health()
os.environ["RUBRIC_REWARD_URL"] = url
out["from_env"] = trl_reward(prompts[:2], completions[:2])
try:
    make_trl_reward(url)(prompts, completions)
except RewardServerError as error:
    out["too_big"] = error.status
print(json.dumps(out))
`,
        [served.url],
      );
      expect(out).toEqual({
        rewards: [1, 2 / 3, 1 / 3, 0],
        name: "rubric_reward",
        health: { ok: true, name: "answer" },
        from_env: [1, 2 / 3],
        too_big: 413,
      });
      expect(served.output().stdout).toMatch(
        /^serving "answer" at http:\/\/127\.0\.0\.1:\d+ \(POST \/score, GET \/health\); Ctrl-C stops$/m,
      );
      expect(served.output().stderr).toMatch(/^scored 3 completion\(s\) in [\d.]+ s$/m);
    },
    TIMEOUT_MS,
  );

  it(
    "stops on SIGTERM with exit 0",
    async () => {
      const other = await startServe(["--rubric", join(dir, "rubric.json")]);
      other.child.kill("SIGTERM");
      expect(await other.exited).toBe(0);
      expect(other.output().stderr).toContain("stopping");
    },
    TIMEOUT_MS,
  );
});

describe("a completion the server cannot score reaches Python as an explicit policy, never a 0", () => {
  let judge: Server;
  let served: Awaited<ReturnType<typeof startServe>>;
  beforeAll(async () => {
    // A judge endpoint that refuses every call (400: not retried), so "tone" is an error verdict.
    judge = createServer((_request, response) => {
      response.writeHead(400, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { message: "model not loaded", type: "invalid_request_error" } }));
    });
    await new Promise<void>((resolve) => judge.listen(0, "127.0.0.1", resolve));
    const port = (judge.address() as { port: number }).port;
    served = await startServe(
      [
        "--rubric",
        join(dir, "judged.json"),
        "--token-env",
        "SERVE_TOKEN",
        "--judge",
        `openai-compatible:http://127.0.0.1:${port}/v1#judge`,
        "--judge-retries",
        "0",
      ],
      { SERVE_TOKEN: "tok-123" },
    );
  }, TIMEOUT_MS);
  afterAll(async () => {
    served?.child.kill("SIGTERM");
    await new Promise((resolve) => judge?.close(resolve));
  });

  it(
    "raises by default naming the criterion and cause, hands TRL None or a stand-in when asked, and needs the token",
    async () => {
      const out = await python(
        `
import json, sys
from rubric_reward import RewardServerError, RewardUnavailableError, make_trl_reward
url = sys.argv[1]
out = {}
try:
    make_trl_reward(url)(["q", "q"], ["Paris, sir.", "Rome."])
except RewardUnavailableError as error:
    out["raised"] = {"causes": {str(k): v for k, v in error.causes.items()}, "message": str(error)}
out["none"] = make_trl_reward(url, on_error="none")(["q"], ["Paris."])
out["stand_in"] = make_trl_reward(url, on_error=-1)(["q"], ["Paris."])
try:
    make_trl_reward(url, token="wrong")(["q"], ["Paris."])
except RewardServerError as error:
    out["wrong_token"] = error.status
print(json.dumps(out))
`,
        [served.url],
        { RUBRIC_REWARD_TOKEN: "tok-123" },
      );
      const raised = out.raised as { causes: Record<string, string>; message: string };
      expect(Object.keys(raised.causes)).toEqual(["0", "1"]);
      expect(raised.causes["0"]).toMatch(/^tone: .*400/);
      expect(raised.message).toContain("2 completion(s) got no reward");
      expect(out.none).toEqual([null]);
      expect(out.stand_in).toEqual([-1]);
      expect(out.wrong_token).toBe(401);
      expect(served.output().stderr).toMatch(/scored 2 completion\(s\) in [\d.]+ s; 2 unscored \(first: tone: /);
    },
    TIMEOUT_MS,
  );
});

describe("rubric serve refuses what it cannot serve, before it listens", () => {
  it("a missing local judge model, a judge criterion without --judge, an open host without a token, an unset token variable", async () => {
    const missing = await runRubric([
      "serve",
      "--rubric",
      join(dir, "judged.json"),
      "--judge",
      "llama-cpp:models/nope.gguf",
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /--judge llama-cpp:models\/nope\.gguf: llamaCpp: no model file at .*models\/nope\.gguf/,
    );
    const noJudge = await runRubric(["serve", "--rubric", join(dir, "judged.json")]);
    expect(noJudge.code).toBe(1);
    expect(noJudge.stderr).toContain('no verifier for kind "llm-judge"');
    expect(noJudge.stderr).toContain("Pass --judge <provider>");
    const open = await runRubric(["serve", "--rubric", join(dir, "rubric.json"), "--host", "0.0.0.0"]);
    expect(open.code).toBe(2);
    expect(open.stderr).toContain("--token-env");
    const unset = await runRubric(["serve", "--rubric", join(dir, "rubric.json"), "--token-env", "NO_SUCH_VAR_HERE"]);
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain("--token-env NO_SUCH_VAR_HERE: that variable is unset or empty");
  });
});

/** The ```python blocks of a README, each with the line it starts on. */
function pythonBlocks(file: string): { line: number; code: string }[] {
  const blocks: { line: number; code: string }[] = [];
  for (const match of readFileSync(repo(file), "utf8").matchAll(/^```python\n([\s\S]*?)^```/gmu))
    blocks.push({ line: readFileSync(repo(file), "utf8").slice(0, match.index).split("\n").length, code: match[1]! });
  return blocks;
}

/**
 * The block as a check: each `expression   # value` line whose value is a Python literal asserts
 * that the expression equals it, as the README claims.
 */
function withClaimsAsserted(code: string): string {
  return code
    .split("\n")
    .map((line) => {
      const claim = /^([^#=]+?)\s{2,}#\s(.+)$/u.exec(line);
      if (!claim) return line;
      const [, expression, value] = claim;
      return [
        `__got = ${expression}`,
        `try:\n    __want = __import__("ast").literal_eval(${JSON.stringify(value)})\nexcept (ValueError, SyntaxError):\n    __want = __got`,
        `assert __got == __want, f"${expression!.replace(/"/gu, '\\"')}: {__got!r}, the README says {__want!r}"`,
      ].join("\n");
    })
    .join("\n");
}

describe("the Python READMEs' blocks", () => {
  it(
    "parse, import only names rubric_reward has, and the client block runs as written against the README's server",
    async () => {
      const blocks = ["python/rubric-reward/README.md", "packages/verifiers/README.md"].flatMap((file) =>
        pythonBlocks(file).map((block) => ({ ...block, file })),
      );
      expect(blocks.length).toBe(3);
      for (const { file, line, code } of blocks) {
        const names = [...code.matchAll(/^from rubric_reward import (.+)$/gmu)].flatMap((m) => m[1]!.split(/,\s*/u));
        const check = `import ast, sys, rubric_reward\nast.parse(sys.argv[1])\nmissing = [n for n in sys.argv[2:] if not hasattr(rubric_reward, n)]\nprint(__import__("json").dumps({"missing": missing}))`;
        expect(await python(check, [code, ...names]), `${file}:${line}`).toEqual({ missing: [] });
      }
      // The README's server line serves the memo rubric; its client block asks it.
      const served = await startServe(["--rubric", repo("examples/data/memo-rubric.json")]);
      try {
        const client = blocks.find((block) => block.code.includes("RewardClient("));
        const code = withClaimsAsserted(client!.code.replace("http://127.0.0.1:8787", served.url));
        expect(code).toContain("assert __got == __want");
        expect(await python(`${code}\nprint('{"ran": true}')`, [])).toEqual({ ran: true });
        // The check can fail: a claim the server does not bear out is caught.
        await expect(python(withClaimsAsserted(`${code}\nreply.rewards   # [0.5, 0.0]`), [])).rejects.toThrow(
          /the README says \[0\.5, 0\.0\]/u,
        );
      } finally {
        served.child.kill("SIGTERM");
        await served.exited;
      }
    },
    TIMEOUT_MS,
  );
});
