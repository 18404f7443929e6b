import { createRng } from "../random/rng.js";
import { StatisticsInputError } from "./errors.js";
import { requireFiniteValues } from "./input.js";
import { unsafeMean } from "./summary.js";

/** Options of `bootstrapCI`. `seed` is required so every interval can be reproduced. */
export interface BootstrapOptions {
  /** Seed for the resampling stream (see `createRng`). */
  readonly seed: number | string;
  /** What to estimate from a sample; defaults to the mean. Called once per resample. */
  readonly statistic?: (sample: readonly number[]) => number;
  /** Number of bootstrap resamples; defaults to 10 000. */
  readonly resamples?: number;
  /** Coverage of the interval, strictly between 0 and 1; defaults to 0.95. */
  readonly confidence?: number;
}

/** A point estimate with its percentile-bootstrap confidence interval. */
export interface BootstrapInterval {
  /** The statistic on the original values. */
  readonly estimate: number;
  readonly lower: number;
  readonly upper: number;
  readonly confidence: number;
  readonly resamples: number;
}

/**
 * The q-quantile of already sorted values by linear interpolation between closest ranks,
 * as NumPy's default (`np.quantile(values, q)`, method "linear").
 *
 * @example
 * quantile([1, 2, 3, 4], 0.25); // 1.75
 */
export function quantile(sorted: readonly number[], q: number): number {
  requireFiniteValues("sorted", sorted);
  if (!(q >= 0 && q <= 1)) throw new StatisticsInputError(`q must be in [0, 1], got ${q}`);
  for (let i = 1; i < sorted.length; i++)
    if (sorted[i]! < sorted[i - 1]!)
      throw new StatisticsInputError(
        `sorted must be in ascending order, got sorted[${i}] = ${sorted[i]} < sorted[${i - 1}] = ${sorted[i - 1]}`,
      );
  return unsafeQuantile(sorted, q);
}

/**
 * Percentile bootstrap confidence interval: resample the values with replacement, compute the
 * statistic on each resample, and take the (1 − confidence)/2 and (1 + confidence)/2 quantiles.
 * Deterministic for a given seed.
 *
 * @example
 * const scores = [0.62, 0.71, 0.55, 0.8, 0.67, 0.74];
 * const { estimate, lower, upper } = bootstrapCI(scores, { seed: 1 });
 * // estimate = mean(scores); lower ≤ estimate ≤ upper
 * bootstrapCI(scores, { seed: "exp-3", statistic: (s) => quantile([...s].sort((a, b) => a - b), 0.5) });
 */
export function bootstrapCI(values: readonly number[], options: BootstrapOptions): BootstrapInterval {
  requireFiniteValues("values", values);
  const { seed, statistic = unsafeMean, resamples = 10_000, confidence = 0.95 } = options;
  if (seed === undefined) throw new StatisticsInputError("options.seed is required, got undefined");
  if (!Number.isSafeInteger(resamples) || resamples < 1)
    throw new StatisticsInputError(`options.resamples must be an integer ≥ 1, got ${resamples}`);
  if (!(confidence > 0 && confidence < 1))
    throw new StatisticsInputError(`options.confidence must be in (0, 1), got ${confidence}`);

  const estimate = statistic(values);
  if (!Number.isFinite(estimate))
    throw new StatisticsInputError(`options.statistic must return a finite number, got ${estimate} on values`);

  const rng = createRng(seed);
  const n = values.length;
  // One buffer reused for every resample: the statistic sees it read-only and returns a number.
  const sample = new Array<number>(n);
  const replicates = new Array<number>(resamples);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < n; i++) sample[i] = values[rng.int(n)]!;
    const value = statistic(sample);
    if (!Number.isFinite(value))
      throw new StatisticsInputError(`options.statistic must return a finite number, got ${value} on resample ${r}`);
    replicates[r] = value;
  }
  replicates.sort((a, b) => a - b);
  return {
    estimate,
    lower: unsafeQuantile(replicates, (1 - confidence) / 2),
    upper: unsafeQuantile(replicates, (1 + confidence) / 2),
    confidence,
    resamples,
  };
}

function unsafeQuantile(sorted: readonly number[], q: number): number {
  const position = q * (sorted.length - 1);
  const below = Math.floor(position);
  const above = Math.min(below + 1, sorted.length - 1);
  const fraction = position - below;
  const low = sorted[below]!;
  const high = sorted[above]!;
  // NumPy's _lerp: interpolate from the nearer end, so q = 1 returns the maximum exactly.
  return fraction >= 0.5 ? high - (high - low) * (1 - fraction) : low + (high - low) * fraction;
}
