import { copyFile, cp, mkdir, mkdtemp, readdir, readFile, rename, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SidecarClient } from "@rubric/sidecar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelClosedError, ModelCorruptError } from "../errors.js";
import { stepPrompt } from "../step/prompt.js";
import { type Step, stepsOf } from "../step/step.js";
import { byteBpeTokenizer, trainByteBpe } from "../tokenizer/byte-bpe.js";
import { criteriaIds, promptText } from "./sequence.js";
import { type ModelEvent, RubricModel } from "./rubric-model.js";

const TIMEOUT_MS = 240_000; // a guard for a busy 2-core machine, not a measurement

const trajectory = {
  id: "q1",
  task: "Which city hosts the museum founded by Ada Park?",
  outcome: 1,
  turns: [
    {
      action: "Search[museum founded by Ada Park]",
      observation: "The Vale Museum was founded by Ada Park.",
      budgetLeft: 3,
    },
    { action: "Search[Vale Museum location]", observation: "The Vale Museum stands in Lyon.", budgetLeft: 2 },
    { action: "Finish[Lyon]", observation: "Episode finished.", budgetLeft: 1 },
  ],
};
const steps: Step[] = stepsOf(trajectory);
const CRITERIA = [
  ["Names the founder", "Targets the museum", "Avoids repeats"],
  ["Finds the city", "Builds on the museum", "Stays specific"],
  ["Answers the question", "Uses the evidence", "Stops in time"],
];

