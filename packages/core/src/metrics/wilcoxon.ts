import { StatisticsInputError } from "./errors.js";
import { requireFiniteValues, requireSameLength } from "./input.js";
import { rankWithTies } from "./rank.js";
import { normalSurvival } from "./special.js";

/** Outcome of a two-sided Wilcoxon signed-rank test. */
export interface WilcoxonResult {
  /** min(W+, W−): the smaller of the rank sums of positive and of negative differences. */
  readonly statistic: number;
  readonly pValue: number;
  /** "exact": the permutation null distribution; "approx": the normal approximation. */
  readonly method: "exact" | "approx";
  /** Number of non-zero differences, the sample the test actually ranks. */
  readonly n: number;
}

/** Above this many differences the exact distribution is not used (SciPy's threshold). */
const EXACT_MAX_N = 50;

/**
 * Two-sided Wilcoxon signed-rank test on the paired differences x − y, following
 * `scipy.stats.wilcoxon(x, y)` defaults: zero differences are dropped (zero_method="wilcox"),
 * the statistic is min(W+, W−); the exact null distribution is used when there are at most 50
 * differences, none zero and none tied, otherwise the normal approximation with the tie-corrected
 * variance and no continuity correction.
 *
 * @example
 * const before = [125, 115, 130, 140, 140, 115, 140, 125, 140, 135];
 * const after = [110, 122, 125, 120, 140, 124, 123, 137, 135, 145];
 * wilcoxonSignedRank(before, after); // { statistic: 18, pValue: ≈0.59363, method: "approx", n: 9 } (140 − 140 = 0 is dropped)
 */
export function wilcoxonSignedRank(x: readonly number[], y: readonly number[]): WilcoxonResult {
  requireSameLength("x", x, "y", y);
  requireFiniteValues("x", x);
  requireFiniteValues("y", y);
  const allDifferences = x.map((value, i) => value - y[i]!);
  const differences = allDifferences.filter((difference) => difference !== 0);
  if (differences.length === 0)
    throw new StatisticsInputError(
      `x − y must have at least one non-zero difference, got all ${allDifferences.length} equal to 0`,
    );
  const hadZeros = differences.length < allDifferences.length;

  const n = differences.length;
  const { ranks, tieSizes } = rankWithTies(differences.map(Math.abs));
  let positiveRankSum = 0;
  let negativeRankSum = 0;
  differences.forEach((difference, i) => {
    if (difference > 0) positiveRankSum += ranks[i]!;
    else negativeRankSum += ranks[i]!;
  });
  const statistic = Math.min(positiveRankSum, negativeRankSum);

  // Ties make the ranks non-integer, so the integer-support exact distribution no longer applies.
  if (n <= EXACT_MAX_N && !hadZeros && tieSizes.length === 0)
    return { statistic, pValue: exactPValue(n, positiveRankSum), method: "exact", n };

  const mean = (n * (n + 1)) / 4;
  const tieCorrection = tieSizes.reduce((sum, t) => sum + t * (t * t - 1), 0) / 2;
  const sd = Math.sqrt((n * (n + 1) * (2 * n + 1) - tieCorrection) / 24);
  const z = (statistic - mean) / sd;
  return { statistic, pValue: Math.min(1, 2 * normalSurvival(Math.abs(z))), method: "approx", n };
}

/** Two-sided exact p-value of W+ = `positiveRankSum`, as SciPy computes it. */
function exactPValue(n: number, positiveRankSum: number): number {
  const pmf = signedRankDistribution(n);
  // The distribution is symmetric about n(n+1)/4; at its centre the two-sided p-value is 1.
  if (positiveRankSum === Math.floor((pmf.length - 1) / 2)) return 1;
  let atMost = 0;
  for (let w = 0; w <= positiveRankSum; w++) atMost += pmf[w]!;
  let atLeast = 0;
  for (let w = positiveRankSum; w < pmf.length; w++) atLeast += pmf[w]!;
  return Math.min(1, Math.max(0, 2 * Math.min(atMost, atLeast)));
}

/**
 * P(W+ = w) for w = 0..n(n+1)/2 under the null: each rank 1..k joins the positive sum with
 * probability ½, so adding rank k mixes the previous distribution with itself shifted by k.
 */
function signedRankDistribution(n: number): number[] {
  let pmf = [1];
  for (let k = 1; k <= n; k++) {
    const next = new Array<number>((k * (k + 1)) / 2 + 1).fill(0);
    for (let w = 0; w < pmf.length; w++) {
      next[w]! += pmf[w]! * 0.5;
      next[w + k]! += pmf[w]! * 0.5;
    }
    pmf = next;
  }
  return pmf;
}
