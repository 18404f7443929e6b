import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { mean } from "@rubric/core";
import { RunFileError, RunSettingsError } from "@rubric/core/runs";
import { GYM_FEATURE_NAMES, gymStepFeatures, gymTeacherAnnotation } from "@rubric/rlxar";
import { SidecarClient } from "@rubric/sidecar";
import { describe, expect, it } from "vitest";
import { ReproInputError } from "../errors.js";
import { arcoGymConfig } from "./config.js";
import { runArcoGym } from "./experiment.js";
import { muExamples } from "../arco/warmup.js";
import {
  criticWarmupEpisodes,
  GYM_MU_PROMPT,
  gymMuPrompt,
  gymPretrainTexts,
  muFit,
  teacherStepAdvantages,
} from "./mu.js";
import { arcoGymPlots } from "./plot.js";
import { GYM_RUNS_DIR, GymMethodRunSchema } from "./run-record.js";
import { ArcoGymTableSchema, arcoGymMarkdown, muWarmupKey, muWarmupOf } from "./table.js";

// A small run: one hop count, two seeds, 8 training tasks, two outcome epochs' budget.
const small = arcoGymConfig({
  hops: [3],
  seeds: 2,
  trainTasks: 8,
  evalTasks: 30,
  budget: 64,
  trueAdvantageRollouts: 2,
  creditProbeRollouts: 16,
});

