import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PolicyInputError } from "./errors.js";
import { projectToOutcome } from "./projection.js";

const sum = (rows: readonly (readonly number[])[]) => rows.flat().reduce((a, b) => a + b, 0);

describe("projectToOutcome", () => {
  it("shifts uniformly when nothing clamps", () => {
    // T = 2, K = 2, outcome 1 → target K·R = 2; Σ x = 0, so 4λ = 2 → λ = 0.5
    const { projected, shift } = projectToOutcome(
      [
        [0.5, -0.5],
        [0, 0],
      ],
      1,
    );
    expect(shift).toBeCloseTo(0.5, 12);
    expect(projected).toEqual(
      [
        [1, 0],
        [0.5, 0.5],
      ].map((row) => row.map((x) => expect.closeTo(x, 12))),
    );
  });

  it("accounts for entries that clamp", () => {
    // T = 3, K = 1, outcome 2 → target 2. Try λ with 0.9 + λ ≥ 1 clamped:
    // 1 + (0.2 + λ) + (−0.4 + λ) = 2 → λ = 0.6; check: 0.9 + 0.6 = 1.5 clamps to 1 ✓
    const { projected, shift } = projectToOutcome([[0.9], [0.2], [-0.4]], 2);
    expect(shift).toBeCloseTo(0.6, 12);
    expect(projected.map((row) => row[0])).toEqual([1, expect.closeTo(0.8, 12), expect.closeTo(0.2, 12)]);
  });

  it("reaches the extremes ±T exactly", () => {
    expect(
      projectToOutcome(
        [
          [0.3, -1],
          [0, 0.2],
        ],
        2,
      ).projected,
    ).toEqual([
      [1, 1],
      [1, 1],
    ]);
    expect(
      projectToOutcome(
        [
          [0.3, -1],
          [0, 0.2],
        ],
        -2,
      ).projected,
    ).toEqual([
      [-1, -1],
      [-1, -1],
    ]);
  });

  it("lowers a failed trajectory's scores to sum to 0", () => {
    // T = 2, K = 3, outcome 0: Σ x = 1.2, no clamping, 6λ = −1.2 → λ = −0.2
    const { projected, shift } = projectToOutcome(
      [
        [0.6, 0.2, 0.1],
        [0.3, 0, 0],
      ],
      0,
    );
    expect(shift).toBeCloseTo(-0.2, 12);
    expect(Math.abs(sum(projected))).toBeLessThanOrEqual(1e-12);
  });

  it("rejects an unreachable outcome and malformed scores", () => {
    expect(() => projectToOutcome([[0, 0]], 1.5)).toThrow(PolicyInputError);
    expect(() => projectToOutcome([[0, 0]], 1.5)).toThrow(/^outcome: K·outcome = 3 cannot be reached/);
    expect(() => projectToOutcome([], 0)).toThrow(
      new PolicyInputError("scores", "expected at least one step, got none"),
    );
    expect(() => projectToOutcome([[0, 0], [0]], 0)).toThrow(
      new PolicyInputError("scores[1]", "expected 2 criterion scores (as scores[0]), got 1"),
    );
    expect(() => projectToOutcome([[0, 1.5]], 0)).toThrow(
      new PolicyInputError("scores[0][1]", "expected a number in [-1, 1], got 1.5"),
    );
    expect(() => projectToOutcome([[0, Number.NaN]], 0)).toThrow(PolicyInputError);
  });

  it("property: the projection sums to K·outcome and stays in [−1, 1]", () => {
    const shape = fc.record({ T: fc.integer({ min: 1, max: 8 }), K: fc.integer({ min: 1, max: 5 }) });
    const input = shape.chain(({ T, K }) =>
      fc.record({
        scores: fc.array(fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: K, maxLength: K }), {
          minLength: T,
          maxLength: T,
        }),
        outcome: fc.double({ min: -T, max: T, noNaN: true }),
      }),
    );
    fc.assert(
      fc.property(input, ({ scores, outcome }) => {
        const K = scores[0]!.length;
        const { projected } = projectToOutcome(scores, outcome);
        expect(Math.abs(sum(projected) - K * outcome)).toBeLessThanOrEqual(1e-12 * Math.max(1, scores.length * K));
        for (const x of projected.flat()) {
          expect(x).toBeGreaterThanOrEqual(-1);
          expect(x).toBeLessThanOrEqual(1);
        }
      }),
      { numRuns: 500 },
    );
  });
});
