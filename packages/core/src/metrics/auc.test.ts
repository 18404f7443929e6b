import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { rocAuc } from "./auc.js";
import { StatisticsInputError } from "./errors.js";

/** The definition itself: over every (positive, negative) pair, 1 for a win, ½ for a tie. */
function pairwise(scores: readonly number[], positive: readonly boolean[]): number {
  let wins = 0;
  let pairs = 0;
  scores.forEach((p, i) => {
    if (!positive[i]) return;
    scores.forEach((n, j) => {
      if (positive[j]) return;
      pairs++;
      wins += p > n ? 1 : p === n ? 0.5 : 0;
    });
  });
  return wins / pairs;
}

describe("rocAuc", () => {
  it("is 1 for a perfect separation, 0 for a reversed one, ½ for ties", () => {
    expect(rocAuc([0.9, 0.4, 0.6, 0.1], [true, false, true, false])).toBe(1);
    expect(rocAuc([0.1, 0.9], [true, false])).toBe(0);
    expect(rocAuc([0.5, 0.5, 0.5], [true, false, false])).toBe(0.5);
    // sklearn.metrics.roc_auc_score([1, 0, 1, 0, 1], [0.8, 0.3, 0.3, 0.9, 0.5]) = 0.4166…
    expect(rocAuc([0.8, 0.3, 0.3, 0.9, 0.5], [true, false, true, false, true])).toBeCloseTo(5 / 12, 12);
  });

  it("equals the pairwise definition on any input with both classes", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: -3, max: 3 }), fc.boolean()), { minLength: 2, maxLength: 30 }),
        (rows) => {
          const scores = rows.map(([s]) => s / 2);
          const positive = rows.map(([, p]) => p);
          if (positive.every(Boolean) || !positive.some(Boolean)) return;
          expect(rocAuc(scores, positive)).toBeCloseTo(pairwise(scores, positive), 12);
        },
      ),
    );
  });

  it("names what it cannot use", () => {
    expect(() => rocAuc([1, 2], [true, true])).toThrow(
      new StatisticsInputError("positive must hold both classes, got 2 positive and 0 negative entries"),
    );
    expect(() => rocAuc([1, Number.NaN], [true, false])).toThrow(StatisticsInputError);
    expect(() => rocAuc([1], [true, false])).toThrow(StatisticsInputError);
  });
});
