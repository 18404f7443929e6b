import { StatisticsInputError } from "./errors.js";
import { requireFiniteValues, requireSameLength } from "./input.js";
import { regularizedIncompleteBeta } from "./special.js";

/** Outcome of a two-sided paired t-test. */
export interface PairedTTestResult {
  /** t = mean(d) / (sd(d) / √n), d = x − y; ±Infinity when every difference is the same non-zero value. */
  readonly statistic: number;
  readonly pValue: number;
  /** Degrees of freedom, n − 1. */
  readonly df: number;
  readonly meanDifference: number;
}

/**
 * Two-sided paired t-test on the differences x − y, as `scipy.stats.ttest_rel(x, y)`: the test
 * to use when each pair is one unit of replication (a training seed), where tests over the
 * pairs' members (questions within a seed) would count correlated outcomes as independent.
 * Needs two pairs at least and differences that are not all 0 (then there is nothing to test).
 *
 * @example
 * pairedTTest([1, 2, 3, 4, 5], [2, 2, 5, 4, 8]); // { statistic: ≈−2.058, pValue: ≈0.1087, df: 4, meanDifference: −1.2 }
 */
export function pairedTTest(x: readonly number[], y: readonly number[]): PairedTTestResult {
  requireSameLength("x", x, "y", y);
  requireFiniteValues("x", x, 2);
  requireFiniteValues("y", y, 2);
  const n = x.length;
  const differences = x.map((value, i) => value - y[i]!);
  const meanDifference = differences.reduce((sum, d) => sum + d, 0) / n;
  const variance = differences.reduce((sum, d) => sum + (d - meanDifference) ** 2, 0) / (n - 1);
  const df = n - 1;
  if (variance === 0) {
    if (meanDifference === 0)
      throw new StatisticsInputError(`x − y must not be all 0: got ${n} equal pairs, nothing to test`);
    return { statistic: meanDifference > 0 ? Infinity : -Infinity, pValue: 0, df, meanDifference };
  }
  const statistic = meanDifference / Math.sqrt(variance / n);
  // P(|T| ≥ |t|) for Student's t with df degrees of freedom.
  const pValue = regularizedIncompleteBeta(df / (df + statistic * statistic), df / 2, 0.5);
  return { statistic, pValue, df, meanDifference };
}
