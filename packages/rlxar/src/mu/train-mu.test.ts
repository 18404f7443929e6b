import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  RubricModel,
  readModel,
  stepsOf,
  type Trajectory,
  type TrajectoryRecord,
  trajectoryOf,
} from "@rubric/arco-heads";
import { createRng } from "@rubric/core";
import { SidecarClient } from "@rubric/sidecar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RlxarInputError } from "../errors.js";
import { createMu } from "./sidecar-mu.js";
import { type TrainMuEvent, trainMu } from "./train-mu.js";

const TIMEOUT_MS = 300_000; // a guard for a busy 2-core machine, not a measurement

/**
 * A coding agent's logged runs: the run succeeds exactly when its middle step fixes the bug rather
 * than giving up, so μ can learn from outcomes alone which step earned the reward.
 */
function agentRuns(n: number, seed: number): TrajectoryRecord[] {
  const rng = createRng(seed);
  return Array.from({ length: n }, (_, i) => {
    const ok = i % 2 === 0;
    const file = ["parse.py", "util.py", "cli.py", "io.py"][rng.int(4)];
    return {
      id: `run-${i}`,
      task: `Make the failing test in ${file} pass`,
      steps: [
        { action: "run_tests()", observation: `1 failed in ${file}` },
        ok
          ? { action: `fix_bug(${file})`, observation: "patched" }
          : { action: `give_up(${file})`, observation: "stopped" },
        { action: "run_tests()", observation: ok ? "all passed" : "1 failed" },
      ],
      outcome: ok ? 1 : 0,
    };
  });
}

