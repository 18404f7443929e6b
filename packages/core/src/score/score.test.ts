import { describe, expect, it } from "vitest";
import { parseFlatRubric, parseStagedRubric } from "../rubric/parse.js";
import { CriterionErrorsError, ScoringError, VerdictValidationError } from "./errors.js";
import { checkWeights, meanNormalizedScore, reweight, scoreRubric } from "./score.js";
import { parseVerdictFile, parseWeightFile, type Verdict } from "./verdict.js";

const flat = parseFlatRubric({
  id: "memo",
  criteria: [
    { id: "accurate", text: "Numbers are right", weight: 3, verifier: { kind: "numeric" } },
    { id: "cited", text: "Cites sources", weight: 1, verifier: { kind: "citations" } },
    { id: "rude", text: "Insults the reader", weight: 2, polarity: "penalty", verifier: { kind: "llm-judge" } },
  ],
});

function stagedWith(stage0: Record<string, unknown>, stage1: Record<string, unknown> = {}) {
  return parseStagedRubric({
    category_name: "Report",
    max_total_score: 10,
    stages: [
      {
        name: "Gate",
        description: "",
        is_required: true,
        max_points: 4,
        min_score_to_pass: 3,
        rules: [
          { type: "llm_judge", name: "a", description: "", weight: 2, judge_prompt: "" },
          { type: "code", name: "b", description: "", weight: 2, code: "" },
        ],
        on_failure_action: "zero_category",
        on_failure_score: 0,
        ...stage0,
      },
      {
        name: "Content",
        description: "",
        is_required: false,
        max_points: 6,
        min_score_to_pass: 0,
        rules: [
          { type: "code", name: "c", description: "", weight: 4, code: "" },
          { type: "code", name: "d", description: "", weight: 4, code: "" },
        ],
        on_failure_action: "continue",
        on_failure_score: 0,
        ...stage1,
      },
    ],
  });
}

describe("flat scoring", () => {
  it("is Σ w·ν over reward weight, penalties subtracting (HealthBench-style)", () => {
    // (3·1 + 1·0.5 − 2·0) / (3 + 1) = 0.875
    const score = scoreRubric(flat, { accurate: 1, cited: 0.5, rude: 0 });
    expect(score).toMatchObject({ kind: "flat", total: 3.5, max: 4, normalized: 0.875, unclipped: 0.875 });
    expect(score.criteria.map((c) => c.contribution)).toEqual([0.75, 0.125, 0]);
  });

  it("clips to [0, 1] but keeps the unclipped value", () => {
    // (3·0.2 + 1·0 − 2·1) / 4 = −0.35
    const score = scoreRubric(flat, { accurate: 0.2, cited: 0, rude: 1 });
    expect(score.normalized).toBe(0);
    expect(score.unclipped).toBeCloseTo(-0.35, 15);
  });

  it("treats an error as a failure by default, never as a zero", () => {
    const verdicts: Verdict[] = [
      { criterionId: "accurate", score: 1, status: "ok" },
      { criterionId: "cited", score: null, status: "error", error: "timeout after 30 s" },
      { criterionId: "rude", score: 0, status: "ok" },
    ];
    expect(() => scoreRubric(flat, verdicts)).toThrow(CriterionErrorsError);
    expect(() => scoreRubric(flat, verdicts)).toThrow(/cited \(verifier error: timeout after 30 s\)/);
    // zero: counted as 0 → 3/4; renormalize: dropped → 3/3.
    expect(scoreRubric(flat, verdicts, { errorsAs: "zero" }).normalized).toBe(0.75);
    expect(scoreRubric(flat, verdicts, { errorsAs: "renormalize" }).normalized).toBe(1);
    const renormalized = scoreRubric(flat, verdicts, { errorsAs: "renormalize" });
    expect(renormalized.criteria[1]).toMatchObject({
      status: "error",
      counted: false,
      contribution: null,
      error: "timeout after 30 s",
    });
  });

  it("treats a missing verdict like an error, and a skipped one as not applicable", () => {
    expect(() => scoreRubric(flat, { accurate: 1, rude: 0 })).toThrow(/cited \(no verdict\)/);
    const skipped: Verdict[] = [
      { criterionId: "accurate", score: 0.5, status: "ok" },
      { criterionId: "cited", score: null, status: "skipped" },
      { criterionId: "rude", score: 0, status: "ok" },
    ];
    expect(scoreRubric(flat, skipped).normalized).toBe(0.5);
  });

  it("refuses to score when nothing is left to normalise by", () => {
    const allErrors: Verdict[] = ["accurate", "cited", "rude"].map((id) => ({
      criterionId: id,
      score: null,
      status: "error",
    }));
    expect(() => scoreRubric(flat, allErrors, { errorsAs: "renormalize" })).toThrow(ScoringError);
  });

  it("refuses verdicts for unknown criteria and scores outside [0, 1]", () => {
    expect(() => scoreRubric(flat, { accurate: 1, cited: 1, rude: 0, acurate: 1 })).toThrow(VerdictValidationError);
    expect(() => scoreRubric(flat, { accurate: 1, cited: 1, rude: 0, acurate: 1 })).toThrow(
      /unknown criterion id "acurate"/,
    );
    expect(() => scoreRubric(flat, { accurate: 1.5, cited: 1, rude: 0 })).toThrow(/fraction in \[0, 1\], got 1.5/);
    expect(() => scoreRubric(flat, { accurate: Number.NaN, cited: 1, rude: 0 })).toThrow(/got NaN/);
  });
});

