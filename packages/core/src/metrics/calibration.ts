import { StatisticsInputError } from "./errors.js";
import { requireSameLength } from "./input.js";

/** One equal-width confidence bin; `accuracy` and `confidence` are null when the bin is empty. */
export interface CalibrationBin {
  readonly lower: number;
  readonly upper: number;
  readonly count: number;
  /** Fraction of correct predictions in the bin. */
  readonly accuracy: number | null;
  /** Mean stated confidence in the bin. */
  readonly confidence: number | null;
}

export interface CalibrationResult {
  /** Σ (count/n)·|accuracy − confidence| over the non-empty bins. */
  readonly ece: number;
  readonly bins: CalibrationBin[];
}

/**
 * Expected calibration error over `bins` equal-width bins of [0, 1]. Confidence c falls in bin
 * min(⌊c·bins⌋, bins − 1), so c = 1 joins the top bin.
 *
 * @example
 * expectedCalibrationError([0.9, 0.8, 0.3, 0.6], [true, true, false, 0], { bins: 2 });
 * // bins [0, ½): {0.3} accuracy 0; [½, 1]: {0.9, 0.8, 0.6} accuracy ⅔, confidence ≈ 0.767
 * // ece = ¼·|0 − 0.3| + ¾·|⅔ − 0.767| ≈ 0.15
 */
export function expectedCalibrationError(
  confidences: readonly number[],
  correct: readonly (boolean | 0 | 1)[],
  { bins = 10 }: { bins?: number } = {},
): CalibrationResult {
  requireSameLength("confidences", confidences, "correct", correct);
  if (confidences.length === 0) throw new StatisticsInputError("confidences must hold at least 1 value, got 0");
  if (!Number.isSafeInteger(bins) || bins < 1)
    throw new StatisticsInputError(`bins must be an integer ≥ 1, got ${bins}`);

  const counts = new Array<number>(bins).fill(0);
  const correctCounts = new Array<number>(bins).fill(0);
  const confidenceSums = new Array<number>(bins).fill(0);
  confidences.forEach((confidence, i) => {
    if (typeof confidence !== "number" || !(confidence >= 0 && confidence <= 1))
      throw new StatisticsInputError(`confidences[${i}] must be a number in [0, 1], got ${String(confidence)}`);
    const outcome = correct[i];
    if (outcome !== true && outcome !== false && outcome !== 0 && outcome !== 1)
      throw new StatisticsInputError(`correct[${i}] must be true, false, 0 or 1, got ${String(outcome)}`);
    const bin = Math.min(Math.floor(confidence * bins), bins - 1);
    counts[bin]! += 1;
    correctCounts[bin]! += outcome === true || outcome === 1 ? 1 : 0;
    confidenceSums[bin]! += confidence;
  });

  const n = confidences.length;
  let ece = 0;
  const report = counts.map((count, bin): CalibrationBin => {
    const lower = bin / bins;
    const upper = (bin + 1) / bins;
    if (count === 0) return { lower, upper, count, accuracy: null, confidence: null };
    const accuracy = correctCounts[bin]! / count;
    const confidence = confidenceSums[bin]! / count;
    ece += (count / n) * Math.abs(accuracy - confidence);
    return { lower, upper, count, accuracy, confidence };
  });
  return { ece, bins: report };
}
