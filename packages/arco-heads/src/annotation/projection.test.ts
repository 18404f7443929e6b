import { PolicyInputError } from "@rubric/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ArcoInputError } from "../errors.js";
import { decomposesOutcome, decompositionGap, projectTeacherScores } from "./projection.js";

const sumOf = (rows: number[][]) => rows.flat().reduce((a, b) => a + b, 0);

describe("projectTeacherScores", () => {
  it("clamps a teacher's out-of-range scores, then shifts them uniformly onto K·R", () => {
    const { projected, shift } = projectTeacherScores(
      [
        [1.5, 0],
        [0, -0.5],
      ],
      1,
    );
    expect(shift).toBeCloseTo(0.5, 12);
    expect(projected[0]![0]).toBe(1);
    expect(projected[0]![1]).toBeCloseTo(0.5, 12);
    expect(projected[1]![0]).toBeCloseTo(0.5, 12);
    expect(projected[1]![1]).toBeCloseTo(0, 12);
  });

  it("keeps Σ_t,k = K·R and every score in [−1, 1]", () => {
    const trajectory = fc.tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 5 })).chain(([steps, k]) =>
      fc.tuple(
        fc.array(fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: k, maxLength: k }), {
          minLength: steps,
          maxLength: steps,
        }),
        fc.constantFrom(0, 1),
      ),
    );
    fc.assert(
      fc.property(trajectory, ([scores, outcome]) => {
        const { projected } = projectTeacherScores(scores, outcome);
        const k = scores[0]!.length;
        expect(sumOf(projected)).toBeCloseTo(k * outcome, 9);
        for (const x of projected.flat()) expect(Math.abs(x)).toBeLessThanOrEqual(1);
        expect(decompositionGap(projected, outcome)).toBeLessThan(1e-9);
      }),
      { seed: 14, numRuns: 300 },
    );
  });

  it("names a score that is not a number, and lets core refuse an unreachable outcome", () => {
    expect(() => projectTeacherScores([[0, Number.NaN]], 1)).toThrow(ArcoInputError);
    expect(() => projectTeacherScores([[0, Number.NaN]], 1)).toThrow(/scores\[0\]\[1\]/);
    // One step cannot carry an outcome of 2: Σ mean ≤ T.
    expect(() => projectTeacherScores([[0, 0]], 2)).toThrow(PolicyInputError);
  });
});

describe("decomposesOutcome", () => {
  it("measures |Σ_t mean_k − R| and keeps only gaps strictly under 0.05", () => {
    expect(
      decompositionGap(
        [
          [1, 0],
          [0, 0],
        ],
        1,
      ),
    ).toBeCloseTo(0.5, 12);
    expect(
      decomposesOutcome(
        [
          [0.5, 0.5],
          [0.5, 0.5],
        ],
        1,
      ),
    ).toBe(true);
    expect(
      decomposesOutcome(
        [
          [0.5, 0.5],
          [0.5, 0.6],
        ],
        1,
      ),
    ).toBe(false); // gap 0.05: not strictly under
    expect(
      decomposesOutcome(
        [
          [0.5, 0.5],
          [0.5, 0.58],
        ],
        1,
      ),
    ).toBe(true); // gap 0.04
    expect(decomposesOutcome([[0.02, 0.02]], 0)).toBe(true);
    expect(decomposesOutcome([[0.05, 0.05]], 0)).toBe(false);
    expect(decomposesOutcome([[0.05, 0.05]], 0, 0.1)).toBe(true);
  });

  it("refuses a step without scores by name", () => {
    expect(() => decompositionGap([[1], []], 1)).toThrow(/scores\[1\]: expected at least one score/);
  });
});