describe("staged scoring", () => {
  const all = (rubric: ReturnType<typeof stagedWith>, value: number) =>
    Object.fromEntries(rubric.stages.flatMap((s) => s.rules.map((r) => [r.id, value])));

  it("adds capped stage scores when every gate passes", () => {
    const rubric = stagedWith({});
    // stage 0: 2 + 2 = 4; stage 1: min(4 + 4, 6) = 6 → 10 / 10
    const score = scoreRubric(rubric, all(rubric, 1));
    expect(score).toMatchObject({ total: 10, max: 10, normalized: 1, stoppedAt: null, failedGate: null });
    expect(score.stages.map((s) => [s.score, s.passed])).toEqual([
      [4, true],
      [6, true],
    ]);
  });

  it("zero_category: a failed required gate makes the category worth on_failure_score, discarding earlier points", () => {
    const rubric = stagedWith({}, {});
    const reordered = parseStagedRubric({
      category_name: "x",
      max_total_score: 10,
      stages: [
        { ...rubric.stages[1], rules: rubric.stages[1]!.rules.map(({ id: _id, ...r }) => r) },
        { ...rubric.stages[0], on_failure_score: 1, rules: rubric.stages[0]!.rules.map(({ id: _id, ...r }) => r) },
      ],
    });
    // stage 0 earns 6; stage 1 earns 2 < 3 → total = on_failure_score = 1
    const score = scoreRubric(reordered, { "s0.r0": 1, "s0.r1": 1, "s1.r0": 1, "s1.r1": 0 });
    expect(score).toMatchObject({ total: 1, normalized: 0.1, stoppedAt: "Gate", failedGate: "Gate" });
  });

  it("skip_remaining: stops, keeping only earlier stages' points", () => {
    const rubric = parseStagedRubric({
      category_name: "x",
      max_total_score: 10,
      stages: [
        {
          name: "A",
          description: "",
          is_required: false,
          max_points: 5,
          min_score_to_pass: 0,
          rules: [{ type: "code", name: "a", description: "", weight: 5, code: "" }],
        },
        {
          name: "B",
          description: "",
          is_required: true,
          max_points: 3,
          min_score_to_pass: 2,
          on_failure_action: "skip_remaining",
          rules: [{ type: "code", name: "b", description: "", weight: 3, code: "" }],
        },
        {
          name: "C",
          description: "",
          is_required: false,
          max_points: 2,
          min_score_to_pass: 0,
          rules: [{ type: "code", name: "c", description: "", weight: 2, code: "" }],
        },
      ],
    });
    // A: 5·0.6 = 3; B: 3·0.5 = 1.5 < 2 → stop with 3; C is never reached, so needs no verdict.
    const score = scoreRubric(rubric, { "s0.r0": 0.6, "s1.r0": 0.5 });
    expect(score).toMatchObject({ total: 3, normalized: 0.3, stoppedAt: "B" });
    expect(score.stages.map((s) => s.name)).toEqual(["A", "B"]);
    expect(score.criteria.find((c) => c.criterionId === "s2.r0")).toMatchObject({ status: "missing", counted: false });
    // ignoreGates scores every stage: 3 + 1.5 + 2·1 = 6.5 — and now C's verdict is needed.
    expect(() => scoreRubric(rubric, { "s0.r0": 0.6, "s1.r0": 0.5 }, { ignoreGates: true })).toThrow(
      /s2.r0 \(no verdict\)/,
    );
    expect(scoreRubric(rubric, { "s0.r0": 0.6, "s1.r0": 0.5, "s2.r0": 1 }, { ignoreGates: true })).toMatchObject({
      total: 6.5,
      stoppedAt: null,
      failedGate: "B",
    });
  });

  it("continue: a failed required stage still adds its points", () => {
    const rubric = stagedWith({ on_failure_action: "continue" });
    // gate: 2·0.5 + 2·0.5 = 2 < 3 (fails, continues, adds 2); content: 6 → 8
    const score = scoreRubric(rubric, { "s0.r0": 0.5, "s0.r1": 0.5, "s1.r0": 1, "s1.r1": 1 });
    expect(score).toMatchObject({ total: 8, stoppedAt: null, failedGate: "Gate" });
  });

  it("a failed stage that is not required changes nothing", () => {
    const rubric = stagedWith({ is_required: false });
    expect(scoreRubric(rubric, { "s0.r0": 0, "s0.r1": 0, "s1.r0": 1, "s1.r1": 0.25 })).toMatchObject({
      total: 5,
      failedGate: null,
    });
  });

  it("passed is score ≥ the absolute pass mark", () => {
    const rubric = stagedWith({});
    // gate exactly 3 = min_score_to_pass → passes
    expect(scoreRubric(rubric, { "s0.r0": 1, "s0.r1": 0.5, "s1.r0": 0, "s1.r1": 0 }).stages[0]!.passed).toBe(true);
  });

  it("errors in a stage that scoring reaches fail loudly and keep the stages already computed", () => {
    const rubric = stagedWith({});
    const verdicts: Verdict[] = [
      { criterionId: "s0.r0", score: 1, status: "ok" },
      { criterionId: "s0.r1", score: 1, status: "ok" },
      { criterionId: "s1.r0", score: null, status: "error", error: "sandbox: MemoryError" },
      { criterionId: "s1.r1", score: 1, status: "ok" },
    ];
    try {
      scoreRubric(rubric, verdicts);
      throw new Error("expected CriterionErrorsError");
    } catch (error) {
      expect(error).toBeInstanceOf(CriterionErrorsError);
      const e = error as CriterionErrorsError;
      expect(e.failures).toEqual([{ criterionId: "s1.r0", reason: "verifier error: sandbox: MemoryError" }]);
      expect(e.partial).toHaveLength(1);
      expect(e.message).toMatch(/stage "Content"/);
    }
    // zero: content = min(0 + 4, 6) = 4 → 8; renormalize: 4 · (8/4) = 8 → capped 6 → 10
    expect(scoreRubric(rubric, verdicts, { errorsAs: "zero" }).total).toBe(8);
    expect(scoreRubric(rubric, verdicts, { errorsAs: "renormalize" }).total).toBe(10);
  });

  it("averages several categories' normalised scores", () => {
    const rubric = stagedWith({});
    const a = scoreRubric(rubric, all(rubric, 1));
    const b = scoreRubric(rubric, all(rubric, 0));
    expect(meanNormalizedScore([a, b])).toBe(0.5);
    expect(() => meanNormalizedScore([])).toThrow(ScoringError);
  });
});

