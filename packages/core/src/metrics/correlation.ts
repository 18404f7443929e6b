import { requireFiniteValues, requireNotConstant, requireSameLength } from "./input.js";
import { rankWithTies } from "./rank.js";
import { normalSurvival, regularizedIncompleteBeta } from "./special.js";
import { unsafeMean } from "./summary.js";

/** A correlation coefficient with its two-sided p-value against "no association". */
export interface CorrelationResult {
  readonly statistic: number;
  readonly pValue: number;
}

/** Kendall's tau-b, with which p-value was used: the exact permutation null or the normal approximation. */
export interface KendallTauResult extends CorrelationResult {
  readonly method: "exact" | "approx";
}

/**
 * Pearson's r with the exact two-sided p-value under bivariate normality, as
 * `scipy.stats.pearsonr(x, y)`: r/2 + 1/2 ~ Beta(n/2 − 1, n/2 − 1). With two points r = ±1 and p = 1.
 *
 * @example
 * pearson([1, 2, 3, 4, 5], [2, 4, 5, 4, 5]); // { statistic: 0.7745966692414834, pValue: ≈0.1240270626576 }
 */
export function pearson(x: readonly number[], y: readonly number[]): CorrelationResult {
  checkPairs(x, y, 2);
  const n = x.length;
  if (n === 2) return { statistic: Math.sign(x[1]! - x[0]!) * Math.sign(y[1]! - y[0]!), pValue: 1 };
  const r = pearsonCoefficient(x, y);
  const shape = n / 2 - 1;
  // 2·P(R ≥ |r|) through the beta tail, which stays accurate as |r| → 1 (unlike 1 − CDF).
  const pValue = 2 * regularizedIncompleteBeta((1 - Math.abs(r)) / 2, shape, shape);
  return { statistic: r, pValue: Math.min(1, pValue) };
}

/**
 * Spearman's rank correlation (Pearson's r on average ranks) with the two-sided p-value of
 * `scipy.stats.spearmanr(x, y)`: t = ρ·√((n−2)/(1−ρ²)) against Student's t with n − 2 df.
 * Needs n ≥ 3 (with two points SciPy's p-value is NaN).
 *
 * @example
 * spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]); // { statistic: 0.8207826816681233, pValue: ≈0.0885870053135 }
 */
export function spearman(x: readonly number[], y: readonly number[]): CorrelationResult {
  checkPairs(x, y, 3);
  const rho = pearsonCoefficient(rankWithTies(x).ranks, rankWithTies(y).ranks);
  const degreesOfFreedom = x.length - 2;
  // P(|T| ≥ |t|) = I_{df/(df+t²)}(df/2, ½), and df/(df+t²) simplifies to 1 − ρ² = (1−ρ)(1+ρ).
  const pValue = regularizedIncompleteBeta((1 - rho) * (1 + rho), degreesOfFreedom / 2, 0.5);
  return { statistic: rho, pValue: Math.min(1, pValue) };
}

/**
 * Kendall's tau-b (ties in either variable corrected) with the two-sided p-value of
 * `scipy.stats.kendalltau(x, y)` (method "auto"): the exact null distribution when there are no
 * ties and n ≤ 33 (or the ranking is at most one swap from perfect), else the normal
 * approximation with tie-corrected variance.
 *
 * @example
 * kendallTau([12, 2, 1, 12, 2], [1, 4, 7, 1, 0]); // { statistic: -0.4714045207910316, pValue: ≈0.2827454599328, method: "approx" }
 */
export function kendallTau(x: readonly number[], y: readonly number[]): KendallTauResult {
  checkPairs(x, y, 2);
  const n = x.length;
  const totalPairs = (n * (n - 1)) / 2;
  const xTies = tieStatistics(rankWithTies(x).tieSizes);
  const yTies = tieStatistics(rankWithTies(y).tieSizes);
  const jointTiedPairs = pairsTiedInBoth(x, y);
  const discordant = discordantPairs(x, y);

  // Every pair is concordant, discordant, or tied in x or y; joint ties were counted in both.
  const concordantMinusDiscordant = totalPairs - xTies.pairs - yTies.pairs + jointTiedPairs - 2 * discordant;
  const tau = concordantMinusDiscordant / Math.sqrt(totalPairs - xTies.pairs) / Math.sqrt(totalPairs - yTies.pairs);
  const statistic = Math.min(1, Math.max(-1, tau));

  const hasTies = xTies.pairs > 0 || yTies.pairs > 0;
  if (!hasTies && (n <= 33 || Math.min(discordant, totalPairs - discordant) <= 1))
    return { statistic, pValue: kendallExactPValue(n, totalPairs - discordant), method: "exact" };

  const m = n * (n - 1);
  const variance =
    (m * (2 * n + 5) - xTies.v1 - yTies.v1) / 18 +
    (2 * xTies.pairs * yTies.pairs) / m +
    (xTies.v0 * yTies.v0) / (9 * m * (n - 2));
  const z = concordantMinusDiscordant / Math.sqrt(variance);
  return { statistic, pValue: 2 * normalSurvival(Math.abs(z)), method: "approx" };
}

