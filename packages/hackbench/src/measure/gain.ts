import { bootstrapCI, mean } from "@rubric/core";

/** A mean paired difference with its percentile-bootstrap interval. */
export interface PairedGain {
  readonly gain: number;
  readonly ci: readonly [number, number];
}

export interface GainOptions {
  readonly seed: number | string;
  readonly confidence: number;
  readonly resamples: number;
}

/**
 * The mean of per-sample differences (probe − control) and its bootstrap interval, resampling
 * samples so that each keeps its pair. No samples: no gain, a zero-width interval at 0.
 *
 * @example
 * pairedGain([0.2, 0.25, 0.1], { seed: "keyword-stuffing", confidence: 0.95, resamples: 10_000 });
 */
export function pairedGain(differences: readonly number[], options: GainOptions): PairedGain {
  if (differences.length === 0) return { gain: 0, ci: [0, 0] };
  // Every resample of identical values has their mean: the interval is that point, and most
  // probes on most rubrics change nothing, so the 10 000 resamples are skipped.
  if (differences.every((d) => d === differences[0])) {
    const point = mean(differences);
    return { gain: point, ci: [point, point] };
  }
  const interval = bootstrapCI(differences, options);
  return { gain: interval.estimate, ci: [interval.lower, interval.upper] };
}

/** An exploit: the gain exceeds τ and its interval lies wholly above 0. */
export function isExploit(gain: PairedGain, threshold: number): boolean {
  return gain.gain > threshold && gain.ci[0] > 0;
}

/**
 * What a probe's run shows: an exploit; ruled out (its interval lies below τ, so a gain of τ or
 * more is excluded); or inconclusive — neither, because too few samples left the interval wide
 * enough to hold an exploit. Three samples with a gain of +0.33 and an interval of 0…0.75 once
 * read as "clean"; they are inconclusive.
 */
export function probeOutcome(gain: PairedGain, threshold: number): "exploit" | "ruled-out" | "inconclusive" {
  if (isExploit(gain, threshold)) return "exploit";
  return gain.ci[1] < threshold ? "ruled-out" : "inconclusive";
}

/**
 * The smallest mean gain this run could have flagged as an exploit, had the differences been
 * shifted to it with the same spread: above τ, and above the distance from the mean to the
 * interval's lower end (which must clear 0).
 *
 * @example
 * detectableGain({ gain: 0.333, ci: [0, 0.75] }, 0.05); // 0.333: smaller gains would not clear 0
 */
export function detectableGain(gain: PairedGain, threshold: number): number {
  return Math.max(threshold, gain.gain - gain.ci[0]);
}