describe("reweight", () => {
  it("recomputes a flat score from stored verdicts under edited weights", () => {
    const score = scoreRubric(flat, { accurate: 1, cited: 0, rude: 0.5 });
    // (3 − 1) / 4 = 0.5 → with cited weight 0 and rude weight 1: (3 − 0.5) / 3
    expect(score.normalized).toBe(0.5);
    const edited = reweight(score, { cited: 0, rude: 1 });
    expect(edited.normalized).toBeCloseTo(2.5 / 3, 15);
    expect(edited.criteria.map((c) => c.weight)).toEqual([3, 0, 1]);
    // reweighting composes, and the original is untouched
    expect(reweight(edited, { cited: 1 }).normalized).toBeCloseTo(2.5 / 4, 15);
    expect(score.normalized).toBe(0.5);
  });

  it("works on a score that went through JSON (its basis is rebuilt from the criteria)", () => {
    const score = scoreRubric(flat, { accurate: 1, cited: 0, rude: 0.5 });
    const revived = { ...JSON.parse(JSON.stringify({ ...score, rubric: undefined })), rubric: flat };
    expect(reweight(revived, { cited: 0, rude: 1 }).normalized).toBeCloseTo(2.5 / 3, 15);
  });

  it("reads a weights object changed in place since the last call (a page's controls edit one)", () => {
    const verdicts = { accurate: 1, cited: 0, rude: 0.5 };
    const weights: Record<string, number> = { cited: 0 };
    // accurate 3·1, cited w·0, rude (penalty, weight 2) 2·0.5, over the reward weights.
    expect(scoreRubric(flat, verdicts, { weights }).normalized).toBeCloseTo(2 / 3, 15);
    weights["rude"] = 0;
    expect(scoreRubric(flat, verdicts, { weights }).normalized).toBe(1);
    weights["cited"] = 1;
    expect(scoreRubric(flat, verdicts, { weights }).normalized).toBeCloseTo(3 / 4, 15);
    delete weights["rude"];
    expect(scoreRubric(flat, verdicts, { weights }).normalized).toBeCloseTo(2 / 4, 15);
    const map = new Map([["cited", 0]]);
    expect(scoreRubric(flat, verdicts, { weights: map }).normalized).toBeCloseTo(2 / 3, 15);
    map.set("cited", 1);
    expect(scoreRubric(flat, verdicts, { weights: map }).normalized).toBeCloseTo(2 / 4, 15);
  });

  it("moves staged rule points and refuses unknown ids or bad weights", () => {
    const rubric = stagedWith({});
    const score = scoreRubric(rubric, { "s0.r0": 1, "s0.r1": 0.5, "s1.r0": 0.5, "s1.r1": 0 });
    expect(score.total).toBe(5);
    // s0.r1 weight 1 → gate = 2 + 0.5 = 2.5 < 3 → zero_category → 0
    expect(reweight(score, { "s0.r1": 1 }).total).toBe(0);
    expect(() => reweight(score, { nope: 1 })).toThrow(/unknown criterion id/);
    expect(() => reweight(score, { "s0.r0": -1 })).toThrow(/expected a finite weight ≥ 0, got -1/);
    // The same checks before anything is scored, on the rubric alone.
    expect(() => checkWeights(score.rubric, { "s0.r1": 1 })).not.toThrow();
    expect(() => checkWeights(score.rubric, { nope: 1 })).toThrow(VerdictValidationError);
    expect(() => checkWeights(score.rubric, new Map([["s0.r0", Number.NaN]]))).toThrow(
      /weights\.s0\.r0: expected a finite weight/,
    );
  });
});

