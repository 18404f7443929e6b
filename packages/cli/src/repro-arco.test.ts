import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ArcoTableSchema } from "@rubric/repro";
import { beforeAll, describe, expect, it } from "vitest";
import { runRubric, runRubricHere } from "./__fixtures__/run-cli.js";
import { ksOf } from "./commands/repro-arco.js";

/** `rubric repro arco` as a user runs it: the built binary, the real sidecar, onnxruntime-node and llama.cpp. */
const SHARED = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../shared/", import.meta.url));
const HOTPOT = join(SHARED, "data/hotpotqa");
const STORIES = join(SHARED, "models/stories260K.gguf");
const TIMEOUT_MS = 600_000; // a guard for a busy 2-core machine, not a measurement

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "rubric-repro-arco-"));
});

const data = ["--train-data", join(HOTPOT, "train.jsonl"), "--eval-data", join(HOTPOT, "dev.jsonl")];

describe("rubric repro arco: input checked before any work", () => {
  it("names an unknown method, a bad K and a malformed --policy as usage errors", async () => {
    const unknown = await runRubricHere(["repro", "arco", "--out", join(dir, "x"), "--methods", "arco,ppo", ...data]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--methods: unknown method "ppo"; known: outcome, rar, .*teacherMu/);
    const k = await runRubricHere(["repro", "arco", "--out", join(dir, "x"), "--k-sweep", "1,two", ...data]);
    expect(k.code).toBe(2);
    expect(k.stderr).toContain('--k-sweep: expected integers ≥ 1, got "two"');
    // `none` turns the sensitivity rows off in a full run; absent keeps the default.
    expect(ksOf(["none"])).toEqual([]);
    expect(ksOf(["1", "5"])).toEqual([1, 5]);
    expect(ksOf(undefined)).toBeUndefined();
    const policy = await runRubricHere(["repro", "arco", "--out", join(dir, "x"), "--policy", "gpt:4", ...data]);
    expect(policy.code).not.toBe(0);
    expect(policy.stderr).toMatch(/gpt:4.*unknown provider "gpt"/);
    // The tune split is the training file's: an evaluation file beside it is a contradiction.
    const split = await runRubricHere(["repro", "arco", "--out", join(dir, "x"), "--eval-split", "tune", ...data]);
    expect(split.code).toBe(2);
    expect(split.stderr).toContain(
      "--eval-split tune evaluates on the training file's held-out questions; drop --eval-data",
    );
    const unknownSplit = await runRubricHere(["repro", "arco", "--out", join(dir, "x"), "--eval-split", "test"]);
    expect(unknownSplit.code).toBe(2);
    expect(unknownSplit.stderr).toContain("--eval-split");
    const pooling = await runRubricHere(["repro", "arco", "--out", join(dir, "x"), "--mu-pooling", "max", ...data]);
    expect(pooling.code).toBe(2);
    expect(pooling.stderr).toContain("--mu-pooling");
  });

  it("takes the sidecar's flags only with --policy sidecar:…, and only those its model can use; --mu-device reaches μ", async () => {
    const cases: [args: string[], code: number, says: string][] = [
      [["--device", "cuda"], 2, "--device is for --policy sidecar:… (π trained in the torch sidecar)"],
      [["--policy", "extractive", "--lora-rank", "8"], 2, "--lora-rank is for --policy sidecar:…"],
      [["--policy", "sidecar:tiny", "--dtype", "bfloat16"], 2, "--dtype: the small transformer trains in float32"],
      [["--dtype", "bfloat16"], 2, "--dtype is for --policy sidecar:… (π trained in the torch sidecar) or --mu-model"],
      // The small μ served by torch is float32: --dtype is for a transformers μ.
      [["--mu-model", "tiny", "--dtype", "float16"], 2, "--dtype is for --policy sidecar:…"],
      [["--policy", "sidecar:"], 2, "--policy: sidecar: needs a model"],
      [["--policy", "served:Qwen/Qwen3-4B"], 2, "served: needs the server's root and the model the sidecar trains"],
      [
        ["--policy", "served:http://127.0.0.1:9#/models/qwen", "--lora-rank", "0"],
        2,
        "--lora-rank: a served policy is published as LoRA adapters",
      ],
      // The server is asked before any training: nothing listens on port 9.
      [["--policy", "served:http://127.0.0.1:9#/models/qwen"], 1, "http://127.0.0.1:9/v1"],
      // μ's device reaches mu.init: one torch lacks stops the run at μ's warm-up, named.
      [
        ["--quick", "--methods", "arco", "--train-questions", "8", "--eval-questions", "4", "--mu-device", "cuda:7"],
        1,
        "params.device: device 'cuda:7' was asked for",
      ],
      // A transformers μ reaches mu.init: Debian's torch has no transformers, and the sidecar says so.
      [
        // --force: the case above left its seed directory in the same --out.
        [
          "--quick",
          "--force",
          "--methods",
          "arco",
          "--train-questions",
          "8",
          "--eval-questions",
          "4",
          "--mu-model",
          join(dir, "no-model"),
        ],
        1,
        "mu.init with model.kind 'transformers'",
      ],
    ];
    for (const [args, code, says] of cases) {
      const run = await runRubricHere(["repro", "arco", "--out", join(dir, "x"), ...args, ...data]);
      expect({ args, code: run.code }).toEqual({ args, code });
      expect(run.stderr).toContain(says);
    }
  });

  it("refuses an earlier run's seed directories without --force, and a missing data file", async () => {
    const out = join(dir, "earlier");
    mkdirSync(join(out, "seed-1"), { recursive: true });
    const refused = await runRubricHere(["repro", "arco", "--out", out, ...data]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${join(out, "seed-1")}: an earlier run's seed directory; pass --force`);
    const missing = await runRubricHere([
      "repro",
      "arco",
      "--out",
      join(dir, "y"),
      "--eval-data",
      join(dir, "none.jsonl"),
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`--eval-data ${join(dir, "none.jsonl")}: cannot read (no such file)`);
  });

  it("--resume continues the run in <dir> rather than refusing its seeds, and refuses another configuration before training", async () => {
    const out = join(dir, "resumed");
    mkdirSync(join(out, "seed-1"), { recursive: true });
    writeFileSync(join(out, "arco-config.json"), "{}\n"); // what another configuration's run recorded
    const resumed = await runRubricHere([
      "repro",
      "arco",
      "--quick",
      "--resume",
      "--out",
      out,
      "--threads",
      "1",
      ...data,
    ]);
    expect(resumed.code).toBe(1);
    expect(resumed.stderr).toContain(`${join(out, "arco-config.json")}: settings differ from this run's`);
    expect(resumed.stderr).not.toContain("an earlier run's seed directory");
  });

  it("documents itself under --help and `rubric help repro arco`", async () => {
    for (const args of [
      ["repro", "arco", "--help"],
      ["help", "repro", "arco"],
    ]) {
      const help = await runRubricHere(args);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain("--policy <spec>");
      expect(help.stdout).toContain("Reproduces ARCO");
    }
  });
});

describe("rubric repro arco with an LLM policy (stories260K through llama.cpp)", () => {
  it(
    "runs the pipeline end to end on a few questions: warm-up, μ, co-evolution, the table",
    async () => {
      const out = join(dir, "llm");
      const run = await runRubric([
        "repro",
        "arco",
        "--policy",
        `llama-cpp:${STORIES}`,
        ...data,
        "--train-questions",
        "2",
        "--eval-questions",
        "2",
        "--methods",
        "outcome,arco",
        "--teacher-rollouts",
        "1",
        "--mu-sft-examples",
        "8",
        "--mu-sft-epochs",
        "1",
        "--sparse-epochs",
        "1",
        "--dense-epochs",
        "1",
        "--rollouts-per-batch",
        "4",
        "--gamma",
        "0",
        "--terminal-buckets",
        "per-step",
        "--mu-pooling",
        "last",
        "--threads",
        "1",
        "--out",
        out,
      ]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain("seed 1: training arco");
      const table = ArcoTableSchema.parse(JSON.parse(readFileSync(join(out, "table.json"), "utf8")));
      expect(Object.keys(table.methods)).toEqual(["outcome", "arco"]);
      expect(table.config).toMatchObject({
        trainQuestions: 2,
        evalQuestions: 2,
        trainer: { gamma: 0, terminalBuckets: "per-step" }, // ours, reaching the trainer's settings
        mu: { pooling: "last" }, // ours, reaching μ's (warmUpMu's test reads it off μ's manifest)
      });
      // The LLM is rolled out, not trained: no π update in any batch, but μ co-evolves on its rollouts.
      const arco = readFileSync(join(out, "seed-1", "arco", "log.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { type: string; policy?: unknown; muVersion?: number });
      const trained = arco.filter((line) => line.type === "batch");
      expect(trained.length).toBeGreaterThan(0);
      expect(trained.every((line) => line.policy === undefined)).toBe(true);
      expect(trained.at(-1)!.muVersion).toBe(1 + trained.length);
      expect(run.stdout).toMatch(/wrote .*table\.json/);
    },
    TIMEOUT_MS,
  );
});