describe("RubricModel", () => {
  let client: SidecarClient;
  let root: string;
  const tokenizer = byteBpeTokenizer(
    trainByteBpe(
      [...steps.map((s) => promptText(stepPrompt(s))), ...CRITERIA.map((c) => JSON.stringify({ criteria: c }))],
      400,
    ),
  );
  const tokenizerFiles = { kind: "byte-bpe", files: { "tokenizer.json": JSON.stringify(tokenizer.toFile()) } };
  const exportNext = () =>
    client.request("mu.export", { dir: root, tokenizer: tokenizerFiles, max_criteria_tokens: 48 });
  const sft = (steps_: number) =>
    (async () => {
      for (let i = 0; i < steps_; i++)
        await client.request("mu.sft", {
          examples: steps.map((step, t) => ({
            prompt: [1, ...tokenizer.encode(promptText(stepPrompt(step)))],
            criteria: criteriaIds(tokenizer, CRITERIA[t]!, true),
            scores: [0.4, -0.2 + 0.1 * t, 0.3 * t - 0.2],
          })),
          learning_rate: 3e-3,
        });
    })();

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "rubric-model-"));
    client = await SidecarClient.start({ threads: 1 });
    await client.request("mu.init", {
      model: {
        kind: "tiny",
        vocab_size: tokenizer.vocabularySize,
        d_model: 32,
        n_heads: 4,
        n_layers: 2,
        max_seq_len: 512,
      },
      seed: 3,
    });
    // Trained until it writes its targets, so that generation and parsing meet real criteria.
    await sft(60);
    await exportNext();
  }, TIMEOUT_MS);
  afterAll(async () => {
    await client?.close();
    await rm(root, { recursive: true, force: true });
  }, TIMEOUT_MS);

  it(
    "writes the criteria it learnt, exactly K, and scores them in [−1, 1] with s the mean",
    async () => {
      const model = await RubricModel.load(root, { threads: 1 });
      expect(model.version).toBe(1);
      const rated = await model.rateSteps(steps, { maxNewTokens: 48 });
      expect(rated.map((r) => r.criteria)).toEqual(CRITERIA);
      for (const r of rated) {
        expect(r.adjusted).toBeUndefined();
        expect(r.finished).toBe(true);
        expect(r.scores).toHaveLength(3);
        for (const x of r.scores) expect(Math.abs(x)).toBeLessThanOrEqual(1);
        expect(r.s).toBeCloseTo(r.scores.reduce((a, b) => a + b) / 3, 12);
      }
      // Scoring the printed criteria gives the same numbers as the combined call.
      const again = await model.scoreSteps(steps, CRITERIA);
      again.forEach((s, i) => expect(s.scores).toEqual(rated[i]!.scores));
      // A step's result does not depend on the batch it ran in.
      const [alone] = await model.rateSteps([steps[1]!], { maxNewTokens: 48 });
      expect(alone!.criteria).toEqual(rated[1]!.criteria);
      for (let k = 0; k < 3; k++) expect(alone!.scores[k]).toBeCloseTo(rated[1]!.scores[k]!, 5);
      await model.close();
      await expect(model.scoreSteps(steps, CRITERIA)).rejects.toBeInstanceOf(ModelClosedError);
    },
    TIMEOUT_MS,
  );

  it(
    "flags criteria it had to pad, cut or could not parse, and still scores the step",
    async () => {
      const model = await RubricModel.load(root, { threads: 1 });
      // Four new tokens cannot hold a criteria object.
      const [cut] = await model.rateSteps([steps[0]!], { maxNewTokens: 4 });
      expect(cut!.adjusted).toBe("unparsed");
      expect(cut!.finished).toBe(false);
      expect(cut!.criteria).toEqual(["", "", ""]);
      expect(cut!.scores).toHaveLength(3);
      await model.close();
    },
    TIMEOUT_MS,
  );

  it(
    "hot reload: calls in flight finish on the old export, later calls run on the new one, nothing mixes",
    async () => {
      const model = await RubricModel.load(root, { threads: 1 });
      const before = model.version;
      const expectedOld = await model.scoreTrajectory(steps, { maxNewTokens: 48 });
      await sft(3); // new weights, so the two exports' numbers differ
      await exportNext();
      const inFlight = Array.from({ length: 6 }, () => model.scoreTrajectory(steps, { maxNewTokens: 48 }));
      const reloaded = await model.reload();
      expect(reloaded).toEqual({ changed: true, version: before + 1 });
      const after = Array.from({ length: 3 }, () => model.scoreTrajectory(steps, { maxNewTokens: 48 }));
      const fresh = await RubricModel.load(join(root, `v${String(before + 1).padStart(4, "0")}`), { threads: 1 });
      const expectedNew = await fresh.scoreTrajectory(steps, { maxNewTokens: 48 });
      await fresh.close();
      expect(expectedNew.total).not.toBeCloseTo(expectedOld.total, 6);
      for (const result of await Promise.all(inFlight)) {
        expect(result.modelVersion).toBe(before);
        expect(result.total).toBeCloseTo(expectedOld.total, 6);
        expect(result.steps.map((s) => s.scores)).toEqual(expectedOld.steps.map((s) => s.scores));
      }
      for (const result of await Promise.all(after)) {
        expect(result.modelVersion).toBe(before + 1);
        expect(result.steps.map((s) => s.scores)).toEqual(expectedNew.steps.map((s) => s.scores));
      }
      expect(await model.reload()).toEqual({ changed: false, version: before + 1 });
      await model.close();
    },
    TIMEOUT_MS,
  );

  it(
    "refuses a damaged or partial newer export and keeps serving the old one",
    async () => {
      const model = await RubricModel.load(root, { threads: 1 });
      const serving = model.version;
      const good = await model.scoreSteps(steps, CRITERIA);
      const source = join(root, `v${String(serving).padStart(4, "0")}`);
      const next = (n: number) => join(root, `v${String(serving + n).padStart(4, "0")}`);
      const renumber = async (dir: string, version: number) => {
        const manifest = JSON.parse(await readFile(join(dir, "manifest.json"), "utf8"));
        await writeFile(join(dir, "manifest.json"), JSON.stringify({ ...manifest, exportVersion: version }));
      };

      await cp(source, next(1), { recursive: true });
      await renumber(next(1), serving + 1);
      await truncate(join(next(1), "score.onnx"), 100); // a half-copied graph
      const truncated = await model.reload().catch((e: unknown) => e);
      expect(truncated).toBeInstanceOf(ModelCorruptError);
      expect((truncated as ModelCorruptError).file).toBe("score.onnx");
      expect(model.version).toBe(serving);
      expect((await model.scoreSteps(steps, CRITERIA)).map((s) => s.scores)).toEqual(good.map((s) => s.scores));

      await rm(next(1), { recursive: true });
      await cp(source, next(1), { recursive: true });
      await rm(join(next(1), "manifest.json")); // a partial export: no manifest yet
      await expect(model.reload()).rejects.toThrow(/manifest\.json: cannot read \(no such file\)/);

      await rm(next(1), { recursive: true });
      await cp(source, next(1), { recursive: true }); // a copy that still says it is the old version
      await expect(model.reload()).rejects.toThrow(/exportVersion \d+ is not the directory's version/);
      expect(model.version).toBe(serving);
      await rm(next(1), { recursive: true });
      await model.close();
    },
    TIMEOUT_MS,
  );

  /** The root served with a watch, and every event it reports. */
  const watching = async () => {
    const events: ModelEvent[] = [];
    const model = await RubricModel.load(root, {
      threads: 1,
      watch: true,
      watchDebounceMs: 50,
      onEvent: (event) => events.push(event),
    });
    return { model, events };
  };
  /** Waits (30 s at most) until the model serves a version after `from`. */
  const servingAfter = async (model: RubricModel, from: number) => {
    for (let waited = 0; model.version === from && waited < 30_000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));
  };

  it(
    "watching the root swaps in a new export as it appears",
    async () => {
      const { model, events } = await watching();
      const from = model.version;
      await exportNext();
      await servingAfter(model, from);
      expect(model.version).toBe(from + 1);
      expect(events).toMatchObject([{ type: "reloaded", from, to: from + 1 }]);
      await model.close();
    },
    TIMEOUT_MS,
  );

  it(
    "watching the root loads an export copied in file by file once its last file lands (issue 29 item 13)",
    async () => {
      const { model, events } = await watching();
      const from = model.version;
      // Made beside the root, then copied in one file at a time, the manifest first, each after
      // more than the quiet time: every try before the last file sees a partial export.
      const staging = await mkdtemp(join(tmpdir(), "rubric-model-staging-"));
      await exportNext();
      const made = join(root, `v${String(from + 1).padStart(4, "0")}`);
      await rename(made, join(staging, "export"));
      await mkdir(made);
      const files = (await readdir(join(staging, "export"))).sort((a, b) =>
        a === "manifest.json" ? -1 : b === "manifest.json" ? 1 : a.localeCompare(b),
      );
      for (const file of files) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        await copyFile(join(staging, "export", file), join(made, file));
      }
      await servingAfter(model, from);
      expect(model.version).toBe(from + 1);
      expect(events.at(-1)).toMatchObject({ type: "reloaded", from, to: from + 1 });
      expect(events.filter((e) => e.type === "reload-failed").length).toBeGreaterThan(0); // it did try the partial export
      await model.close();
      await rm(staging, { recursive: true });
    },
    TIMEOUT_MS,
  );
});
