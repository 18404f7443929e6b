import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RunSettingsError } from "@rubric/core/runs";
import { SidecarClient } from "@rubric/sidecar";
import { readModel } from "@rubric/arco-heads";
import {
  evaluateHotpotQa,
  goldTeacher,
  hotpotQa,
  loadHotpotQa,
  readHotpotPredictions,
  readHotpotQa,
  rollout,
  type TrainerLogLine,
} from "@rubric/rlxar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ArcoConfig, arcoConfig, splitTrainingQuestions } from "./config.js";
import { arcoQuestions, runArco } from "./experiment.js";
import { hotpotContrasts } from "./method.js";
import { warmUpMu } from "./warmup.js";
import { ARCO_METHOD_LABELS, type ArcoTable, ArcoTableSchema, arcoMarkdown } from "./table.js";

/** The whole reproduction on a handful of real HotpotQA questions: the real sidecar and onnxruntime-node. */
const TIMEOUT_MS = 600_000; // a guard for a busy 2-core machine, not a measurement
const HOTPOT = `${process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../shared/", import.meta.url))}/data/hotpotqa`;

const config = arcoConfig({
  quick: true,
  trainPath: `${HOTPOT}/train.jsonl`,
  evalPath: `${HOTPOT}/dev.jsonl`,
  trainQuestions: 8,
  evalQuestions: 6,
  methods: ["outcome", "frozenMu", "arco", "teacherMu"],
  kSweep: [],
  teacher: { rollouts: 2, noise: 0.25 },
  policySft: { epochs: 1, learningRate: 0.05, batchSize: 64 },
  mu: {
    dModel: 16,
    heads: 2,
    layers: 1,
    maxSequence: 1024,
    vocabularySize: 400,
    maxCriteriaTokens: 24,
    maxObservationChars: 120,
    sftEpochs: 1,
    sftExamples: 16,
    sftLearningRate: 3e-3,
    sftHeadLearningRate: 1e-2,
    learningRate: 1e-4,
    headLearningRate: 1e-3,
    beta: 0.05,
  },
  // Sparse: 4 questions × 4 rollouts per batch (2 batches); dense: the 8 questions once (1 batch).
  trainer: { sparseEpochs: 1, denseEpochs: 1, rolloutsPerBatch: 16, groupSize: 4 },
});

let out: string;
let client: SidecarClient;
let table: ArcoTable;
const progress: string[] = [];
const log = (method: string): TrainerLogLine[] =>
  readFileSync(join(out, "seed-1", method, "log.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as TrainerLogLine);
const batches = (method: string) =>
  log(method).filter((line): line is TrainerLogLine & { type: "batch" } => line.type === "batch");

beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), "rubric-arco-repro-"));
  client = await SidecarClient.start({ threads: 1 });
  table = await runArco(config, {
    out,
    client,
    onProgress: (p) => {
      if (p.type === "stage") progress.push(p.stage);
    },
  });
}, TIMEOUT_MS);
afterAll(async () => {
  await client?.close();
  await rm(out, { recursive: true, force: true });
}, TIMEOUT_MS);

