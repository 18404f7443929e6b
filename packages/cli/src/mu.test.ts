import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { criteriaTarget, muSftJsonLines, stepPrompt, type MuSftExample, type StepRecord } from "@rubric/arco-heads";
import { beforeAll, describe, expect, it } from "vitest";
import { runRubric, runRubricHere } from "./__fixtures__/run-cli.js";

/** `rubric mu` as a user runs it: the built binary, the real sidecar, real onnxruntime-node. */
const TIMEOUT_MS = 300_000; // a guard for a busy 2-core machine, not a measurement

const steps: StepRecord[] = [
  {
    id: "q1#0",
    task: "Which city hosts the museum founded by Ada Park?",
    history: [],
    budgetLeft: 3,
    action: "Search[museum founded by Ada Park]",
  },
  {
    id: "q1#1",
    task: "Which city hosts the museum founded by Ada Park?",
    history: [
      { action: "Search[museum founded by Ada Park]", observation: "The Vale Museum was founded by Ada Park." },
    ],
    budgetLeft: 2,
    action: "Finish[Lyon]",
  },
];
const CRITERIA = [
  ["Names the founder", "Targets the first hop", "Short query"],
  ["Answer is supported", "Answer is concise", "Finishes in budget"],
];

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "rubric-mu-cli-"));
  writeFileSync(join(dir, "steps.jsonl"), `${steps.map((s) => JSON.stringify(s)).join("\n")}\n`);
  const examples: MuSftExample[] = steps.map(({ id, ...step }, t) => ({
    id,
    trajectory: "q1",
    step: t,
    messages: stepPrompt(step),
    target: criteriaTarget(CRITERIA[t]!),
    criteria: CRITERIA[t]!,
    scores: t === 0 ? [0.5, 0.25, 0] : [0.75, 0.5, 0.25],
    outcome: 1,
  }));
  writeFileSync(join(dir, "mu-sft.jsonl"), muSftJsonLines(examples));
});

/** The interpreter the sidecar runs on here (Debian's, where python3-torch lives), to write hostile checkpoints with. */
const PYTHON = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";

type Manifest = { k: number; files: Record<string, { sha256: string; bytes: number }> } & Record<string, unknown>;

let plain: Promise<string> | undefined;
/** One plain `mu init` export, made once: the forging tests each copy it and damage their copy. */
function plainMu(): Promise<string> {
  plain ??= (async () => {
    const root = join(dir, "mu-plain");
    const init = await runRubric(["mu", "init", "--out", root]);
    expect(init.code, init.stderr).toBe(0);
    return root;
  })();
  return plain;
}

/**
 * A copy of the export root `from` at `to`, its `v0001` changed by `change`, with every file's hash
 * and size recomputed in the manifest afterwards: a forged directory that passes the hash check.
 */
function forge(from: string, to: string, change: (version: string, manifest: Manifest) => void): string {
  cpSync(from, to, { recursive: true });
  const version = join(to, "v0001");
  const manifest = JSON.parse(readFileSync(join(version, "manifest.json"), "utf8")) as Manifest;
  change(version, manifest);
  for (const file of readdirSync(version).filter((name) => name !== "manifest.json")) {
    const bytes = readFileSync(join(version, file));
    manifest.files[file] = { sha256: createHash("sha256").update(bytes).digest("hex"), bytes: bytes.length };
  }
  writeFileSync(join(version, "manifest.json"), JSON.stringify(manifest, null, 2));
  return to;
}

const criteriaJson = (stdout: string) =>
  JSON.parse(stdout) as {
    model: { directory: string; version: number };
    steps: { id: string; criteria: string[]; scores: number[]; s: number; adjusted?: string }[];
  };

/** `rubric mu criteria` on the shared steps file. */
const criteria = (model: string, ...flags: string[]) =>
  runRubric(["mu", "criteria", "--model", model, "--steps", join(dir, "steps.jsonl"), ...flags]);

const SHARED = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../shared/", import.meta.url));

