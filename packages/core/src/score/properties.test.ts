import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseFlatRubric, parseStagedRubric } from "../rubric/parse.js";
import type { StagedRubric } from "../rubric/staged.js";
import { reweight, scoreRubric } from "./score.js";

const RUNS = { seed: 20261202, numRuns: 300 };
const fraction = fc.oneof(fc.constantFrom(0, 1, 0.5), fc.double({ min: 0, max: 1, noNaN: true }));
const weight = fc.oneof(fc.constantFrom(0, 1, 2), fc.double({ min: 0, max: 10, noNaN: true }));

const flatCase = fc
  .array(fc.record({ weight, penalty: fc.boolean(), fraction }), { minLength: 1, maxLength: 12 })
  .filter((cs) => cs.some((c) => !c.penalty && c.weight > 0))
  .map((cs) => ({
    rubric: parseFlatRubric({
      id: "p",
      criteria: cs.map((c, i) => ({
        id: `c${i}`,
        text: `criterion ${i}`,
        weight: c.weight,
        polarity: c.penalty ? "penalty" : "reward",
        verifier: { kind: "llm-judge" },
      })),
    }),
    verdicts: Object.fromEntries(cs.map((c, i) => [`c${i}`, c.fraction])),
  }));

const stagedCase = fc
  .record({
    max_total_score: fc.double({ min: 1, max: 30, noNaN: true }),
    stages: fc.array(
      fc.record({
        is_required: fc.boolean(),
        max_points: fc.double({ min: 0.1, max: 10, noNaN: true }),
        min_score_to_pass: fc.double({ min: 0, max: 10, noNaN: true }),
        on_failure_action: fc.constantFrom("skip_remaining", "zero_category", "continue"),
        on_failure_score: fc.constantFrom(0, 0.5),
        rules: fc.array(fc.record({ weight, fraction }), { minLength: 1, maxLength: 5 }),
      }),
      { minLength: 1, maxLength: 4 },
    ),
  })
  .map((raw) => {
    const rubric = parseStagedRubric({
      category_name: "p",
      max_total_score: raw.max_total_score,
      stages: raw.stages.map((s, i) => ({
        ...s,
        name: `stage ${i}`,
        description: "",
        rules: s.rules.map((r, j) => ({ type: "code", name: `r${j}`, description: "", weight: r.weight, code: "" })),
      })),
    });
    const verdicts = Object.fromEntries(
      raw.stages.flatMap((s, i) => s.rules.map((r, j) => [`s${i}.r${j}`, r.fraction])),
    );
    return { rubric, verdicts };
  });

