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

/** A batch of trajectories with one outcome each, refused naming `name` when it is not one; its class weights. */
function checkedWeights(name: string, trajectories: readonly unknown[], outcomes: readonly number[]): number[] {
  if (trajectories.length === 0) throw new PolicyInputError(name, "expected at least one trajectory, got none");
  if (outcomes.length !== trajectories.length)
    throw new PolicyInputError(
      "outcomes",
      `expected one outcome per trajectory (${trajectories.length}), got ${outcomes.length}`,
    );
  return decompositionWeights(outcomes);
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
  const weights = checkedWeights("stepScores", stepScores, outcomes);
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

/** What {@link valueLoss} returns. */
export interface ValueLoss {
  /** (1/N) Σ_τ w_τ (1/T_τ) Σ_t (v_τ,t − R_τ)². */
  readonly loss: number;
  /** ∂loss/∂v_τ,t = (2/N) w_τ (v_τ,t − R_τ) / T_τ, per step. */
  readonly gradients: number[][];
  /** The class weights w_τ (as {@link decompositionWeights}). */
  readonly weights: number[];
  /** Mean |v_τ,t − R_τ| over every step of the batch, unweighted. */
  readonly meanAbsoluteGap: number;
}

/**
 * A value's regression on outcomes (ours, beside ARCO's decomposition): every step's value
 * v_τ,t should predict its trajectory's outcome R_τ, class-balanced as the decomposition loss is,
 * each trajectory weighing the same whatever its length. Where the decomposition loss leaves
 * any split of R over the steps equally good, this one has a unique minimiser, E[R | what the
 * value reads], so the change of the value from step to step ({@link valueDifferences}) is a
 * credit the outcomes alone identify.
 *
 * @example
 * valueLoss([[0.5, 1], [0.2]], [1, 0]);
 * // loss = (1/2)(1·(0.25 + 0)/2 + 1·0.04) = 0.0825; gradients [[-0.25, 0], [0.2]]
 */
export function valueLoss(values: readonly (readonly number[])[], outcomes: readonly number[]): ValueLoss {
  const weights = checkedWeights("values", values, outcomes);
  const n = values.length;
  let loss = 0;
  let gap = 0;
  let steps = 0;
  const gradients = values.map((row, i) => {
    if (row.length === 0) throw new PolicyInputError(`values[${i}]`, "expected at least one step, got none");
    return row.map((v, t) => {
      const error = requireFinite(`values[${i}][${t}]`, v) - outcomes[i]!;
      loss += (weights[i]! * error * error) / (n * row.length);
      gap += Math.abs(error);
      steps++;
      return (2 * weights[i]! * error) / (n * row.length);
    });
  });
  return { loss, gradients, weights, meanAbsoluteGap: gap / steps };
}

/**
 * Each step's credit as the change of a value it brought (ours): `values[t]` is the value of the
 * state step t started from, V(h_t); s_t = V(h_{t+1}) − V(h_t), and the last step's
 * R − V(h_{T−1}), the outcome being the value of the end. Σ_t s_t = R − V(h_0): the outcome
 * less what the start already promised (the one-step advantage of actor-critic methods).
 *
 * @example
 * valueDifferences([0.5, 0.8], 1); // [0.3, 0.2]
 */
export function valueDifferences(values: readonly number[], outcome: number): number[] {
  requireFinite("outcome", outcome);
  values.forEach((v, t) => requireFinite(`values[${t}]`, v));
  return values.map((v, t) => (values[t + 1] ?? outcome) - v);
}
