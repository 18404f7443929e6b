import { projectToOutcome } from "@rubric/core";
import { ArcoInputError } from "../errors.js";

/** ARCO's μ-SFT filter: keep a trajectory whose teacher scores decompose R to within this. */
export const DEFAULT_DECOMPOSITION_TOLERANCE = 0.05;

/**
 * A teacher's raw step scores ([T steps][K criteria]) made to decompose the outcome, as ARCO's
 * warm-up does: every score clamped to [−1, 1], then one uniform shift λ (core's
 * `projectToOutcome`, bisection plus an exact last step) so that Σ_t,k = K·R, i.e.
 * Σ_t mean_k = R. Teachers do overshoot the range, which `projectToOutcome` itself refuses, hence
 * the clamp first.
 *
 * @example
 * // clamp → [[1, 0], [0, -0.5]]; K·R = 2 = 1 + 3λ − 0.5 on the three free entries → λ = 0.5
 * projectTeacherScores([[1.5, 0], [0, -0.5]], 1);
 * // → { projected: [[1, 0.5], [0.5, 0]], shift: 0.5 }
 */
export function projectTeacherScores(
  scores: readonly (readonly number[])[],
  outcome: number,
): { projected: number[][]; shift: number } {
  const clamped = scores.map((row, t) =>
    row.map((x, k) => {
      if (typeof x !== "number" || Number.isNaN(x)) {
        throw new ArcoInputError(`scores[${t}][${k}]`, `expected a number, got ${String(x)}`);
      }
      return Math.min(1, Math.max(-1, x));
    }),
  );
  return projectToOutcome(clamped, outcome);
}

/**
 * |Σ_t mean_k scores_t,k − R|: how far a trajectory's step scores are from decomposing its outcome.
 *
 * @example
 * decompositionGap([[1, 0], [0, 0]], 1); // |0.5 + 0 − 1| = 0.5
 */
export function decompositionGap(scores: readonly (readonly number[])[], outcome: number): number {
  let total = 0;
  scores.forEach((row, t) => {
    if (row.length === 0) throw new ArcoInputError(`scores[${t}]`, "expected at least one score, got none");
    let sum = 0;
    for (const x of row) sum += x;
    total += sum / row.length;
  });
  return Math.abs(total - outcome);
}

/**
 * Whether the scores decompose the outcome closely enough for μ-SFT: ARCO's
 * |Σ_t mean − R| < 0.05 (strict, as ARCO's filter).
 *
 * @example
 * decomposesOutcome([[0.5, 0.5], [0.5, 0.5]], 1); // true
 * decomposesOutcome([[0.5, 0.5], [0.6, 0.5]], 1); // false (gap 0.05)
 */
export function decomposesOutcome(
  scores: readonly (readonly number[])[],
  outcome: number,
  tolerance: number = DEFAULT_DECOMPOSITION_TOLERANCE,
): boolean {
  return decompositionGap(scores, outcome) < tolerance;
}