describe("scoring properties", () => {
  it("flat and staged scores stay in range", () => {
    fc.assert(
      fc.property(flatCase, ({ rubric, verdicts }) => {
        const s = scoreRubric(rubric, verdicts);
        expect(s.normalized).toBeGreaterThanOrEqual(0);
        expect(s.normalized).toBeLessThanOrEqual(1);
        expect(s.unclipped).toBeLessThanOrEqual(1 + 1e-12);
      }),
      RUNS,
    );
    fc.assert(
      fc.property(stagedCase, fc.boolean(), ({ rubric, verdicts }, ignoreGates) => {
        const s = scoreRubric(rubric, verdicts, { ignoreGates });
        expect(s.total).toBeGreaterThanOrEqual(0);
        expect(s.total).toBeLessThanOrEqual(s.max);
        expect(s.normalized).toBeGreaterThanOrEqual(0);
        expect(s.normalized).toBeLessThanOrEqual(1);
        for (const stage of s.stages) expect(stage.score).toBeLessThanOrEqual(stage.maxPoints);
      }),
      RUNS,
    );
  });

  it("reweighting with the original weights is the identity", () => {
    fc.assert(
      fc.property(flatCase, ({ rubric, verdicts }) => {
        const s = scoreRubric(rubric, verdicts);
        const same = reweight(s, Object.fromEntries(rubric.criteria.map((c) => [c.id, c.weight])));
        expect(same.normalized).toBe(s.normalized);
        expect(same.unclipped).toBe(s.unclipped);
        expect(same.criteria).toEqual(s.criteria);
      }),
      RUNS,
    );
    fc.assert(
      fc.property(stagedCase, ({ rubric, verdicts }) => {
        const s = scoreRubric(rubric, verdicts);
        const same = reweight(
          s,
          Object.fromEntries(rubric.stages.flatMap((st) => st.rules.map((r) => [r.id, r.weight]))),
        );
        expect(same.total).toBe(s.total);
        expect(same.stages).toEqual(s.stages);
      }),
      RUNS,
    );
  });

  it("permuting flat criteria, or rules within a stage, does not change the score", () => {
    fc.assert(
      fc.property(flatCase, fc.nat(), ({ rubric, verdicts }, seed) => {
        const shuffled = [...rubric.criteria].sort((a, b) => hash(a.id, seed) - hash(b.id, seed));
        const permuted = scoreRubric({ ...rubric, criteria: shuffled }, verdicts);
        expect(permuted.normalized).toBeCloseTo(scoreRubric(rubric, verdicts).normalized, 12);
      }),
      RUNS,
    );
    fc.assert(
      fc.property(stagedCase, fc.nat(), ({ rubric, verdicts }, seed) => {
        const permutedRubric: StagedRubric = {
          ...rubric,
          stages: rubric.stages.map((st) => ({
            ...st,
            rules: [...st.rules].sort((a, b) => hash(a.id, seed) - hash(b.id, seed)),
          })),
        };
        const a = scoreRubric(rubric, verdicts);
        const b = scoreRubric(permutedRubric, verdicts);
        // Summation order changes the last bits only.
        expect(b.total).toBeCloseTo(a.total, 9);
      }),
      RUNS,
    );
  });

  it("a failed required zero_category gate always yields on_failure_score", () => {
    fc.assert(
      fc.property(stagedCase, ({ rubric, verdicts }) => {
        const s = scoreRubric(rubric, verdicts);
        const firstFailedGate = s.stages.find((st) => st.required && !st.passed && st.onFailureAction !== "continue");
        if (firstFailedGate?.onFailureAction === "zero_category") {
          expect(s.total).toBe(rubric.stages[firstFailedGate.index]!.on_failure_score);
          expect(s.stoppedAt).toBe(firstFailedGate.name);
          expect(s.stages.at(-1)).toBe(firstFailedGate);
        }
      }),
      RUNS,
    );
  });
});