describe("trainMu: μ trained on an agent's own runs and outcomes", () => {
  let client: SidecarClient;
  let root: string;
  const runs = agentRuns(40, 5);

  beforeAll(async () => {
    client = await SidecarClient.start({ threads: 1 });
    root = await mkdtemp(join(tmpdir(), "rlxar-train-mu-"));
    await createMu(client, root, {
      k: 2,
      seed: 1,
      vocabularySize: 400,
      maxCriteriaTokens: 16,
      shape: { dModel: 32, layers: 1, heads: 2, maxSequence: 640 },
      corpus: runs.flatMap((run) => stepsOf(trajectoryOf(run, 3))),
      prompt: { style: "generic", budgetLabel: "Tool calls left", layout: "action-last" },
    });
  }, TIMEOUT_MS);

  afterAll(async () => {
    await client?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it(
    "learns from outcomes alone to score held-out runs by success, and writes the next version with the model's prompt",
    async () => {
      const events: TrainMuEvent[] = [];
      const trained = await trainMu(client, root, runs, root, {
        epochs: 4,
        learningRate: 1e-3,
        headLearningRate: 1e-2,
        validation: 0.25,
        seed: 3,
        onProgress: (event) => events.push(event),
      });
      expect(trained.version).toBe(2);
      expect(trained.trainRuns).toBe(30);
      expect(trained.from).toBe(join(root, "v0001"));
      // The untrained μ's Σ_t s_t says nothing of success; after training it ranks held-out runs by it.
      const { before, after } = trained.validation!;
      expect(before.runs).toBe(10);
      expect(after.auc!).toBeGreaterThan(0.75);
      expect(after.auc! - before.auc!).toBeGreaterThan(0.3);
      expect(after.gap).toBeLessThan(before.gap);
      expect(trained.epochs.at(-1)!.loss).toBeLessThan(trained.epochs[0]!.loss);
      // Progress: every batch of every epoch (30 runs in batches of 8 = 4), and both validations.
      expect(events.filter((e) => e.type === "batch")).toHaveLength(16);
      expect(events.filter((e) => e.type === "validate").map((e) => e.type === "validate" && e.when)).toEqual([
        "before",
        "after",
      ]);
      const { manifest, tokenizer } = await readModel(trained.directory);
      expect(manifest.prompt).toEqual({ style: "generic", budgetLabel: "Tool calls left", layout: "action-last" });
      expect(manifest.training.steps).toBe(16);
      // onnxruntime-node reads the saved settings: the prompt μ scores is the one it trained on,
      // and a caller's option replaces one field of it.
      const model = await RubricModel.load(trained.directory, { threads: 1 });
      try {
        const step = stepsOf(trajectoryOf(runs[0]!, 3))[1]!;
        const [saved] = await model.scoreSteps([step], [["a", "b"]]);
        const text = tokenizer.decode(saved!.ids.prompt.slice(1));
        expect(text).toContain("Task: Make the failing test");
        expect(text).toContain("Tool calls left before this action: 2");
        // The saved layout too: the instructions, then the action.
        expect(text.indexOf("Action to evaluate:")).toBeGreaterThan(text.indexOf("Reply with JSON only"));
        const [overridden] = await model.scoreSteps([step], [["a", "b"]], { budgetLabel: "Edits left" });
        const other = tokenizer.decode(overridden!.ids.prompt.slice(1));
        expect(other).toContain("Task: Make the failing test");
        expect(other).toContain("Edits left before this action: 2");
      } finally {
        await model.close();
      }
    },
    TIMEOUT_MS,
  );

  it(
    "warms up on the runs' own annotations and the annotator's, on training runs only, before the decomposition loss",
    async () => {
      const annotated = runs.slice(0, 4).map((run) => ({
        ...run,
        steps: run.steps.map((step, t) => ({
          ...step,
          criteria: [`checks step ${t}`, "uses the log"],
          scores: [0.5, 0.1],
        })),
      }));
      const asked: Trajectory[] = [];
      const contexts: unknown[] = [];
      const out = await mkdtemp(join(tmpdir(), "rlxar-train-mu-out-"));
      try {
        const trained = await trainMu(client, root, [...annotated, ...runs.slice(4, 8)], out, {
          epochs: 1,
          validation: 0.25,
          seed: 1,
          sft: { epochs: 1 },
          prompt: { budgetLabel: "Calls left" },
          annotator: async (trajectory, context) => {
            asked.push(trajectory);
            contexts.push(context);
            return {
              trajectory: trajectory.id,
              outcome: trajectory.outcome,
              steps: trajectory.turns.map(() => ({ criteria: ["a", "b"], raw: [0, 0], scores: [0, 0] })),
              shift: 0,
            };
          },
        });
        // 2 of 8 held out; the annotator saw only the unannotated training runs, with their budgets.
        expect(trained.trainRuns).toBe(6);
        const heldOut = 8 - trained.trainRuns;
        expect(heldOut).toBe(2);
        expect(asked.every((t) => !t.id.match(/^run-[0-3]$/))).toBe(true);
        expect(asked[0]!.turns.map((turn) => turn.budgetLeft)).toEqual([3, 2, 1]);
        // It writes for μ's K and the prompt training uses: the model's style with the override.
        expect(contexts[0]).toEqual({
          k: 2,
          prompt: { style: "generic", budgetLabel: "Calls left", layout: "action-last" },
        });
        // Annotations that decompose R train; the annotator's zeros decompose only R = 0 runs.
        const fileRuns = annotated.filter((run) => asked.every((t) => t.id !== run.id)).length;
        expect(trained.sft!.epochs).toHaveLength(1);
        expect(trained.sft!.steps % 3).toBe(0);
        expect(trained.sft!.runs).toBeGreaterThanOrEqual(1);
        expect(trained.sft!.runs).toBeLessThanOrEqual(fileRuns + asked.length);
        // A fresh root: version 1 there, the prompt override kept beside the model's own style.
        expect(trained.version).toBe(1);
        expect(await readdir(out)).toEqual(["v0001"]);
        expect((await readModel(trained.directory)).manifest.prompt).toEqual({
          style: "generic",
          budgetLabel: "Calls left",
          layout: "action-last",
        });
      } finally {
        await rm(out, { recursive: true, force: true });
      }
    },
    TIMEOUT_MS,
  );

  it("refuses bad input before training: a step μ cannot fit, a K that differs, no runs left to train on", async () => {
    const versions = await readdir(root);
    const long = { ...runs[0]!, id: "long", task: "x".repeat(5000) };
    await expect(trainMu(client, root, [long], root)).rejects.toThrow(/long\.steps\[0\]: its prompt takes \d+ tokens/);
    const k3 = {
      ...runs[0]!,
      steps: runs[0]!.steps.map((step) => ({ ...step, criteria: ["a", "b", "c"], scores: [0, 0, 0] })),
    };
    await expect(trainMu(client, root, [k3], root)).rejects.toThrow(/run-0\.steps\[0\]\.criteria: expected 2 criteria/);
    await expect(trainMu(client, root, runs.slice(0, 1), root, { validation: 0.9 })).rejects.toThrow(RlxarInputError);
    await expect(trainMu(client, root, [], root)).rejects.toThrow(/no runs to train on/);
    // Nothing was written by any of them.
    expect(await readdir(root)).toEqual(versions);
  });
});
