import { arcoStepBucket, bucketBaseline } from "./baseline.js";
import { PolicyInputError, describeValue, requireFiniteList, requireInteger, requireNonNegative } from "./errors.js";
import { rewardToGo } from "./reward-to-go.js";

/** Options of {@link groupAdvantages}. */
export interface GroupAdvantageOptions {
  /** "std": (r − mean)/(std + eps), GRPO/GSPO; "none": r − mean, Dr.GRPO. Default "std". */
  readonly normalize?: "std" | "none";
  /** Added to the standard deviation (≥ 0). Default 1e-4, ARCANE's value. */
  readonly eps?: number;
  /** Delta degrees of freedom of the std: 0 population (default), 1 sample. Must be < group size. */
  readonly ddof?: number;
}

/**
 * Group-relative advantages of one group of K rollouts of the same prompt:
 * A_k = (r_k − mean r)/(std r + eps), or r_k − mean r with `normalize: "none"`.
 * A group whose rewards are all identical carries no signal and gets all-zero advantages
 * (even with eps = 0, where the formula would divide 0 by 0).
 *
 * @example
 * groupAdvantages([1, 0]); // mean 0.5, std 0.5 → [0.5/0.5001, −0.5/0.5001] ≈ [0.9998, −0.9998]
 * groupAdvantages([1, 0, 2], { normalize: "none" }); // → [0, −1, 1]
 */
export function groupAdvantages(rewards: readonly number[], options: GroupAdvantageOptions = {}): number[] {
  requireFiniteList("rewards", rewards, "rewards");
  const { normalize = "std", eps = 1e-4, ddof = 0 } = options;
  if (normalize !== "std" && normalize !== "none") {
    throw new PolicyInputError("normalize", `expected "std" or "none", got ${describeValue(normalize)}`);
  }
  requireNonNegative("eps", eps);
  const n = rewards.length;
  requireInteger("ddof", ddof, 0, n - 1);

  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const r of rewards) {
    sum += r;
    if (r < min) min = r;
    if (r > max) max = r;
  }
  if (min === max) return new Array<number>(n).fill(0);
  const mean = sum / n;
  const centred = rewards.map((r) => r - mean);
  if (normalize === "none") return centred;

  let squares = 0;
  for (const d of centred) squares += d * d;
  const denominator = Math.sqrt(squares / (n - ddof)) + eps;
  return centred.map((d) => d / denominator);
}

/** Options of {@link stepAdvantages}. */
export interface StepAdvantageOptions {
  /** Multiplies every advantage (≥ 0). Default 0.5, ARCO's value. */
  readonly scale?: number;
  /** Discount of the reward-to-go, in [0, 1]. Default 1. */
  readonly gamma?: number;
}

/**
 * ARCO's dense-phase step advantages for a batch of episodes: G_t = rewardToGo(stepScores, γ),
 * A_t = scale·(G_t − b(bucket(t))), where the baseline b is the mean G over all steps of the batch
 * in the same position bucket, or the batch mean for a singleton bucket. An episode's `buckets`
 * label its steps (ARCO's code labels by action: {@link arcoActionBuckets}); without them the
 * label is the step's position ({@link arcoStepBucket}).
 *
 * @example
 * // G = [3, 2] and [4]; buckets search_1 {3}, terminal {2, 4}; batch mean 3
 * // b = [3, 3] and [3] → A = 0.5·[0, −1] and 0.5·[1]
 * stepAdvantages([{ stepScores: [1, 2] }, { stepScores: [4] }]); // → [[0, -0.5], [0.5]]
 */
export function stepAdvantages(
  episodes: readonly { readonly stepScores: readonly number[]; readonly buckets?: readonly string[] }[],
  options: StepAdvantageOptions = {},
): number[][] {
  const { scale = 0.5, gamma = 1 } = options;
  requireNonNegative("scale", scale);
  if (!Array.isArray(episodes)) {
    throw new PolicyInputError("episodes", `expected an array of episodes, got ${describeValue(episodes)}`);
  }
  if (episodes.length === 0) throw new PolicyInputError("episodes", "expected at least one episode, got none");

  const returns: number[][] = [];
  const flatReturns: number[] = [];
  const flatBuckets: string[] = [];
  episodes.forEach((episode, e) => {
    const scores: unknown = (episode as { stepScores?: unknown } | null)?.stepScores;
    requireFiniteList(`episodes[${e}].stepScores`, scores, "step scores");
    const G = rewardToGo(scores as readonly number[], gamma);
    const labels: unknown = (episode as { buckets?: unknown }).buckets;
    if (labels !== undefined && (!Array.isArray(labels) || labels.length !== G.length)) {
      throw new PolicyInputError(
        `episodes[${e}].buckets`,
        `expected ${G.length} labels (one per step), got ${describeValue(labels)}`,
      );
    }
    returns.push(G);
    G.forEach((g, t) => {
      flatReturns.push(g);
      flatBuckets.push(labels === undefined ? arcoStepBucket(t, G.length) : (labels[t] as string));
    });
  });

  const baselines = bucketBaseline(flatReturns, flatBuckets);
  let i = 0;
  return returns.map((G) => G.map((g) => scale * (g - baselines[i++]!)));
}
