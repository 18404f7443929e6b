import { fileURLToPath } from "node:url";
import { createRng, reweight, type FlatRubric } from "@rubric/core";
import { type GymTask, gymTask, loadGdpval, simulatedStakeholder, simulatedWorker } from "@rubric/autointeract";
import { createVerifierRegistry, llmJudge } from "@rubric/verifiers";
import { beforeAll, describe, expect, it } from "vitest";
import { GuidanceInputError, GuidanceScoringError } from "../errors.js";
import { beamSearch, bestOfK, importanceResample, resampleIndex, scoreCandidates, splitSegments } from "./guidance.js";

const GDPVAL = `${process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../shared/", import.meta.url))}/data/gdpval`;
const registry = createVerifierRegistry({ python: false, js: false });
let tasks: GymTask[];
beforeAll(async () => {
  tasks = (await loadGdpval(GDPVAL)).eval.slice(0, 6).map((e) => gymTask(e.task));
});

describe("test-time guidance in the gym", () => {
  it("best-of-K keeps the candidate with the highest û, reproducibly", async () => {
    const task = tasks[0]!;
    const rubric = simulatedStakeholder(task, 1).utility;
    const worker = simulatedWorker();
    const { best, candidates } = await bestOfK(worker, task, rubric, 8, { seed: 3, registry });
    expect(candidates).toHaveLength(8);
    for (const c of candidates) expect(best.score.normalized).toBeGreaterThanOrEqual(c.score.normalized);
    expect((await bestOfK(worker, task, rubric, 8, { seed: 3, registry })).best.text).toBe(best.text);
  });

  it("importance resampling draws ∝ exp(û/τ)", () => {
    const rng = createRng("resample-test");
    const scores = [0.2, 0.5, 0.9];
    const counts = [0, 0, 0];
    for (let i = 0; i < 20_000; i++) counts[resampleIndex(scores, 0.25, rng.next())]!++;
    const weights = scores.map((s) => Math.exp(s / 0.25));
    const total = weights.reduce((a, b) => a + b, 0);
    counts.forEach((c, i) => expect(c / 20_000).toBeCloseTo(weights[i]! / total, 1));
    // A tiny temperature is best-of-K.
    expect(resampleIndex(scores, 1e-6, 0.999)).toBe(2);
    expect(() => resampleIndex(scores, 0, 0.5)).toThrow(GuidanceInputError);
    expect(() => resampleIndex(scores, 0, 0.5)).toThrow(
      expect.objectContaining({ code: "guidance.input", message: "temperature must be > 0, got 0" }),
    );
  });

  it("importance resampling with a small τ picks what best-of-K picks", async () => {
    const task = tasks[1]!;
    const rubric = simulatedStakeholder(task, 2).utility;
    const worker = simulatedWorker();
    const best = await bestOfK(worker, task, rubric, 6, { seed: 9, registry });
    const drawn = await importanceResample(worker, task, rubric, 6, { seed: 9, registry, temperature: 1e-4 });
    expect(drawn.chosen.score.normalized).toBe(best.best.score.normalized);
  });

  it("beam search over sections never does worse than the best whole draft, and often better", async () => {
    let better = 0;
    for (const [k, task] of tasks.entries()) {
      const rubric = simulatedStakeholder(task, 4).utility;
      const result = await beamSearch(simulatedWorker({ follow: 0.5 }), task, rubric, {
        seed: k,
        registry,
        samples: 4,
        width: 3,
      });
      const bestDraft = Math.max(...result.drafts.map((d) => d.score.normalized));
      expect(result.best.score.normalized).toBeGreaterThanOrEqual(bestDraft);
      if (result.best.score.normalized > bestDraft + 1e-12) better++;
      expect(result.steps).toBeGreaterThan(1);
    }
    expect(better).toBeGreaterThan(0);
  });

  it("a stakeholder's weight edit re-ranks candidates through reweight, with no verifier calls", async () => {
    const task = tasks[2]!;
    const rubric = simulatedStakeholder(task, 6).utility;
    // Unguided drafts differ on more criteria, so some edit must change who wins.
    const { candidates } = await bestOfK(simulatedWorker(), task, rubric, 8, { seed: 6, registry, guideWorker: false });
    const rank = (scores: number[]) =>
      scores
        .map((s, i) => ({ s, i }))
        .sort((a, b) => b.s - a.s || a.i - b.i)
        .map((x) => x.i);
    const before = rank(candidates.map((c) => c.score.normalized));
    // Find a criterion on which a lower-ranked candidate beats the top one; weighting only that
    // criterion must then put some other candidate first.
    const fraction = (i: number, id: string) =>
      candidates[i]!.score.criteria.find((c) => c.criterionId === id)!.fraction ?? 0;
    const flip = rubric.criteria.find((c) => candidates.some((_, i) => fraction(i, c.id) > fraction(before[0]!, c.id)));
    expect(flip).toBeDefined();
    const edit = Object.fromEntries(rubric.criteria.map((c) => [c.id, c.id === flip!.id ? 1 : 0]));
    const after = rank(candidates.map((c) => reweight(c.score, edit).normalized));
    expect(after[0]).not.toBe(before[0]);
    expect(fraction(after[0]!, flip!.id)).toBeGreaterThan(fraction(before[0]!, flip!.id));
  });
});

describe("splitSegments", () => {
  it("splits at second-level headings, the title being the first segment", () => {
    expect(splitSegments("# T\n\n## A\nx\n## B\ny\n")).toEqual(["# T\n", "## A\nx", "## B\ny\n"]);
  });
});

describe("guidance's refusals", () => {
  it("refuses a K below 1 before asking the worker for anything", async () => {
    const task = tasks[0]!;
    const error = await bestOfK(simulatedWorker(), task, simulatedStakeholder(task, 1).utility, 0, {
      seed: 1,
      registry,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GuidanceInputError);
    expect(error).toMatchObject({ code: "guidance.input", message: "k must be an integer ≥ 1, got 0" });
  });

  it("refuses a candidate it cannot score, naming it, rather than ranking it as 0", async () => {
    const down = llmJudge({
      provider: "test",
      modelId: "down",
      generate: () => Promise.reject(new Error("HTTP 503")),
    });
    const judged: FlatRubric = {
      id: "judged",
      criteria: [{ id: "clear", text: "Is clear", weight: 1, polarity: "reward", verifier: { kind: "llm-judge" } }],
    };
    const error = await scoreCandidates(judged, tasks[0]!, ["a draft"], {
      registry: createVerifierRegistry({ python: false, js: false, judge: down }),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GuidanceScoringError);
    expect(error).toMatchObject({
      code: "guidance.scoring",
      message: expect.stringMatching(/^texts\[0\] could not be scored: /),
    });
  });
});
