import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { runRubric, runRubricHere } from "./__fixtures__/run-cli.js";

/** `rubric mu train` as a user runs it: the built binary, the real sidecar, real onnxruntime-node. */
const TIMEOUT_MS = 600_000; // a guard for a busy 2-core machine, not a measurement

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const RUNS = "examples/data/agent-runs.jsonl";

/** The shell block of arco-heads' README section on training μ on one's own runs. */
function readmeCommands(): string[][] {
  const readme = readFileSync(repo("packages/arco-heads/README.md"), "utf8");
  const block = /### Training μ on your own agent's runs[\s\S]*?```sh\n([\s\S]*?)\n```/u.exec(readme)?.[1];
  if (block === undefined) throw new Error("the README's training section has no sh block");
  return block.split("\n").map((line) => line.trim().split(/\s+/));
}

let root: string;
beforeAll(() => {
  // The repository's layout, as the README's commands name their files from its root.
  root = mkdtempSync(join(tmpdir(), "rubric-mu-train-"));
  mkdirSync(join(root, "examples/data"), { recursive: true });
  cpSync(repo(RUNS), join(root, RUNS));
});

describe("the arco-heads README's walk from an agent's logs to scored steps", () => {
  it(
    "runs as written: init keeps the generic prompt, train writes version 2 with its held-out report, criteria scores every step",
    async () => {
      const commands = readmeCommands();
      expect(commands.map((words) => words.slice(0, 3).join(" "))).toEqual([
        "rubric mu init",
        "rubric mu train",
        "rubric mu criteria",
      ]);
      const results = [];
      for (const [bin, ...args] of commands) {
        expect(bin).toBe("rubric");
        const result = await runRubric(args, "", {}, root);
        expect(result.code, result.stderr).toBe(0);
        results.push(result);
      }
      const [init, train, criteria] = results;
      expect(init!.stderr).toContain("has taken no training step");
      const manifest = (version: string) =>
        JSON.parse(readFileSync(join(root, "models/agent-mu", version, "manifest.json"), "utf8"));
      expect(manifest("v0001").prompt).toEqual({ style: "generic" });
      expect(train!.stdout).toContain("μ version 2 in models/agent-mu/v0002 (from models/agent-mu/v0001;");
      // 10 runs are annotated; those among the 32 training runs (8 held out) warm μ up, 5 steps each.
      expect(train!.stdout).toMatch(/^warm-up: (\d+) annotated steps of (\d+) runs, 4 epochs/m);
      const [, steps, runs] = /^warm-up: (\d+) annotated steps of (\d+) runs/m.exec(train!.stdout)!;
      expect(Number(steps)).toBe(5 * Number(runs));
      expect(train!.stdout.match(/^epoch \d: loss/gm)).toHaveLength(3);
      expect(train!.stdout).toMatch(/^held-out runs \(8, \d succeeded\): mean \|Σ_t s_t − R\| [\d.]+ → [\d.]+, AUC/m);
      expect(manifest("v0002").prompt).toEqual({ style: "generic" });
      expect(manifest("v0002").training.steps).toBeGreaterThan(12);
      const scored = JSON.parse(criteria!.stdout) as { model: { version: number }; steps: { id: string; s: number }[] };
      expect(scored.model.version).toBe(2);
      expect(scored.steps).toHaveLength(200);
      expect(scored.steps[0]!.id).toBe("run-01#0");
      expect(scored.steps.every((step) => step.s >= -1 && step.s <= 1)).toBe(true);
      // The trained μ warns no more.
      expect(criteria!.stderr).not.toContain("has taken no training step");
    },
    TIMEOUT_MS,
  );

  it("uses a file that its generator writes byte for byte", () => {
    const out = join(root, "regenerated.jsonl");
    execFileSync(repo("examples/node_modules/.bin/tsx"), [repo("examples/data/agent-runs.ts"), out]);
    expect(readFileSync(out, "utf8")).toBe(readFileSync(repo(RUNS), "utf8"));
  });
});

describe("rubric mu train and criteria --trajectories refuse bad input before any work", () => {
  it(
    "names every bad line of a trajectories file (exit 1), and asks for what is missing (exit 2)",
    async () => {
      const bad = join(root, "bad.jsonl");
      writeFileSync(
        bad,
        `${JSON.stringify({ id: "a", task: "t", steps: [], outcome: 1 })}\n{"id": "b", "task": "t", "steps": [{"action": "x", "observation": "y"}], "outcome": "yes"}\n`,
      );
      const read = await runRubricHere([
        "mu",
        "train",
        "--model",
        join(root, "models/agent-mu"),
        "--trajectories",
        bad,
      ]);
      expect(read.code).toBe(1);
      expect(read.stderr).toContain(bad);
      expect(read.stderr).toMatch(/line 1.*steps/);
      expect(read.stderr).toMatch(/line 2.*outcome/);

      const missing = await runRubricHere(["mu", "train", "--model", join(root, "models/agent-mu")]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain("mu train needs --trajectories <runs.jsonl>");

      const both = await runRubricHere(["mu", "criteria", "--model", "m", "--steps", "s.jsonl", "--trajectories", bad]);
      expect(both.code).toBe(2);
      expect(both.stderr).toContain("--steps or --trajectories, not both");

      // One export copied out of its root has no root to add a version to: --out must say where.
      cpSync(join(root, "models/agent-mu/v0001"), join(root, "lone-export"), { recursive: true });
      const lone = await runRubricHere([
        "mu",
        "train",
        "--model",
        join(root, "lone-export"),
        "--trajectories",
        join(root, RUNS),
      ]);
      expect(lone.code).toBe(2);
      expect(lone.stderr).toContain("mu train needs --out <dir>");
    },
    TIMEOUT_MS,
  );
});