describe("weights near the largest double", () => {
  // Any finite weights a rubric or an override may carry, up to Number.MAX_VALUE: sums of these
  // overflow, so the score must be computed without forming them.
  const anyWeight = fc.oneof(
    fc.constantFrom(0, 1, 1e308, Number.MAX_VALUE, Number.MIN_VALUE),
    fc.double({ min: 0, max: Number.MAX_VALUE, noNaN: true }),
  );
  const overrideCase = flatCase.chain(({ rubric, verdicts }) =>
    fc
      .array(anyWeight, { minLength: rubric.criteria.length, maxLength: rubric.criteria.length })
      .filter((ws) => ws.some((w, i) => w > 0 && rubric.criteria[i]!.polarity === "reward"))
      .map((ws) => ({ rubric, verdicts, weights: Object.fromEntries(ws.map((w, i) => [`c${i}`, w])) })),
  );

  it("a normalized score of any valid weights is finite and in [0, 1]", () => {
    fc.assert(
      fc.property(overrideCase, ({ rubric, verdicts, weights }) => {
        const s = scoreRubric(rubric, verdicts, { weights });
        expect(Number.isFinite(s.normalized)).toBe(true);
        expect(s.normalized).toBeGreaterThanOrEqual(0);
        expect(s.normalized).toBeLessThanOrEqual(1);
        expect(s.unclipped).toBeLessThanOrEqual(1 + 1e-12);
        // A reward's share is at most 1; a penalty's may truly lie past −Number.MAX_VALUE (a weight
        // of 1e238 against a reward weight of 5e-324), so only rewards are held to finiteness.
        rubric.criteria.forEach((c, i) => {
          const share = s.criteria[i]!.contribution;
          if (c.polarity === "reward" && share !== null) expect(share).toBeGreaterThanOrEqual(0);
          if (c.polarity === "reward" && share !== null) expect(share).toBeLessThanOrEqual(1);
        });
      }),
      RUNS,
    );
  });

  it("a staged score under any valid rule weights is finite and in [0, 1], with renormalised errors too", () => {
    const stagedOverrides = stagedCase.chain(({ rubric, verdicts }) => {
      const ids = rubric.stages.flatMap((st) => st.rules.map((r) => r.id));
      return fc
        .record({
          weights: fc.array(anyWeight, { minLength: ids.length, maxLength: ids.length }),
          errored: fc.array(fc.boolean(), { minLength: ids.length, maxLength: ids.length }),
        })
        .map(({ weights, errored }) => ({
          rubric,
          weights: Object.fromEntries(ids.map((id, i) => [id, weights[i]!])),
          verdicts: ids.map((id, i) =>
            errored[i]
              ? { criterionId: id, status: "error" as const, score: null, error: "down" }
              : { criterionId: id, status: "ok" as const, score: verdicts[id]! },
          ),
        }));
    });
    fc.assert(
      fc.property(stagedOverrides, ({ rubric, weights, verdicts }) => {
        let s: ReturnType<typeof scoreRubric>;
        try {
          s = scoreRubric(rubric, verdicts, { weights, errorsAs: "renormalize", ignoreGates: true });
        } catch (error) {
          // A stage whose every weighted rule errored has nothing to renormalise by: a named refusal.
          expect((error as Error).name).toBe("ScoringError");
          return;
        }
        expect(Number.isFinite(s.normalized)).toBe(true);
        expect(s.normalized).toBeGreaterThanOrEqual(0);
        expect(s.normalized).toBeLessThanOrEqual(1);
      }),
      RUNS,
    );
  });

  it("scaling every weight by one constant leaves normalized unchanged", () => {
    fc.assert(
      fc.property(flatCase, fc.constantFrom(2 ** -900, 1e-3, 3, 1e300, 2 ** 1000), ({ rubric, verdicts }, k) => {
        const scaled = Object.fromEntries(rubric.criteria.map((c) => [c.id, c.weight * k]));
        fc.pre(Object.values(scaled).every(Number.isFinite));
        fc.pre(rubric.criteria.some((c) => c.polarity === "reward" && c.weight * k > 0));
        const s = scoreRubric(rubric, verdicts, { weights: scaled });
        expect(s.normalized).toBeCloseTo(scoreRubric(rubric, verdicts).normalized, 12);
      }),
      RUNS,
    );
  });

  it("two criteria of weight 1e308 scored 1 and 0.5 give 0.75, not the 0 of an overflowed maximum", () => {
    const rubric = parseFlatRubric({
      id: "huge",
      criteria: ["a", "b"].map((id) => ({ id, text: id, weight: 1, verifier: { kind: "llm-judge" } })),
    });
    const s = scoreRubric(rubric, { a: 1, b: 0.5 }, { weights: { a: 1e308, b: 1e308 } });
    expect(s.normalized).toBe(0.75);
    expect(s.criteria.map((c) => c.contribution)).toEqual([0.5, 0.25]);
    expect(reweight(scoreRubric(rubric, { a: 1, b: 0.5 }), { a: 1e308, b: 1e308 }).normalized).toBe(0.75);
  });

  it("two criteria of the smallest subnormal weight scored 1 and 0.5 give 0.75, not 0.5", () => {
    const rubric = parseFlatRubric({
      id: "tiny",
      criteria: ["a", "b"].map((id) => ({ id, text: id, weight: 5e-324, verifier: { kind: "llm-judge" } })),
    });
    expect(scoreRubric(rubric, { a: 1, b: 0.5 }).normalized).toBe(0.75);
    expect(scoreRubric(rubric, { a: 0.5, b: 0.5 }, { weights: { a: 1e-310, b: 3e-310 } }).normalized).toBe(0.5);
  });

  it("a staged stage of 1e308-weight rules renormalises without NaN", () => {
    const rubric = parseStagedRubric({
      category_name: "huge",
      max_total_score: 1e308,
      stages: [
        {
          name: "s",
          description: "",
          max_points: 1e308,
          rules: ["a", "b", "c"].map((name) => ({ type: "code", name, description: "", weight: 1, code: "" })),
        },
      ],
    });
    const s = scoreRubric(
      rubric,
      [
        { criterionId: "s0.r0", status: "ok", score: 0.5 },
        { criterionId: "s0.r1", status: "ok", score: 0 },
        { criterionId: "s0.r2", status: "error", score: null, error: "down" },
      ],
      { weights: { "s0.r0": 1e308, "s0.r1": 1e308, "s0.r2": 1e308 }, errorsAs: "renormalize" },
    );
    // 0.5·1e308 of the 2e308 counted, renormalised to the 3e308 of the stage: 0.75e308.
    expect(s.normalized).toBeCloseTo(0.75, 12);
  });
});

function hash(text: string, seed: number): number {
  let h = seed | 0;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 2654435761);
  return h >>> 0;
}