function checkPairs(x: readonly number[], y: readonly number[], minLength: number): void {
  requireSameLength("x", x, "y", y);
  requireFiniteValues("x", x, minLength);
  requireFiniteValues("y", y, minLength);
  requireNotConstant("x", x);
  requireNotConstant("y", y);
}

/** r from centred vectors scaled to unit length first, as SciPy does, then clamped to [−1, 1]. */
function pearsonCoefficient(x: readonly number[], y: readonly number[]): number {
  const n = x.length;
  const xMean = unsafeMean(x);
  const yMean = unsafeMean(y);
  const xCentred = x.map((value) => value - xMean);
  const yCentred = y.map((value) => value - yMean);
  const xNorm = Math.sqrt(xCentred.reduce((sum, value) => sum + value * value, 0));
  const yNorm = Math.sqrt(yCentred.reduce((sum, value) => sum + value * value, 0));
  let r = 0;
  for (let i = 0; i < n; i++) r += (xCentred[i]! / xNorm) * (yCentred[i]! / yNorm);
  return Math.min(1, Math.max(-1, r));
}

/** Per-variable tie terms of the tau-b variance: Σt(t−1)/2, Σt(t−1)(t−2), Σt(t−1)(2t+5). */
function tieStatistics(tieSizes: readonly number[]): { pairs: number; v0: number; v1: number } {
  let pairs = 0;
  let v0 = 0;
  let v1 = 0;
  for (const t of tieSizes) {
    pairs += (t * (t - 1)) / 2;
    v0 += t * (t - 1) * (t - 2);
    v1 += t * (t - 1) * (2 * t + 5);
  }
  return { pairs, v0, v1 };
}

function pairsTiedInBoth(x: readonly number[], y: readonly number[]): number {
  const order = lexicographicOrder(x, y);
  let pairs = 0;
  let run = 1;
  for (let i = 1; i <= order.length; i++) {
    const previous = order[i - 1]!;
    const current = order[i];
    if (current !== undefined && x[current] === x[previous] && y[current] === y[previous]) run++;
    else {
      pairs += (run * (run - 1)) / 2;
      run = 1;
    }
  }
  return pairs;
}

/**
 * Pairs ordered one way by x and the other by y, in O(n log n): after sorting by (x, y) they are
 * exactly the strict inversions of the y sequence, counted by merge sort.
 */
function discordantPairs(x: readonly number[], y: readonly number[]): number {
  let values = lexicographicOrder(x, y).map((index) => y[index]!);
  let buffer = new Array<number>(values.length);
  let inversions = 0;
  for (let width = 1; width < values.length; width *= 2) {
    for (let left = 0; left < values.length; left += 2 * width) {
      const middle = Math.min(left + width, values.length);
      const right = Math.min(left + 2 * width, values.length);
      let i = left;
      let j = middle;
      let k = left;
      while (i < middle && j < right) {
        if (values[j]! < values[i]!) {
          inversions += middle - i;
          buffer[k++] = values[j++]!;
        } else buffer[k++] = values[i++]!;
      }
      while (i < middle) buffer[k++] = values[i++]!;
      while (j < right) buffer[k++] = values[j++]!;
    }
    [values, buffer] = [buffer, values];
  }
  return inversions;
}

function lexicographicOrder(x: readonly number[], y: readonly number[]): number[] {
  return x.map((_, index) => index).sort((a, b) => x[a]! - x[b]! || y[a]! - y[b]!);
}

/**
 * Two-sided exact p-value for `concordant` concordant pairs among n untied items, the way SciPy's
 * `_kendall_p_exact` does it: the number of permutations with at most c inversions (Kendall 1970),
 * doubled and divided by n!. Only reached for n ≤ 33 or c ≤ 1, so n! stays a finite double.
 */
function kendallExactPValue(n: number, concordant: number): number {
  const totalPairs = (n * (n - 1)) / 2;
  const c = Math.min(concordant, totalPairs - concordant);
  if (n <= 2) return 1;
  if (c === 0) return n < 171 ? 2 / factorial(n) : 0;
  if (c === 1) return n < 172 ? 2 / factorial(n - 1) : 0;
  if (4 * c === n * (n - 1)) return 1;
  // counts[k] = permutations of 1..j with exactly k inversions, truncated at k = c.
  let counts = new Array<number>(c + 1).fill(0);
  counts[0] = 1;
  counts[1] = 1;
  for (let j = 3; j <= n; j++) {
    const cumulative = new Array<number>(c + 1);
    let running = 0;
    for (let k = 0; k <= c; k++) cumulative[k] = running += counts[k]!;
    if (j <= c) for (let k = c; k >= j; k--) cumulative[k] = cumulative[k]! - cumulative[k - j]!;
    counts = cumulative;
  }
  const atMostC = counts.reduce((sum, count) => sum + count, 0);
  return Math.min(1, Math.max(0, (2 * atMostC) / factorial(n)));
}

function factorial(n: number): number {
  let result = 1;
  for (let i = 2; i <= n; i++) result *= i;
  return result;
}
