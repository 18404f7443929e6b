import { requireFiniteValues } from "./input.js";

/*
 * Summary statistics. Each public function checks its input once (at least the values it needs,
 * all finite; otherwise a StatisticsInputError naming the argument) and then trusts the array.
 */

/**
 * Arithmetic mean.
 * @throws StatisticsInputError for no values or a value that is not a finite number.
 *
 * @example
 * mean([1, 2, 3, 4]); // 2.5
 */
export function mean(values: readonly number[]): number {
  requireFiniteValues("values", values);
  return unsafeMean(values);
}

/**
 * The middle value; for an even count, the mean of the two middle values (NumPy's `np.median`).
 * The values need not be sorted.
 * @throws StatisticsInputError for no values or a value that is not a finite number.
 *
 * @example
 * median([3, 1, 2]); // 2
 * median([4, 1, 3, 2]); // 2.5
 */
export function median(values: readonly number[]): number {
  requireFiniteValues("values", values);
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * The sample standard deviation: the square root of the squared deviations from the mean summed
 * and divided by n − 1 (Bessel's correction; NumPy's `np.std(values, ddof=1)`). Use it to say how
 * much repeated measurements (seeds, runs) scatter; it needs at least two values.
 * @throws StatisticsInputError for fewer than two values or a value that is not a finite number.
 *
 * @example
 * sampleStd([2, 4, 4, 4, 5, 5, 7, 9]); // ≈ 2.138
 */
export function sampleStd(values: readonly number[]): number {
  requireFiniteValues("values", values, 2);
  return Math.sqrt(squaredDeviations(values) / (values.length - 1));
}

/** A mean over repeated measurements with their scatter, as a table reports it. */
export interface SeedSummary {
  readonly mean: number;
  /** The sample standard deviation; 0 for a single value, which has no scatter to report. */
  readonly std: number;
  readonly n: number;
}

/**
 * The mean, sample standard deviation and count of repeated measurements (seeds, runs): what a
 * results table shows as "mean ± std". One value has std 0, not an error.
 * @throws StatisticsInputError for no values or a value that is not a finite number.
 *
 * @example
 * summarizeSeeds([0.5, 0.7, 0.6]); // { mean: 0.6, std: 0.1, n: 3 }
 */
export function summarizeSeeds(values: readonly number[]): SeedSummary {
  requireFiniteValues("values", values);
  const std = values.length > 1 ? Math.sqrt(squaredDeviations(values) / (values.length - 1)) : 0;
  return { mean: unsafeMean(values), std, n: values.length };
}

/**
 * The population standard deviation: the square root of the mean squared deviation from the
 * mean, dividing by n (NumPy's default `np.std(values)`). Use it to describe a whole set, such as
 * every rubric of a dataset.
 * @throws StatisticsInputError for no values or a value that is not a finite number.
 *
 * @example
 * populationStd([2, 4, 4, 4, 5, 5, 7, 9]); // 2
 */
export function populationStd(values: readonly number[]): number {
  requireFiniteValues("values", values);
  return Math.sqrt(squaredDeviations(values) / values.length);
}

/** The mean of values already checked by the caller. */
export function unsafeMean(values: readonly number[]): number {
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

function squaredDeviations(values: readonly number[]): number {
  const centre = unsafeMean(values);
  let sum = 0;
  for (const value of values) sum += (value - centre) ** 2;
  return sum;
}