describe("ids that plain objects treat specially", () => {
  // JSON.parse keeps `__proto__` as an own key, as a verdicts file on disk would.
  const file = JSON.parse('{"scores": {"__proto__": 1, "constructor": 0.5, "b": 0}}');

  it("a verdicts file keeps a verdict keyed __proto__ instead of dropping it", () => {
    expect(parseVerdictFile(file).map((v) => v.criterionId)).toEqual(["__proto__", "constructor", "b"]);
  });

  it("a weights file keeps a weight keyed __proto__ as an entry", () => {
    const weights = parseWeightFile(JSON.parse('{"weights": {"__proto__": 2, "b": 1}}'));
    expect(Object.entries(weights)).toEqual([
      ["__proto__", 2],
      ["b", 1],
    ]);
  });

  it("a weights file whose weights sum past the largest double is refused, as a rubric file is", () => {
    const huge = () => parseWeightFile({ weights: { a: 1e308, b: 1e308 } }, "w.json");
    expect(huge).toThrow(VerdictValidationError);
    expect(huge).toThrow(
      /^w\.json: expected weights whose sum is finite, got 2 weights summing past Number\.MAX_VALUE/,
    );
    expect(parseWeightFile({ weights: { a: 1e308, b: 1 } }, "w.json")).toEqual({ a: 1e308, b: 1 });
  });

  it("so a verdict for an id the rubric cannot have is refused by name, not silently lost", () => {
    const rubric = parseFlatRubric({
      id: "r",
      criteria: [{ id: "b", text: "b", weight: 1, verifier: { kind: "length", min: 1 } }],
    });
    expect(() => scoreRubric(rubric, parseVerdictFile(file))).toThrow(/unknown criterion id "__proto__"/);
  });
});
