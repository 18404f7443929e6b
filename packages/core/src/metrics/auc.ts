import { StatisticsInputError } from "./errors.js";
import { requireFiniteValues, requireSameLength } from "./input.js";
import { rankWithTies } from "./rank.js";

/**
 * The area under the ROC curve of `scores` for telling the `positive` entries from the rest: the
 * chance that a random positive outscores a random negative, ties counting one half (the
 * Mann–Whitney U statistic over n₊·n₋, computed from average ranks, as
 * `sklearn.metrics.roc_auc_score`). 0.5 is chance; 1 a perfect separation. Both classes must be
 * present.
 *
 * @example
 * rocAuc([0.9, 0.4, 0.6, 0.1], [true, false, true, false]); // 1
 * rocAuc([0.5, 0.5], [true, false]); // 0.5
 */
export function rocAuc(scores: readonly number[], positive: readonly boolean[]): number {
  requireFiniteValues("scores", scores);
  requireSameLength("scores", scores, "positive", positive);
  let positives = 0;
  for (let i = 0; i < positive.length; i++) {
    if (typeof positive[i] !== "boolean") {
      throw new StatisticsInputError(`positive[${i}] must be a boolean, got ${String(positive[i])}`);
    }
    if (positive[i]) positives++;
  }
  const negatives = positive.length - positives;
  if (positives === 0 || negatives === 0) {
    throw new StatisticsInputError(
      `positive must hold both classes, got ${positives} positive and ${negatives} negative entries`,
    );
  }
  const { ranks } = rankWithTies(scores);
  let rankSum = 0;
  for (let i = 0; i < ranks.length; i++) if (positive[i]) rankSum += ranks[i]!;
  return (rankSum - (positives * (positives + 1)) / 2) / (positives * negatives);
}
