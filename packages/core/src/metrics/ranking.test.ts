import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { StatisticsInputError } from "./errors.js";
import { ndcgAtK } from "./ranking.js";

const truth = [10, 0, 0, 1, 5];
const scores = [0.1, 0.2, 0.3, 4, 70];
const tiedScores = [1, 0, 0, 0, 1];
// The same formulas in the Python that produced the references.
const N60truth = Array.from({ length: 60 }, (_, i) => (37 * i) % 7);
const N60predicted = Array.from({ length: 60 }, (_, i) => (53 * i) % 11); // many ties

describe("ndcgAtK", () => {
  it("matches sklearn.metrics.ndcg_score", () => {
    // scikit-learn 1.2.1: ndcg_score([[10,0,0,1,5]], [[.1,.2,.3,4,70]]) -> 0.6956940443813074
    expect(ndcgAtK(scores, truth)).toBeCloseTo(0.6956940443813074, 10);
    // scikit-learn 1.2.1: ndcg_score([[10,0,0,1,5]], [[.1,.2,.3,4,70]], k=2) -> 0.42805626002956054
    expect(ndcgAtK(scores, truth, 2)).toBeCloseTo(0.42805626002956054, 10);
    // scikit-learn 1.2.1: ndcg_score([[10,0,0,1,5]], [[.1,.2,.3,4,70]], k=10) -> 0.6956940443813074
    expect(ndcgAtK(scores, truth, 10)).toBeCloseTo(0.6956940443813074, 10);
    // scikit-learn 1.2.1: ndcg_score([[0.5,2.25,0,1.75]], [[0.1,0.4,0.35,0.8]]) -> 0.9391817103014644
    expect(ndcgAtK([0.1, 0.4, 0.35, 0.8], [0.5, 2.25, 0, 1.75])).toBeCloseTo(0.9391817103014644, 10);
    // scikit-learn 1.2.1: ndcg_score([N60truth], [N60predicted]) -> 0.8111480285114814; k=10 -> 0.503208502451791
    expect(ndcgAtK(N60predicted, N60truth)).toBeCloseTo(0.8111480285114814, 10);
    expect(ndcgAtK(N60predicted, N60truth, 10)).toBeCloseTo(0.503208502451791, 10);
  });

  it("averages over the orders of tied predictions, also across the cutoff", () => {
    // scikit-learn 1.2.1: ndcg_score([[10,0,0,1,5]], [[1,0,0,0,1]]) -> 0.9279733094794905; k=1 -> 0.75
    expect(ndcgAtK(tiedScores, truth)).toBeCloseTo(0.9279733094794905, 10);
    expect(ndcgAtK(tiedScores, truth, 1)).toBeCloseTo(0.75, 10);
    // scikit-learn 1.2.1: ndcg_score([[1,3,0,2,1]], [[3,2,2,2,1]], k=2) -> 0.481374288816266; k=3 -> 0.605831171266539
    expect(ndcgAtK([3, 2, 2, 2, 1], [1, 3, 0, 2, 1], 2)).toBeCloseTo(0.481374288816266, 10);
    expect(ndcgAtK([3, 2, 2, 2, 1], [1, 3, 0, 2, 1], 3)).toBeCloseTo(0.605831171266539, 10);
  });

  it("is 0 when nothing relevant can be reached", () => {
    // scikit-learn 1.2.1: ndcg_score([[0,0,0]], [[1,2,3]]) -> 0.0
    expect(ndcgAtK([1, 2, 3], [0, 0, 0])).toBe(0);
    // scikit-learn 1.2.1: ndcg_score([[3,0,0,0]], [[1,2,3,4]], k=3) -> 0.0
    expect(ndcgAtK([1, 2, 3, 4], [3, 0, 0, 0], 3)).toBe(0);
  });

  const relevances = fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 2, maxLength: 40 });

  it("stays in [0, 1]", () => {
    fc.assert(
      fc.property(relevances, fc.integer({ min: 1, max: 50 }), fc.integer(), (rel, k, seed) => {
        const predicted = rel.map((_, i) => ((i + 1) * (seed | 1)) % 7);
        const value = ndcgAtK(predicted, rel, k);
        expect(value).toBeGreaterThanOrEqual(0);
        expect(value).toBeLessThanOrEqual(1 + 1e-12);
      }),
    );
  });

  it("is 1 when the prediction orders items as the truth does", () => {
    fc.assert(
      fc.property(relevances, fc.integer({ min: 1, max: 50 }), (rel, k) => {
        fc.pre(rel.some((r) => r > 0));
        // A strictly increasing transform of the truth, so ties in truth stay tied in predicted.
        expect(
          ndcgAtK(
            rel.map((r) => 2 * r + 1),
            rel,
            k,
          ),
        ).toBeCloseTo(1, 12);
        expect(ndcgAtK(rel, rel, k)).toBeCloseTo(1, 12);
      }),
    );
  });

  it("rejects invalid input", () => {
    expect(() => ndcgAtK([1, 2], [1, 2, 3])).toThrow(/predicted and truth must have the same length, got 2 and 3/);
    expect(() => ndcgAtK([1], [1])).toThrow(/predicted must hold at least 2 values, got 1/);
    expect(() => ndcgAtK([1, 2, 3], [1, -2, 3])).toThrow(/truth\[1\] must be ≥ 0 \(a relevance\), got -2/);
    expect(() => ndcgAtK([1, Number.NaN, 3], [1, 2, 3])).toThrow(/predicted\[1\] must be a finite number, got NaN/);
    expect(() => ndcgAtK([1, 2, 3], [1, 2, 3], 0)).toThrow(/k must be an integer ≥ 1, got 0/);
    expect(() => ndcgAtK([1, 2, 3], [1, 2, 3], 1.5)).toThrow(StatisticsInputError);
  });
});
