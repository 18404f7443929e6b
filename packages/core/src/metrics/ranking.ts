import { StatisticsInputError } from "./errors.js";
import { requireFiniteValues, requireSameLength } from "./input.js";

/**
 * Normalised discounted cumulative gain at k, exactly as scikit-learn's
 * `ndcg_score([truth], [predicted], k=k)` with its defaults: gain = true relevance,
 * discount 1/log2(rank + 1), ties in `predicted` averaged over every order of the tie
 * (McSherry & Najork, 2008), and 0 when every true relevance in the ideal top k is 0.
 * Items are ranked by `predicted`, descending. `k` defaults to every item; k > n is allowed.
 *
 * @example
 * ndcgAtK([0.1, 0.2, 0.3, 4, 70], [10, 0, 0, 1, 5]); // 0.6956940443813074
 * ndcgAtK([0.1, 0.2, 0.3, 4, 70], [10, 0, 0, 1, 5], 2); // 0.42805626002956054
 */
export function ndcgAtK(predicted: readonly number[], truth: readonly number[], k?: number): number {
  requireSameLength("predicted", predicted, "truth", truth);
  // scikit-learn rejects a single item (its target-type check), so we do too.
  requireFiniteValues("predicted", predicted, 2);
  requireFiniteValues("truth", truth, 2);
  truth.forEach((relevance, index) => {
    if (relevance < 0) throw new StatisticsInputError(`truth[${index}] must be ≥ 0 (a relevance), got ${relevance}`);
  });
  if (k !== undefined && (!Number.isInteger(k) || k < 1))
    throw new StatisticsInputError(`k must be an integer ≥ 1, got ${k}`);

  const n = truth.length;
  const cutoff = Math.min(k ?? n, n);
  // Same expression as scikit-learn (1 / (ln(i + 2) / ln 2)) so the doubles agree bit for bit.
  const discount = Array.from({ length: n }, (_, i) => (i < cutoff ? 1 / (Math.log(i + 2) / Math.LN2) : 0));

  const idealGains = truth.slice().sort((a, b) => b - a);
  const idealDcg = idealGains.reduce((sum, gain, i) => sum + gain * discount[i]!, 0);
  if (idealDcg === 0) return 0;
  return tieAveragedDcg(predicted, truth, discount) / idealDcg;
}

/**
 * A group of items tied in `predicted` spans ranks start..end-1; any order of them is equally
 * likely, so each contributes the group's mean gain times the discounts of those ranks.
 */
function tieAveragedDcg(predicted: readonly number[], truth: readonly number[], discount: readonly number[]): number {
  const order = predicted.map((_, index) => index).sort((a, b) => predicted[b]! - predicted[a]!);
  let dcg = 0;
  let start = 0;
  while (start < order.length) {
    let end = start;
    let gainSum = 0;
    let discountSum = 0;
    while (end < order.length && predicted[order[end]!] === predicted[order[start]!]) {
      gainSum += truth[order[end]!]!;
      discountSum += discount[end]!;
      end++;
    }
    dcg += (gainSum / (end - start)) * discountSum;
    start = end;
  }
  return dcg;
}