describe("rubric mu", () => {
  it(
    "mu init --backbone starts μ from a pretrained llama GGUF (its vocabulary, its shape), and mu criteria serves it; flags of the small μ beside it are refused",
    async () => {
      const root = join(dir, "mu-llama");
      const stories = join(SHARED, "models/stories260K.gguf");
      const init = await runRubric([
        "mu",
        "init",
        "--out",
        root,
        "--backbone",
        stories,
        "--max-sequence",
        "1024",
        "--json",
      ]);
      expect(init.code, init.stderr).toBe(0);
      const { manifest } = JSON.parse(init.stdout) as { manifest: Record<string, Record<string, unknown>> };
      expect(manifest["tokenizer"]!["kind"]).toBe("sentencepiece");
      expect(manifest["model"]).toMatchObject({ kind: "llama", vocabularySize: 512, layers: 5, heads: 8 });
      const run = await criteria(root, "--json", "--max-new-tokens", "8");
      expect(run.code, run.stderr).toBe(0);
      expect(criteriaJson(run.stdout).steps).toHaveLength(steps.length);
      const both = await runRubricHere(["mu", "init", "--out", join(dir, "x"), "--backbone", stories, "--layers", "3"]);
      expect(both.code).toBe(2);
      expect(both.stderr).toContain("--layers: does not apply with --backbone");
      const missing = await runRubricHere([
        "mu",
        "init",
        "--out",
        join(dir, "x"),
        "--backbone",
        join(dir, "none.gguf"),
      ]);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain(`--backbone: ${join(dir, "none.gguf")}: no such file`);
    },
    TIMEOUT_MS,
  );

  it(
    "init --sft, then criteria: the same criteria and scores from onnx and torch",
    async () => {
      const root = join(dir, "mu");
      const init = await runRubric([
        "mu",
        "init",
        "--out",
        root,
        "--seed",
        "5",
        "--sft",
        join(dir, "mu-sft.jsonl"),
        "--epochs",
        "60",
        "--json",
      ]);
      expect(init.code, init.stderr).toBe(0);
      expect(JSON.parse(init.stdout)).toMatchObject({
        version: 1,
        manifest: { k: 3, exportVersion: 1, checkpoint: "mu.pt" },
      });
      expect(init.stderr).toMatch(/μ SFT epoch 60\/60: loss /);

      const onnx = await criteria(root, "--json");
      const torch = await criteria(root, "--json", "--backend", "torch");
      expect(onnx.code, onnx.stderr).toBe(0);
      expect(torch.code, torch.stderr).toBe(0);
      // A trained μ carries no untrained warning, on either backend or at init.
      for (const run of [init, onnx, torch]) expect(run.stderr).not.toContain("no training step");
      const a = criteriaJson(onnx.stdout);
      const b = criteriaJson(torch.stdout);
      expect(a.model).toEqual({ directory: join(root, "v0001"), version: 1 });
      expect(a.steps.map((s) => s.id)).toEqual(["q1#0", "q1#1"]);
      expect(a.steps.map((s) => s.criteria)).toEqual(CRITERIA); // what μ was fine-tuned to write
      expect(b.steps.map((s) => s.criteria)).toEqual(a.steps.map((s) => s.criteria));
      a.steps.forEach((step, i) => {
        expect(step.s).toBeCloseTo(step.scores.reduce((x, y) => x + y) / 3, 12);
        step.scores.forEach((x, k) => expect(Math.abs(x - b.steps[i]!.scores[k]!)).toBeLessThan(1e-6));
      });
      // --device reaches torch's mu.load: cpu reads the same μ; a device torch lacks is named.
      const onCpu = await criteria(root, "--json", "--backend", "torch", "--device", "cpu");
      expect(onCpu.code, onCpu.stderr).toBe(0);
      expect(criteriaJson(onCpu.stdout).steps).toEqual(b.steps);
      const onGpu = await criteria(root, "--backend", "torch", "--device", "cuda:7");
      expect(onGpu.code).toBe(1);
      expect(onGpu.stderr).toContain("params.device: device 'cuda:7' was asked for");
      const onOnnx = await criteria(root, "--device", "cpu");
      expect(onOnnx.code).toBe(2);
      expect(onOnnx.stderr).toContain("--device is for --backend torch");

      // The human form names the version and every criterion with its score.
      const text = await criteria(root);
      expect(text.stdout).toContain("μ version 1");
      expect(text.stdout).toMatch(/q1#1 {2}s = -?\d\.\d{4}\n {2,}-?\d\.\d{4} {2}Answer is supported/);
    },
    TIMEOUT_MS,
  );

  it(
    "refuses, naming the fault: a bad steps line, a second init into a model root, a missing flag, an unknown subcommand",
    async () => {
      const bad = join(dir, "bad-steps.jsonl");
      writeFileSync(
        bad,
        `${JSON.stringify(steps[0])}\n{"id":"x","task":"t","history":[],"budgetLeft":-1,"action":"a"}\n`,
      );
      const root = join(dir, "mu-bad");
      const init = await runRubric(["mu", "init", "--out", root]);
      expect(init.code, init.stderr).toBe(0);
      // An untrained μ is said to be one, where it is made and where it is used.
      expect(init.stderr).toContain("warning: μ version 1 has taken no training step");
      expect(init.stderr).toContain("pass --sft <mu-sft.jsonl>");
      const good = join(dir, "good-steps.jsonl");
      writeFileSync(good, `${JSON.stringify(steps[0])}\n`);
      const used = await runRubric(["mu", "criteria", "--model", root, "--steps", good]);
      expect(used.code, used.stderr).toBe(0);
      expect(used.stderr).toContain("warning: μ version 1 has taken no training step");
      const badLine = await runRubricHere(["mu", "criteria", "--model", root, "--steps", bad]);
      expect(badLine.code).toBe(1);
      expect(badLine.stderr).toMatch(/bad-steps\.jsonl.*line 2.*budgetLeft/s);

      const again = await runRubricHere(["mu", "init", "--out", root]);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/OutputExistsError: .*mu-bad: holds μ exports already/);
      expect(readFileSync(join(root, "v0001", "manifest.json"), "utf8")).toContain('"exportVersion": 1');

      const noSteps = await runRubricHere(["mu", "criteria", "--model", root]);
      expect(noSteps.code).toBe(2);
      expect(noSteps.stderr).toMatch(/mu criteria needs --steps <steps\.jsonl>/);
      const unknown = await runRubricHere(["mu", "fit"]);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(/takes init, train or criteria; got "fit"/);
    },
    TIMEOUT_MS,
  );

  it(
    "--backend torch: a mu.pt whose pickle would run a command is refused by name, and the command never runs (issue 29 item 1)",
    async () => {
      const root = await plainMu();
      const marker = join(dir, "ran");
      const forged = forge(root, join(dir, "mu-pickle"), (version) => {
        // The issue's attack: a torch.saved object whose __reduce__ calls os.system, in the format μ's checkpoints use.
        execFileSync(PYTHON, [
          "-c",
          [
            "import os, sys, torch",
            "class Command:",
            "    def __reduce__(self): return (os.system, ('touch ' + sys.argv[2],))",
            "torch.save({'format': 'rubric-trainer/mu/1', 'init': Command()}, sys.argv[1])",
          ].join("\n"),
          join(version, "mu.pt"),
          marker,
        ]);
      });
      const run = await criteria(forged, "--backend", "torch");
      expect(run.code).toBe(1);
      // torch 1.13: "refuses posix.system"; torch ≥ 2: "refuses it: Weights only load failed … posix.system".
      expect(run.stderr).toMatch(/mu-pickle\/v0001\/mu\.pt: the loader refuses .*posix\.system/s);
      expect(existsSync(marker), "the checkpoint's pickle ran a command").toBe(false);
    },
    TIMEOUT_MS,
  );

  it(
    "a graph onnxruntime cannot load, its hash recomputed, is a ModelCorruptError naming it, not a stack dump (issue 29 item 20)",
    async () => {
      const root = await plainMu();
      const forged = forge(root, join(dir, "mu-truncated"), (version) =>
        truncateSync(join(version, "score.onnx"), 1000),
      );
      const run = await criteria(forged);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        /^ModelCorruptError: model directory .*mu-truncated\/v0001: score\.onnx: onnxruntime cannot load it/,
      );
      expect(run.stderr).not.toMatch(/FiberFailure|\n\s+at /);
    },
    TIMEOUT_MS,
  );

  it(
    "a manifest edited to K 5 or K 1 is refused by name on both backends, never scored at the wrong offsets (issue 29 item 3)",
    async () => {
      const root = await plainMu();
      for (const k of [5, 1]) {
        const forged = forge(root, join(dir, `mu-k${k}`), (_, manifest) => {
          manifest.k = k;
        });
        for (const backend of ["onnx", "torch"]) {
          const run = await criteria(forged, "--backend", backend, "--json");
          expect(run.code, `K ${k}, ${backend}: ${run.stdout}`).toBe(1);
          expect(run.stdout).toBe("");
          expect(run.stderr).toMatch(
            new RegExp(`^ModelCorruptError: model directory .*mu-k${k}/v0001: manifest\\.json: k is ${k} but `),
          );
        }
      }
    },
    TIMEOUT_MS,
  );
});
