import { PolicyInputError, requireFinite } from "./errors.js";

/** A trajectory with R > 0.5 is of the positive class when ARCO balances a batch. */
export const POSITIVE_OUTCOME = 0.5;

/**
 * ARCO's class balance for μ's decomposition loss: w = N/(2·n_pos) for a trajectory with
 * R > 0.5, N/(2·n_neg) otherwise, so successes and failures weigh alike however rare either is.
 * A batch of one class gets ½ each (the absent class's count is never used), as the sidecar's
 * `class_weights` does.
 *
 * @example
 * decompositionWeights([1, 0, 0, 0]); // [2, 0.667, 0.667, 0.667]
 */
export function decompositionWeights(outcomes: readonly number[]): number[] {
  const n = outcomes.length;
  outcomes.forEach((r, i) => requireFinite(`outcomes[${i}]`, r));
  const positives = outcomes.filter((r) => r > POSITIVE_OUTCOME).length;
  const negatives = n - positives;
  return outcomes.map((r) => (r > POSITIVE_OUTCOME ? n / (2 * positives) : n / (2 * negatives)));
}

/** What {@link decompositionLoss} returns. */
export interface DecompositionLoss {
  /** (1/N) Σ_τ w_τ (Σ_t s_τ,t − R_τ)². */
  readonly loss: number;
  /** ∂loss/∂s_τ,t, the same for every step of a trajectory: (2/N) w_τ (Σ_t s_τ,t − R_τ). */
  readonly gradients: number[];
  /** The class weights w_τ. */
  readonly weights: number[];
  /** Mean |Σ_t s_τ,t − R_τ| over the batch, unweighted: how far the scores are from summing to the outcome. */
  readonly meanAbsoluteGap: number;
}

/**
 * ARCO's decomposition loss on a batch: each trajectory's step scores s_τ,t (μ's mean over its K
 * criteria) should sum to its outcome R_τ, class-balanced (`decompositionWeights`) and divided by
 * the batch size as ARCO's trainer does. No step label enters: which redistribution of R over
 * the steps a model finds is its inductive bias. Returns the loss and its gradient with respect
 * to each step score (the same for every step of a trajectory), for a critic that trains on it.
 *
 * @example
 * decompositionLoss([[0.5, 0.5], [0.2]], [1, 0]);
 * // sums 1 and 0.2: loss = (1/2)(1·0² + 1·0.2²) = 0.02, gradients [0, 0.2]
 */
export function decompositionLoss(
  stepScores: readonly (readonly number[])[],
  outcomes: readonly number[],
): DecompositionLoss {
  if (stepScores.length === 0) throw new PolicyInputError("stepScores", "expected at least one trajectory, got none");
  if (outcomes.length !== stepScores.length)
    throw new PolicyInputError(
      "outcomes",
      `expected one outcome per trajectory (${stepScores.length}), got ${outcomes.length}`,
    );
  const weights = decompositionWeights(outcomes);
  const n = stepScores.length;
  let loss = 0;
  let gap = 0;
  const gradients = stepScores.map((steps, i) => {
    let sum = 0;
    steps.forEach((s, t) => {
      sum += requireFinite(`stepScores[${i}][${t}]`, s);
    });
    const error = sum - outcomes[i]!;
    loss += (weights[i]! * error * error) / n;
    gap += Math.abs(error) / n;
    return (2 * weights[i]! * error) / n;
  });
  return { loss, gradients, weights, meanAbsoluteGap: gap };
}