describe("runArcoGym", () => {
  it("runs every method from one warm-up per seed and writes a checked table, the same for the same seeds", async () => {
    const events: string[] = [];
    const table = await runArcoGym(small, {
      onProgress: (e) => {
        if (e.type === "run") events.push(`${e.index}/${e.total} H${e.hops} s${e.seed} ${e.method}`);
      },
    });
    expect(ArcoGymTableSchema.parse(table)).toEqual(table);
    expect(table.sidecar).toBeUndefined(); // no μ, no sidecar
    expect(events).toEqual([
      "1/6 H3 s1 outcome",
      "2/6 H3 s1 teacherHindsight",
      "3/6 H3 s1 trueAdvantage",
      "4/6 H3 s2 outcome",
      "5/6 H3 s2 teacherHindsight",
      "6/6 H3 s2 trueAdvantage",
    ]);
    expect(table).toMatchObject({ kind: "arco-gym", simulation: true });
    // The teacher's credit is measured on the probe: the first 30 evaluation tasks' warm-up
    // rollouts, both seeds; its criteria are the grammar's, so every one is checked.
    expect(Object.keys(table.credit)).toEqual(["teacherHindsight"]);
    const credit = table.credit["teacherHindsight"]!;
    expect(credit.steps).toBeGreaterThanOrEqual(2 * 30);
    expect(credit.spearman).toBeGreaterThan(-1);
    expect(credit.criterionValidity).toBeGreaterThan(0.5);
    expect(table.creditPoints["teacherHindsight"]!["3"]!.length).toBe(credit.steps / 2);
    // Beside it, the reference: the true advantage drawn again, scored as a critic. Fresh draws
    // agree with the probe's estimate without repeating it; what perfect credit measures here.
    expect(credit.reference!.spearman).toBeGreaterThan(0.2);
    expect(credit.reference!.spearman).toBeLessThan(0.99);
    expect(credit.reference!.evidenceAuc).not.toBeNull();
    // And at the end of RL, on each seed's trained π's own rollouts of the 30 probe tasks.
    expect(credit.atEnd!.steps).toBeGreaterThanOrEqual(2 * 30);
    expect(credit.atEnd!.criterionValidity).toBeGreaterThan(0.5);
    expect(credit.atEnd!.spearman).not.toBe(credit.spearman);
    const share = table.methods.teacherHindsight!.shareOfControlGain;
    const gain = table.methods.trueAdvantage!.success.mean - table.methods.outcome!.success.mean;
    if (gain > 1e-9)
      expect(share).toBeCloseTo(
        (table.methods.teacherHindsight!.success.mean - table.methods.outcome!.success.mean) / gain,
        12,
      );
    else expect(share).toBeNull();
    // Curves: before RL, then after every epoch, up to the budget (outcome: 32 rollouts an
    // epoch of 8 tasks in groups of 4; the control: 8).
    const outcome = table.curves["outcome"]!["3"]!;
    const control = table.curves["trueAdvantage"]!["3"]!;
    expect(outcome.map((c) => c.map((p) => p.rollouts))).toEqual([
      [0, 32, 64],
      [0, 32, 64],
    ]);
    expect(control[0]!.map((p) => p.rollouts)).toEqual([0, 8, 16, 24, 32, 40, 48, 56, 64]);
    // Both methods start from the seed's warm-up: the same success before RL.
    expect(outcome.map((c) => c[0]!.success)).toEqual(control.map((c) => c[0]!.success));
    expect(table.warmup.map((w) => w.success)).toEqual(outcome.map((c) => c[0]!.success));
    // The table's numbers are the runs' own: the last curve point is the greedy success after the budget.
    const [row] = table.valueOfDenseCredit;
    expect(row!.hops).toBe(3);
    expect(row!.outcome.mean).toBeCloseTo((outcome[0]!.at(-1)!.success + outcome[1]!.at(-1)!.success) / 2, 12);
    expect(row!.trueAdvantage.mean).toBeCloseTo((control[0]!.at(-1)!.success + control[1]!.at(-1)!.success) / 2, 12);
    expect(row!.gap).toBeCloseTo(row!.trueAdvantage.mean - row!.outcome.mean, 12);
    expect(table.methods.trueAdvantage!.vsOutcome!.gap).toBeCloseTo(row!.gap, 12);
    expect(table.methods.outcome!.vsOutcome).toBeUndefined();
    const md = arcoGymMarkdown(table);
    expect(md).toContain("a simulation");
    expect(md).toContain("| 3 |");
    expect(md).toContain(
      `| ${credit.spearman!.toFixed(3)} (${credit.reference!.spearman!.toFixed(3)}) | ${credit.evidenceAuc!.toFixed(3)} (${credit.reference!.evidenceAuc!.toFixed(3)}) |`,
    );
    // Every row of the methods table has its five cells, and of the credit table its six.
    const rowsOf = (section: string) =>
      md
        .split(`## ${section}`)[1]!
        .split("\n## ")[0]!
        .split("\n")
        .filter((line) => line.startsWith("| Outcome") || line.startsWith("| Control"));
    expect(rowsOf("Methods")).toHaveLength(3);
    for (const row of rowsOf("Methods")) expect(row.split(" | ")).toHaveLength(5);
    expect(rowsOf("Credit on held-out rollouts")).toHaveLength(1);
    for (const row of rowsOf("Credit on held-out rollouts")) expect(row.split(" | ")).toHaveLength(6);
    const plots = await arcoGymPlots(table);
    expect(plots.map((p) => p.file)).toEqual(["success.svg", "curves.svg", "credit.svg"]);
    for (const plot of plots) expect(plot.svg).toContain("<svg");

    const again = await runArcoGym(small);
    expect({ ...again, timing: null }).toEqual({ ...table, timing: null });
  });

  it("keeps each finished run in out as it goes; a resume reads them back instead of training, and trains what is missing", async () => {
    const config = arcoGymConfig({ ...small, hops: [2], seeds: 1, evalTasks: 10, budget: 32 });
    const out = await mkdtemp(join(tmpdir(), "rubric-gym-resume-"));
    try {
      await expect(runArcoGym(config, { resume: true })).rejects.toThrow(/^out: a resume continues/u);
      const first = await runArcoGym(config, { out });
      const runsDir = join(out, GYM_RUNS_DIR);
      expect(readdirSync(runsDir).sort()).toEqual([
        "h2-s1-outcome.json",
        "h2-s1-teacherHindsight.json",
        "h2-s1-trueAdvantage.json",
      ]);
      // A run stopped before its last method finished: the resume trains that one alone, to the same table.
      rmSync(join(runsDir, "h2-s1-trueAdvantage.json"));
      const events: string[] = [];
      const resumed = await runArcoGym(config, {
        out,
        resume: true,
        onProgress: (e) => {
          if (e.type === "run") events.push(`${e.method}${e.kept ? " (kept)" : ""}`);
        },
      });
      expect(events).toEqual(["outcome (kept)", "teacherHindsight (kept)", "trueAdvantage"]);
      expect({ ...resumed, timing: null }).toEqual({ ...first, timing: null });
      // What a resume tables is what the kept file says, not a retraining.
      const outcomeFile = join(runsDir, "h2-s1-outcome.json");
      const kept = GymMethodRunSchema.parse(JSON.parse(readFileSync(outcomeFile, "utf8")));
      writeFileSync(outcomeFile, JSON.stringify({ ...kept, perTask: kept.perTask.map(() => 1) }));
      expect((await runArcoGym(config, { out, resume: true })).methods.outcome!.success.mean).toBe(1);
      // A kept file that is not a run is named, not retrained over; another configuration is refused.
      writeFileSync(outcomeFile, JSON.stringify({ perTask: [1] }));
      const malformed = runArcoGym(config, { out, resume: true });
      await expect(malformed).rejects.toBeInstanceOf(RunFileError);
      await expect(malformed).rejects.toThrow(`${outcomeFile}: `);
      await expect(
        runArcoGym({ ...config, rl: { ...config.rl, budget: 64 } }, { out, resume: true }),
      ).rejects.toBeInstanceOf(RunSettingsError);
      // A fresh start in the same directory begins again: the earlier runs are cleared, then its own kept.
      await runArcoGym({ ...config, methods: ["outcome"] }, { out });
      expect(readdirSync(runsDir)).toEqual(["h2-s1-outcome.json"]);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it("runs a subset of methods on held-out training-stream tasks (the budget tool's run)", async () => {
    const table = await runArcoGym(
      arcoGymConfig({ ...small, hops: [2], seeds: 1, evalTasks: 10, methods: ["outcome"], evaluationSplit: "train" }),
    );
    expect(Object.keys(table.methods)).toEqual(["outcome"]);
    expect(table.valueOfDenseCredit).toEqual([]);
    expect(table.credit).toEqual({});
    expect(table.methods.outcome!.shareOfControlGain).toBeUndefined();
  });
});

const GLOVE = fileURLToPath(new URL("../../../../../shared/models/glove-6b-100d", import.meta.url));
const STORIES = fileURLToPath(new URL("../../../../../shared/models/stories260K.gguf", import.meta.url));

describe("runArcoGym with the learned critics (μ in the sidecar)", () => {
  it("warms up one μ per H and objective from word vectors, runs it frozen, co-evolving and as a value, and measures each critic's credit", async () => {
    const config = arcoGymConfig({
      hops: [2],
      seeds: 1,
      trainTasks: 8,
      evalTasks: 8,
      budget: 32,
      trueAdvantageRollouts: 2,
      creditProbeRollouts: 4,
      methods: ["outcome", "frozenMu", "arco", "muValue"],
      mu: { dModel: 32, layers: 1, sftTasks: 4, sftReplicas: 2, fitTasks: 3, sftEpochs: 2, wordVectors: GLOVE },
    });
    await expect(runArcoGym(config)).rejects.toThrow(/^client: frozenMu, arco, muValue need μ/u);
    const client = await SidecarClient.start({ threads: 1 });
    const out = await mkdtemp(join(tmpdir(), "rubric-gym-mu-"));
    try {
      const events: string[] = [];
      const table = await runArcoGym(config, {
        client,
        out,
        onProgress: (e) => {
          if (e.type === "mu") events.push(`mu H${e.hops} ${e.epoch}/${e.of}`);
          if (e.type === "run") events.push(e.method);
        },
      });
      const warmUp = ["mu H2 0/2", "mu H2 1/2", "mu H2 2/2"];
      expect(events).toEqual([...warmUp, ...warmUp, "outcome", "frozenMu", "arco", "muValue"]);
      expect(ArcoGymTableSchema.parse(table)).toEqual(table);
      const [warm, value] = table.muWarmup!;
      expect(warm).toMatchObject({ hops: 2, episodes: 8, objective: "decomposition" });
      // The value μ saw the same episodes and examples, its targets each step's outcome.
      expect(value).toMatchObject({ hops: 2, episodes: 8, objective: "value", examples: warm!.examples });
      expect(warm!.embedded).toBeGreaterThan(0);
      expect(warm!.examples).toBeGreaterThan(0);
      expect(warm!.sftLoss).toHaveLength(2);
      // Each warm-up μ's fit is measured on every example of its own episodes and on 3 fresh tasks,
      // and its score head's part of the loss (CE + 10 × MSE) is kept per epoch beside the targets' variance.
      for (const m of table.muWarmup!) {
        expect(m.sftScores!.mse).toHaveLength(2);
        m.sftScores!.mse.forEach((mse, i) => {
          expect(mse).toBeGreaterThan(0);
          expect(10 * mse).toBeLessThan(m.sftLoss[i]!);
        });
        expect(m.sftScores!.targetVariance).toBeGreaterThan(0);
        expect(m.fit!.train.steps).toBe(m.examples);
        expect(m.fit!.heldOut!.steps).toBeGreaterThanOrEqual(3);
      }
      expect(arcoGymMarkdown(table)).toMatch(
        /\| 2 \| value \| generated \| 3 \| mean of prompt \+ criteria \(ARCO.s\) \| 8 \| \d+ \| \d+ \| [\d.]+ → [\d.]+ \| [\d.]+ → [\d.]+ \([\d.]+\) \| (-?[\d.]+|n\/a) \(\d+ steps\) \/ (-?[\d.]+|n\/a) \(\d+ steps\) \|/u,
      );
      // Both learned critics rated every probe step; the frozen one's criteria are the warm-up's.
      expect(Object.keys(table.credit)).toEqual(["frozenMu", "arco", "muValue"]);
      for (const name of ["frozenMu", "arco", "muValue"]) {
        expect(table.credit[name]!.steps).toBeGreaterThanOrEqual(8);
        expect(table.creditPoints[name]!["2"]!.length).toBe(table.credit[name]!.steps);
      }
      // The dense phase trains one rollout per task an epoch: 8 a point, to the budget of 32.
      expect(table.curves["arco"]!["2"]![0]!.map((p) => p.rollouts)).toEqual([0, 8, 16, 24, 32]);
      expect(table.methods.arco!.vsOutcome).toBeDefined();
      expect(arcoGymMarkdown(table)).toContain("μ's warm-up (one per H");
      expect(table.timing.byMethodMs.muWarmup).toBeGreaterThan(0);
      // The sidecar's torch and threads, on which μ's weights depend, are on record.
      expect(table.sidecar).toEqual({ torch: expect.stringMatching(/^\d+\.\d+/u), threads: 1 });
      expect(arcoGymMarkdown(table)).toContain("on 1 thread(s)");
      // A resume whose runs still to do need no μ tables each warm-up from its record, not a new warm-up.
      rmSync(join(out, GYM_RUNS_DIR, "h2-s1-outcome.json"));
      const again: string[] = [];
      const resumed = await runArcoGym(config, {
        client,
        out,
        resume: true,
        onProgress: (e) => {
          if (e.type === "mu") again.push("mu");
          if (e.type === "run") again.push(`${e.method}${e.kept ? " (kept)" : ""}`);
        },
      });
      expect(again).toEqual(["outcome", "frozenMu (kept)", "arco (kept)", "muValue (kept)"]);
      expect({ ...resumed, timing: null }).toEqual({ ...table, timing: null });
    } finally {
      await client.close();
      await rm(out, { recursive: true, force: true });
    }
  }, 300_000);

  it("runs ARCO's ablations, each from a warm-up of its own kind: PRM (K = 1, no criteria), fixed criteria, no prefix, K = 1 and 5; every μ reading the last position when asked", async () => {
    const config = arcoGymConfig({
      hops: [2],
      seeds: 1,
      trainTasks: 6,
      evalTasks: 6,
      budget: 24,
      trueAdvantageRollouts: 2,
      creditProbeRollouts: 4,
      methods: ["prm", "fixedCriteria", "noPrefix", "arcoK1", "arcoK5", "muAdvantage"],
      mu: {
        dModel: 16,
        layers: 1,
        sftTasks: 4,
        sftReplicas: 2,
        fitTasks: 0,
        sftEpochs: 1,
        wordVectors: null,
        pooling: "last",
      },
    });
    expect(config.methods.map((m) => muWarmupKey(muWarmupOf(m, 3)))).toEqual([
      "decomposition-prm-k1",
      "decomposition-fixed-k3",
      "decomposition-noPrefix-k3",
      "decomposition-generated-k1",
      "decomposition-generated-k5",
      "advantage-generated-k3",
    ]);
    const client = await SidecarClient.start({ threads: 1 });
    try {
      const table = await runArcoGym(config, { client });
      expect(ArcoGymTableSchema.parse(table)).toEqual(table);
      expect(table.muWarmup!.map((m) => [m.objective, m.variant, m.k])).toEqual([
        ["decomposition", "prm", 1],
        ["decomposition", "fixed", 3],
        ["decomposition", "noPrefix", 3],
        ["decomposition", "generated", 1],
        ["decomposition", "generated", 5],
        // The control told each step's true advantage: ARCO's examples, other targets.
        ["advantage", "generated", 3],
      ]);
      expect(table.muWarmup![5]!.examples).toBe(table.muWarmup![4]!.examples);
      // With fitTasks 0 the fit is measured on the warm-up episodes alone.
      for (const m of table.muWarmup!)
        expect(m.fit).toEqual({ train: { spearman: expect.anything(), steps: m.examples } });
      // The same teacher episodes; a PRM's examples have no criteria to skip, so none is fewer.
      for (const warm of table.muWarmup!) expect(warm.episodes).toBe(8);
      for (const name of config.methods) {
        expect(table.credit[name]!.steps).toBeGreaterThan(0);
        expect(table.methods[name]!.vsOutcome).toBeUndefined(); // no outcome run to pair with
      }
      // A PRM writes no criterion to check; fixed criteria are the grammar's, so the checkers read them.
      expect(table.credit["prm"]!.criterionValidity).toBeNull();
      expect(table.credit["fixedCriteria"]!.criterionValidity).not.toBeNull();
      expect(arcoGymMarkdown(table)).toContain("| 2 | decomposition | prm | 1 | the last position (ours) |");
      // Each warm-up records what its score head reads.
      expect(table.muWarmup!.map((m) => m.pooling)).toEqual(Array(6).fill("last"));
    } finally {
      await client.close();
    }
  }, 300_000);
});

describe("runArcoGym with the action last in μ's prompt (ours)", () => {
  it("warms μ up and scores with the instructions first and the action last, recorded in the table", async () => {
    const settings = (promptLayout: "arco" | "action-last") =>
      arcoGymConfig({
        hops: [2],
        seeds: 1,
        trainTasks: 2,
        evalTasks: 4,
        budget: 8,
        trueAdvantageRollouts: 2,
        creditProbeRollouts: 4,
        methods: ["frozenMu"],
        mu: {
          dModel: 16,
          layers: 1,
          sftTasks: 4,
          sftReplicas: 1,
          fitTasks: 0,
          sftEpochs: 1,
          maxCriteriaTokens: 16,
          wordVectors: null,
          pooling: "last",
          promptLayout,
        },
      });
    expect(gymMuPrompt(settings("arco"))).toEqual({ ...GYM_MU_PROMPT, layout: "arco" });
    expect(gymMuPrompt(settings("action-last"))).toEqual({ ...GYM_MU_PROMPT, layout: "action-last" });
    const client = await SidecarClient.start({ threads: 1 });
    try {
      const arco = await runArcoGym(settings("arco"), { client });
      const last = await runArcoGym(settings("action-last"), { client });
      expect(arco.muWarmup![0]!.promptLayout).toBe("arco");
      expect(last.muWarmup![0]!.promptLayout).toBe("action-last");
      expect(arcoGymMarkdown(last)).toContain("the last position (ours), the action last in the prompt (ours) |");
      // The same steps read in another order: another warm-up and other scores.
      expect(last.muWarmup![0]!.examples).toBe(arco.muWarmup![0]!.examples);
      expect(last.muWarmup![0]!.sftLoss).not.toEqual(arco.muWarmup![0]!.sftLoss);
      expect(last.creditPoints["frozenMu"]!["2"]).not.toEqual(arco.creditPoints["frozenMu"]!["2"]);
    } finally {
      await client.close();
    }
  }, 300_000);
});

describe("runArcoGym with μ on a pretrained llama (stories260K)", () => {
  it("warms μ up on the GGUF's weights and vocabulary, records the backbone, and says so in table.md", async () => {
    const config = arcoGymConfig({
      hops: [2],
      seeds: 1,
      trainTasks: 2,
      evalTasks: 3,
      budget: 8,
      trueAdvantageRollouts: 2,
      creditProbeRollouts: 4,
      methods: ["frozenMu"],
      mu: {
        backbone: STORIES,
        wordVectors: null,
        sftTasks: 2,
        sftReplicas: 1,
        fitTasks: 0,
        sftEpochs: 1,
        maxCriteriaTokens: 16, // an untrained μ writes to the limit: keep the test's generations short
      },
    });
    const client = await SidecarClient.start({ threads: 1 });
    try {
      const table = await runArcoGym(config, { client });
      expect(ArcoGymTableSchema.parse(table)).toEqual(table);
      const [warm] = table.muWarmup!;
      // stories260K's 5 layers of 64 with its 512-piece vocabulary, and the score head.
      expect(warm!.backbone).toEqual({ file: "stories260K.gguf", parameters: expect.any(Number) });
      expect(warm!.backbone!.parameters).toBeGreaterThan(260_000);
      expect(warm!.embedded).toBe(0); // no word vectors: the llama's own embeddings
      expect(table.credit["frozenMu"]!.steps).toBeGreaterThan(0);
      expect(arcoGymMarkdown(table)).toContain(
        "μ's backbone for H = 2 (decomposition, generated) is the pretrained llama `stories260K.gguf` (ours, not ARCO's Qwen3-4B)",
      );
    } finally {
      await client.close();
    }
  }, 300_000);
});

describe("runArcoGym with the feature critics (a labelled variant, no sidecar)", () => {
  it("fits one critic per feature set on μ's warm-up episodes, records its weights, and measures each critic's credit", async () => {
    const config = arcoGymConfig({
      hops: [2],
      seeds: 1,
      trainTasks: 8,
      evalTasks: 10,
      budget: 32,
      trueAdvantageRollouts: 2,
      creditProbeRollouts: 4,
      methods: ["outcome", "featureMu", "featureArco", "featureNoPrefix", "valueDifference"],
      mu: { sftTasks: 40, sftReplicas: 2 },
    });
    const table = await runArcoGym(config);
    expect(ArcoGymTableSchema.parse(table)).toEqual(table);
    const warmups = table.featureWarmup!;
    expect(warmups.map((w) => w.features)).toEqual(["prefix", "action", "state"]);
    for (const warm of warmups) {
      expect(warm).toMatchObject({ hops: 2, episodes: 80 });
      // Fitted to its episodes' outcomes: below the class-balanced loss of all-zero scores (½).
      expect(warm.loss).toBeLessThan(0.5);
    }
    // The policy's features (the prefix) fit Σ_t s_t = R closer than the action's alone.
    expect(warmups[0]!.loss).toBeLessThan(warmups[1]!.loss);
    expect(Object.keys(warmups[0]!.weights)).toContain("finish:chainComplete");
    expect(Object.keys(warmups[1]!.weights)).toEqual([
      "search",
      "search:full",
      "search:first-word",
      "search:last-word",
      "finish",
    ]);
    expect(Object.keys(table.credit)).toEqual(["featureMu", "featureArco", "featureNoPrefix", "valueDifference"]);
    expect(Object.keys(warmups[2]!.weights)).toContain("slack=0");
    for (const name of Object.keys(table.credit)) expect(table.credit[name]!.steps).toBeGreaterThanOrEqual(10);
    // A co-evolving critic trained on its batches, a frozen one did not: they rate the probe differently.
    expect(table.creditPoints["featureArco"]!["2"]).not.toEqual(table.creditPoints["featureMu"]!["2"]);
    expect(table.timing.byMethodMs.featureWarmup).toBeGreaterThan(0);
    const markdown = arcoGymMarkdown(table);
    expect(markdown).toContain("Feature μ without the prefix");
    // The fit's table: a header and one row per fit, every row with the header's six cells.
    const fits = markdown.split("\n").filter((line) => /^\| (H|\d) \| (features|the )/u.test(line));
    expect(fits).toHaveLength(1 + 3);
    for (const line of fits) expect(line.split("|")).toHaveLength(8);
  }, 120_000);
});

describe("teacherStepAdvantages", () => {
  it("labels every step of μ's warm-up episodes with its true advantage under the teacher: a whole-name search above a one-word one", async () => {
    const config = arcoGymConfig({ hops: [2], trueAdvantageRollouts: 4, mu: { sftTasks: 48, sftReplicas: 1 } });
    const episodes = await criticWarmupEpisodes(2, config);
    const advantages = await teacherStepAdvantages(2, config, episodes);
    expect(advantages.size).toBe(episodes.length);
    const full = GYM_FEATURE_NAMES.indexOf("search:full");
    const oneWord = GYM_FEATURE_NAMES.indexOf("search:first-word");
    const byKind = { full: [] as number[], oneWord: [] as number[] };
    for (const episode of episodes) {
      const row = advantages.get(`${episode.taskId}#${episode.replica}`)!;
      expect(row).toHaveLength(episode.steps.length);
      for (const a of row) expect(Math.abs(a)).toBeLessThanOrEqual(1);
      // The first search: the teacher names the whole first entity one time in ten.
      const first = gymStepFeatures(episode)[0]!;
      if (first[full] === 1) byKind.full.push(row[0]!);
      if (first[oneWord] === 1) byKind.oneWord.push(row[0]!);
    }
    expect(byKind.full.length).toBeGreaterThan(0);
    expect(byKind.oneWord.length).toBeGreaterThan(byKind.full.length);
    expect(mean(byKind.full)).toBeGreaterThan(mean(byKind.oneWord) + 0.05);
    // Seeded: the same labels again.
    expect(await teacherStepAdvantages(2, config, episodes)).toEqual(advantages);
  });
});

describe("muFit", () => {
  it("ranks μ's s_t against the mean of each example's targets, and names an example without a rating", async () => {
    const config = arcoGymConfig({ hops: [2], mu: { sftTasks: 12, sftReplicas: 1 } });
    const episodes = await criticWarmupEpisodes(2, config);
    const examples = muExamples("generated", 3, episodes, (e) => gymTeacherAnnotation(e, 3), GYM_MU_PROMPT);
    const target = new Map(examples.map((x) => [`${x.trajectory}/${x.step}`, mean(x.scores)]));
    const rate = (sign: number) =>
      episodes.map((episode) =>
        episode.steps.map((_, t) => {
          const s = sign * (target.get(`${episode.taskId}#${episode.replica}/${t}`) ?? 0);
          return { criteria: [], scores: [s], s };
        }),
      );
    expect(muFit(episodes, rate(1), examples)).toEqual({ spearman: expect.closeTo(1, 9), steps: examples.length });
    expect(muFit(episodes, rate(-1), examples).spearman).toBeCloseTo(-1, 9);
    const flat = episodes.map((episode) => episode.steps.map(() => ({ criteria: [], scores: [0.5], s: 0.5 })));
    expect(muFit(episodes, flat, examples).spearman).toBeNull();
    const missing = rate(1).map((row, e) => (e === 0 ? row.slice(0, 0) : row));
    expect(() => muFit(episodes, missing, examples)).toThrow(/^examples\[0\]: step 0 of .+#0 has no rating/u);
  });
});

describe("gymPretrainTexts", () => {
  it("is the text of tasks no warm-up reads: each question, then its pool's paragraphs as observations show them", async () => {
    const config = arcoGymConfig({ hops: [2], mu: { sftTasks: 6, pretrainTasks: 5 } });
    const texts = gymPretrainTexts(2, config);
    expect(texts).toHaveLength(5);
    const warmup = new Set((await criticWarmupEpisodes(2, config)).map((episode) => episode.task));
    // The warm-up's tasks are questions too, so that none is among the pretraining texts means something.
    expect(warmup.size).toBe(6);
    for (const question of warmup) expect(question).toMatch(/\?$/u);
    for (const text of texts) {
      const [question, ...paragraphs] = text.split("\n");
      expect(question).toMatch(/\?$/u);
      expect(warmup.has(question!)).toBe(false);
      expect(paragraphs.length).toBeGreaterThanOrEqual(10);
      for (const paragraph of paragraphs) expect(paragraph).toMatch(/^[^:]+: \S/u);
    }
    expect(gymPretrainTexts(2, arcoGymConfig({ hops: [2] }))).toEqual([]);
  });
});

describe("arcoGymConfig", () => {
  it("refuses settings the run cannot honour, naming them", () => {
    const bad: [Parameters<typeof arcoGymConfig>[0], RegExp][] = [
      [{ budget: 100 }, /^budget: expected a multiple of 128 rollouts/u],
      [{ hops: [2, 2] }, /^hops: lists a hop count twice/u],
      [{ hops: [5] }, /^hops\[0\]: expected an integer in \[1, 4\]/u],
      [{ hops: [] }, /^hops: expected at least one/u],
      [{ trainTasks: 0 }, /^trainTasks: expected an integer ≥ 1/u],
      [{ learningRate: 0 }, /^learningRate: expected a number > 0/u],
      [{ methods: ["ppo" as "outcome"] }, /^methods\[0\]: unknown method "ppo"/u],
      [{ mu: { sftEpochs: 0 } }, /^mu\.sftEpochs: expected an integer ≥ 1/u],
      [{ mu: { pretrainTasks: -1 } }, /^mu\.pretrainTasks: expected an integer ≥ 0/u],
      [{ mu: { pretrainEpochs: 0 } }, /^mu\.pretrainEpochs: expected an integer ≥ 1/u],
      [{ mu: { backbone: STORIES } }, /^mu\.wordVectors: a llama backbone has its own token embeddings/u],
    ];
    for (const [options, message] of bad) {
      expect(() => arcoGymConfig(options)).toThrow(ReproInputError);
      expect(() => arcoGymConfig(options)).toThrow(message);
    }
  });

  it("has the documented defaults: the full run, and the quick one", () => {
    expect(arcoGymConfig()).toMatchObject({ hops: [2, 3, 4], evalTasks: 200, rl: { budget: 512, learningRate: 0.1 } });
    expect(arcoGymConfig().seeds).toHaveLength(16);
    // μ's methods are asked for by name: the default compares the ones without the sidecar.
    expect(arcoGymConfig().methods).toEqual(["outcome", "teacherHindsight", "trueAdvantage"]);
    expect(arcoGymConfig().mu).toMatchObject({
      k: 3,
      dModel: 64,
      sftTasks: 192,
      sftEpochs: 6,
      wordVectors: "../shared/models/glove-6b-100d",
      pretrainTasks: 0, // ARCO's: no language-model pretraining of ours
    });
    expect(arcoGymConfig().mu.backbone).toBeUndefined(); // the small μ from scratch
    // A llama backbone's 512 pieces spend more tokens on the gym's prompts: room for them.
    expect(arcoGymConfig().mu.maxSequence).toBe(768);
    expect(arcoGymConfig({ mu: { backbone: STORIES, wordVectors: null } }).mu.maxSequence).toBe(1536);
    expect(arcoGymConfig({ quick: true })).toMatchObject({ hops: [2, 4], evalTasks: 100 });
    expect(arcoGymConfig({ quick: true }).seeds).toHaveLength(6);
  });
});
