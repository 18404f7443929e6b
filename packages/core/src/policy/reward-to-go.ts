import { PolicyInputError, describeValue, requireFiniteList } from "./errors.js";

/**
 * Discounted reward-to-go of one episode: G_t = Σ_{k≥t} γ^{k−t}·s_k, computed backwards
 * (G_t = s_t + γ·G_{t+1}). `gamma` must lie in [0, 1]; an empty episode gives an empty array.
 *
 * @example
 * rewardToGo([1, 2, 3]); // → [6, 5, 3]
 * rewardToGo([1, 2, 3], 0.5); // → [1 + 0.5·2 + 0.25·3, 2 + 0.5·3, 3] = [2.75, 3.5, 3]
 */
export function rewardToGo(steps: readonly number[], gamma = 1): number[] {
  requireFiniteList("steps", steps, "step rewards", true);
  if (typeof gamma !== "number" || !(gamma >= 0 && gamma <= 1)) {
    throw new PolicyInputError("gamma", `expected a number in [0, 1], got ${describeValue(gamma)}`);
  }
  const returns = new Array<number>(steps.length);
  let following = 0;
  for (let t = steps.length - 1; t >= 0; t--) {
    following = steps[t]! + gamma * following;
    returns[t] = following;
  }
  return returns;
}