describe("runArco on real HotpotQA questions", () => {
  it("writes a table that validates, its Markdown and curves, and each method's log and μ's traces", () => {
    // EM by what the gold answer is: the kinds count the evaluation questions, and each method's
    // EM is their count-weighted mean (one seed).
    const kinds = table.answerKinds!;
    expect(kinds.yesNo + kinds.named + kinds.readOut).toBe(6);
    for (const result of Object.values(table.methods)) {
      const weighted =
        (["yesNo", "named", "readOut"] as const).reduce(
          (sum, kind) => sum + kinds[kind] * (result.emByAnswerKind![kind] ?? 0),
          0,
        ) / 6;
      expect(weighted).toBeCloseTo(result.em.mean, 12);
    }
    expect(arcoMarkdown(table)).toContain("EM in % by what the gold answer is");
    expect(ArcoTableSchema.parse(JSON.parse(readFileSync(join(out, "table.json"), "utf8")))).toEqual(
      JSON.parse(JSON.stringify(table)),
    );
    expect(Object.keys(table.methods)).toEqual(["outcome", "frozenMu", "arco", "teacherMu"]);
    for (const method of ["outcome", "frozenMu", "arco", "teacherMu"]) {
      expect(existsSync(join(out, "seed-1", method, "log.jsonl"))).toBe(true);
    }
    const traces = readFileSync(join(out, "seed-1", "arco", "eval-traces.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(traces.length).toBe((table.diagnostics["arco"]![0] as { steps: number }).steps);
    expect(JSON.parse(traces[0]!)).toMatchObject({ criteria: expect.any(Array), scores: expect.any(Array) });
    expect(readFileSync(join(out, "curves.svg"), "utf8")).toMatch(/^<svg[\s\S]*<\/svg>\n?$/);
    const markdown = readFileSync(join(out, "table.md"), "utf8");
    expect(markdown).toBe(arcoMarkdown(table));
    for (const method of ["outcome", "frozenMu", "arco", "teacherMu"] as const) {
      expect(markdown).toContain(ARCO_METHOD_LABELS[method]);
    }
    expect(markdown).toContain("| 42.8 |");
    expect(progress.slice(0, 2)).toEqual(["teacher rollouts", "π SFT"]);
  });

  it("starts every method from the same SFT π, on the same questions", () => {
    const before = Object.values(table.curves).map((runs) => runs[0]![0]);
    expect(before.every((point) => point!.epoch === 0)).toBe(true);
    expect(new Set(before.map((point) => JSON.stringify(point))).size).toBe(1);
    expect(table.config).toMatchObject({ trainQuestions: 8, evalQuestions: 6 });
  });

  it("runs each method's phases and critic as the method says", () => {
    // Outcome-only: sparse all the way, no critic.
    expect(batches("outcome").map((b) => b.phase)).toEqual(["sparse", "sparse", "sparse", "sparse"]);
    expect(batches("outcome").every((b) => b.muVersion === undefined && b.mu === undefined)).toBe(true);
    // ARCO: sparse then dense; μ updated, exported and reloaded after every batch.
    const arco = batches("arco");
    expect(arco.map((b) => b.phase)).toEqual(["sparse", "sparse", "dense"]);
    expect(arco.map((b) => b.muVersion)).toEqual([2, 3, 4]);
    expect(arco.every((b) => typeof b.mu?.["loss"] === "number")).toBe(true);
    // Frozen μ: the same phases, μ never updated.
    const frozen = batches("frozenMu");
    expect(frozen.map((b) => b.phase)).toEqual(["sparse", "sparse", "dense"]);
    expect(frozen.every((b) => b.muVersion === 1 && b.mu === undefined)).toBe(true);
    // The teacher control: in the dense phase its step scores sum to each episode's outcome.
    const teacher = batches("teacherMu").filter((b) => b.phase === "dense");
    expect(teacher).toHaveLength(1);
    expect(teacher[0]!.meanStepSum).toBeCloseTo(teacher[0]!.meanReward, 9);
  });

  it("pairs each method with outcome-only RL question by question", () => {
    const outcome = table.methods.outcome!;
    for (const method of ["frozenMu", "arco", "teacherMu"] as const) {
      const result = table.methods[method]!;
      const versus = result.vsOutcome!;
      // One seed: (wins − losses) / questions is exactly the EM difference.
      expect((versus.emWins - versus.emLosses) / 6).toBeCloseTo(result.em.mean - outcome.em.mean, 12);
      expect(versus.emP).toBeGreaterThan(0);
      expect(versus.emP).toBeLessThanOrEqual(1);
    }
    expect(outcome.vsOutcome).toBeUndefined();
  });

  it("diagnoses μ on the dev rollouts: evidence and outcome AUC, contrasts, criteria samples", () => {
    const [diagnostics] = table.diagnostics["arco"] as [Record<string, unknown>];
    expect(diagnostics).toMatchObject({
      evidence: expect.objectContaining({ positives: expect.any(Number), negatives: expect.any(Number) }),
      contrast: expect.objectContaining({ pairs: expect.any(Number) }),
      steps: expect.any(Number),
    });
    expect(table.timing.rollouts).toBeGreaterThan(0);
    // The sidecar's torch and threads, on which μ's weights depend, are on record.
    expect(table.sidecar).toEqual({ torch: expect.stringMatching(/^\d+\.\d+/u), threads: 1 });
    expect(arcoMarkdown(table)).toContain("on 1 thread(s)");
    expect(Object.values(table.timing.shares).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
  });
});

describe("runArco's predictions", () => {
  it("writes the official predictions format and the evaluated questions, which rubric eval's scorer agrees with", () => {
    const questions = readHotpotQa(readFileSync(join(out, "eval-questions.jsonl"), "utf8"), "eval-questions.jsonl");
    expect(questions).toHaveLength(6);
    for (const method of ["outcome", "arco", "teacherMu"] as const) {
      const path = join(out, "seed-1", method, "predictions.json");
      const predictions = readHotpotPredictions(readFileSync(path, "utf8"), path);
      const scored = evaluateHotpotQa(questions, predictions);
      expect(scored.missing).toEqual([]);
      expect(scored.em).toBeCloseTo(table.methods[method]!.em.mean, 12);
      expect(scored.f1).toBeCloseTo(table.methods[method]!.f1.mean, 12);
    }
  });
});

describe("runArco --resume", () => {
  it(
    "a run stopped mid-method resumes to the uninterrupted run's results; a finished method is kept; other settings are refused",
    async () => {
      const resumedOut = await mkdtemp(join(tmpdir(), "rubric-arco-resume-"));
      const only = { ...config, methods: ["outcome", "arco"] as typeof config.methods };
      const power = new Error("power cut");
      await expect(
        runArco(only, {
          out: resumedOut,
          client,
          onProgress: (p) => {
            if (p.type === "trainer" && p.method === "arco" && p.event.type === "batch" && p.event.done === 2)
              throw power;
          },
        }),
      ).rejects.toBe(power);
      expect(existsSync(join(resumedOut, "seed-1", "outcome", "result.json"))).toBe(true);
      expect(existsSync(join(resumedOut, "seed-1", "arco", "result.json"))).toBe(false);
      // A resume with another configuration would mix two experiments: refused before any work.
      await expect(
        runArco({ ...only, trainQuestions: 7 }, { out: resumedOut, client, resume: true }),
      ).rejects.toBeInstanceOf(RunSettingsError);

      const stages: string[] = [];
      const resumed = await runArco(only, {
        out: resumedOut,
        client,
        resume: true,
        onProgress: (p) => {
          if (p.type === "stage") stages.push(p.stage);
          if (p.type === "trainer" && p.event.type === "resumed")
            stages.push(`resumed ${p.method} at ${p.event.batches}`);
        },
      });
      expect(stages).toContain("kept outcome (finished)");
      expect(stages).toContain("resumed arco at 2");
      for (const method of ["outcome", "arco"] as const) {
        expect(resumed.methods[method]!.em).toEqual(table.methods[method]!.em);
        expect(resumed.methods[method]!.f1).toEqual(table.methods[method]!.f1);
        expect(resumed.curves[method]).toEqual(table.curves[method]);
      }
      const strip = (lines: TrainerLogLine[]) =>
        lines.map((line) => {
          if (line.type === "eval") return line;
          const { ms: _ms, mu, ...rest } = line;
          const { compute_ms: _compute, ...muRest } = (mu ?? {}) as Record<string, unknown>;
          return { ...rest, mu: muRest };
        });
      const resumedLog = readFileSync(join(resumedOut, "seed-1", "arco", "log.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as TrainerLogLine);
      expect(strip(resumedLog)).toEqual(strip(log("arco")));
      // Finished: μ's exports kept for the resume are gone, the result stays.
      expect(existsSync(join(resumedOut, "seed-1", "arco", "mu"))).toBe(false);
      await rm(resumedOut, { recursive: true, force: true });
    },
    TIMEOUT_MS,
  );
});

describe("hotpotContrasts", () => {
  it("pairs a gold query with a distractor's under the same prefix, twice per question", () => {
    const questions = readHotpotQa(readFileSync(`${HOTPOT}/dev.jsonl`, "utf8"), "dev.jsonl", { first: 5 });
    const pairs = hotpotContrasts(questions, 1);
    expect(pairs).toHaveLength(10);
    for (const [i, pair] of pairs.entries()) {
      const question = questions[Math.floor(i / 2)]!;
      expect(pair.better.history).toEqual(pair.worse.history);
      expect(question.supportingTitles).toContain(pair.better.action.slice("Search[".length, -1));
      expect(question.supportingTitles).not.toContain(pair.worse.action.slice("Search[".length, -1));
    }
    expect(hotpotContrasts(questions, 1)).toEqual(pairs);
  });
});

describe("warmUpMu", () => {
  it(
    "gives μ's score head the configured pooling (ours: the last position), ARCO's mean when none is set",
    async () => {
      const questions = loadHotpotQa(config.trainPath).slice(0, 2);
      const teacherEpisodes = await rollout(hotpotQa({ indexTitles: true }), questions, goldTeacher(questions), {
        temperature: 1,
        seed: "warm-up pooling",
      });
      const pooling = async (mu: ArcoConfig["mu"], name: string) => {
        const warm = await warmUpMu(client, join(out, "pooling", name), "generated", 3, {
          config: { ...config, mu: { ...mu, sftExamples: 4 } },
          seed: 1,
          teacherEpisodes,
          promptOptions: { maxObservationChars: config.mu.maxObservationChars },
        });
        return (await readModel(warm.directory)).manifest.pooling;
      };
      expect(await pooling({ ...config.mu, pooling: "last" }, "last")).toBe("last");
      expect(await pooling(config.mu, "default")).toBe("prompt+criteria");
    },
    TIMEOUT_MS,
  );
});

describe("arcoQuestions", () => {
  const paths = { trainPath: `${HOTPOT}/train.jsonl`, evalPath: `${HOTPOT}/dev.jsonl` };

  it("evaluates on the dev file by default, and on the 69 held-out training questions with evalSplit tune", () => {
    const dev = arcoQuestions(arcoConfig(paths));
    expect(dev.evalPath).toBe(paths.evalPath);
    expect(dev.evaluation).toHaveLength(400);
    const tune = arcoQuestions(arcoConfig({ ...paths, evalSplit: "tune" }));
    expect(tune.evalPath).toBe(paths.trainPath);
    const held = splitTrainingQuestions(loadHotpotQa(paths.trainPath)).tune.map((q) => q.id);
    expect(tune.evaluation.map((q) => q.id)).toEqual(held);
    // Never a question it trains on, whatever the sample sizes.
    const small = arcoQuestions(arcoConfig({ ...paths, evalSplit: "tune", trainQuestions: 48, evalQuestions: 20 }));
    expect(small.evaluation).toHaveLength(20);
    const trained = new Set(tune.train.map((q) => q.id));
    expect(small.evaluation.filter((q) => trained.has(q.id))).toEqual([]);
    expect(small.evaluation.every((q) => held.includes(q.id))).toBe(true);
  });
});
