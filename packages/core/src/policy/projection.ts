import { PolicyInputError, describeValue, requireFinite } from "./errors.js";

/** What {@link projectToOutcome} returns. */
export interface OutcomeProjection {
  /** clamp(x_t,k + shift, −1, 1), [step][criterion]; sums to K·outcome. */
  readonly projected: number[][];
  /** The uniform shift λ added to every score before clamping. */
  readonly shift: number;
}

// Bisection on a bracket of width ≤ 4 reaches double resolution in ~55 halvings; the cap only
// guarantees termination, and an exact linear step on the final free set finishes the job.
const MAX_BISECTIONS = 100;
const SUM_TOLERANCE = 1e-12;

/**
 * ARCO's warm-up projection of a teacher's step scores onto the trajectory outcome: finds one
 * shift λ (by bisection) such that Σ_t,k clamp(x_t,k + λ, −1, 1) = K·outcome, and returns the
 * clamped, shifted scores. `scores` is [T steps][K criteria], every value in [−1, 1]; the target
 * must be reachable, |K·outcome| ≤ T·K, i.e. |outcome| ≤ T.
 *
 * @example
 * // T = 2, K = 2, outcome 1: target 2; Σ(x + λ) = 0 + 4λ = 2 → λ = 0.5, nothing clamps
 * projectToOutcome([[0.5, -0.5], [0, 0]], 1);
 * // → { projected: [[1, 0], [0.5, 0.5]], shift: 0.5 }
 */
export function projectToOutcome(scores: readonly (readonly number[])[], outcome: number): OutcomeProjection {
  const values = readScores(scores);
  const steps = scores.length;
  const criteria = scores[0]!.length;
  requireFinite("outcome", outcome);
  const target = criteria * outcome;
  const reachable = steps * criteria;
  if (Math.abs(target) > reachable) {
    throw new PolicyInputError(
      "outcome",
      `K·outcome = ${target} cannot be reached: clamped scores of ${steps} steps × ${criteria} criteria sum to within ±${reachable} (got outcome ${outcome})`,
    );
  }

  let min = Infinity;
  let max = -Infinity;
  for (const x of values) {
    if (x < min) min = x;
    if (x > max) max = x;
  }
  // At lo every entry clamps to −1 (sum −T·K); at hi every entry clamps to +1 (sum T·K).
  let lo = -1 - max;
  let hi = 1 - min;
  let shift: number;
  if (target === -reachable) shift = lo;
  else if (target === reachable) shift = hi;
  else {
    shift = lo + (hi - lo) / 2;
    for (let i = 0; i < MAX_BISECTIONS; i++) {
      const error = clampedSum(values, shift) - target;
      if (Math.abs(error) <= SUM_TOLERANCE) break;
      if (error < 0) lo = shift;
      else hi = shift;
      const mid = lo + (hi - lo) / 2;
      if (mid === lo || mid === hi) break;
      shift = mid;
    }
    shift = solveOnFreeSet(values, shift, target);
  }

  const projected = scores.map((row) => row.map((x) => clamp(x + shift)));
  return { projected, shift };
}

/**
 * With the set of unclamped entries fixed at its state for `shift`, the sum is linear in λ and
 * can be solved exactly; keep that solution if it lands closer to the target.
 */
function solveOnFreeSet(values: Float64Array, shift: number, target: number): number {
  let clampedTotal = 0;
  let freeTotal = 0;
  let freeCount = 0;
  for (const x of values) {
    const y = x + shift;
    if (y >= 1) clampedTotal += 1;
    else if (y <= -1) clampedTotal -= 1;
    else {
      freeTotal += x;
      freeCount++;
    }
  }
  if (freeCount === 0) return shift;
  const exact = (target - clampedTotal - freeTotal) / freeCount;
  const before = Math.abs(clampedSum(values, shift) - target);
  const after = Math.abs(clampedSum(values, exact) - target);
  return after < before ? exact : shift;
}

function clampedSum(values: Float64Array, shift: number): number {
  let sum = 0;
  for (const x of values) sum += clamp(x + shift);
  return sum;
}

function clamp(y: number): number {
  return y < -1 ? -1 : y > 1 ? 1 : y;
}

function readScores(scores: unknown): Float64Array {
  if (!Array.isArray(scores)) {
    throw new PolicyInputError("scores", `expected an array of steps, got ${describeValue(scores)}`);
  }
  if (scores.length === 0) throw new PolicyInputError("scores", "expected at least one step, got none");
  const first: unknown = scores[0];
  const criteria = Array.isArray(first) ? first.length : 0;
  const values = new Float64Array(scores.length * criteria);
  for (let t = 0; t < scores.length; t++) {
    const row: unknown = scores[t];
    if (!Array.isArray(row)) {
      throw new PolicyInputError(`scores[${t}]`, `expected an array of criterion scores, got ${describeValue(row)}`);
    }
    if (row.length === 0) throw new PolicyInputError(`scores[${t}]`, "expected at least one criterion score, got none");
    if (row.length !== criteria) {
      throw new PolicyInputError(
        `scores[${t}]`,
        `expected ${criteria} criterion scores (as scores[0]), got ${row.length}`,
      );
    }
    for (let k = 0; k < criteria; k++) {
      const x: unknown = row[k];
      if (typeof x !== "number" || !(x >= -1 && x <= 1)) {
        throw new PolicyInputError(`scores[${t}][${k}]`, `expected a number in [-1, 1], got ${describeValue(x)}`);
      }
      values[t * criteria + k] = x;
    }
  }
  return values;
}
