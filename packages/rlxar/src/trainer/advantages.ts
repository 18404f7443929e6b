import { arcoActionBuckets, groupAdvantages, stepAdvantages } from "@rubric/core";
import { RlxarInputError } from "../errors.js";
import type { Episode } from "../rollout/rollout.js";

/**
 * The sparse phase's advantages (ARCO's GRPO-style groups, Search-R1's outcome reward): every
 * step of an episode gets R − mean R over the rollouts of the same task, with no std
 * normalisation (ARCO's `advantage_mode: none`). A task with one rollout in the batch gets 0
 * everywhere: it has no group to compare with. `rewards` overrides the episodes' own (RaR's
 * judge reward).
 *
 * @example
 * // two rollouts of q1 with rewards 1 and 0 → every step of the first +0.5, of the second −0.5
 * sparseAdvantages(episodes);
 */
export function sparseAdvantages(episodes: readonly Episode[], rewards?: readonly number[]): number[][] {
  if (rewards !== undefined && rewards.length !== episodes.length) {
    throw new RlxarInputError("rewards", `expected one reward per episode (${episodes.length}), got ${rewards.length}`);
  }
  const groups = new Map<string, number[]>();
  episodes.forEach((episode, i) => {
    const members = groups.get(episode.taskId);
    if (members === undefined) groups.set(episode.taskId, [i]);
    else members.push(i);
  });
  const advantage = new Array<number>(episodes.length).fill(0);
  for (const members of groups.values()) {
    const values = groupAdvantages(
      members.map((i) => rewards?.[i] ?? episodes[i]!.reward),
      { normalize: "none" },
    );
    members.forEach((i, j) => {
      advantage[i] = values[j]!;
    });
  }
  return episodes.map((episode, i) => episode.steps.map(() => advantage[i]!));
}

/** Options of {@link denseAdvantages}. */
export interface DenseAdvantageOptions {
  /** ARCO's `dense_reward_scale`: 0.5. */
  readonly scale?: number;
  /** Discount of the reward-to-go (ARCO: 1, undiscounted). */
  readonly gamma?: number;
  /**
   * Ours, beyond the paper: add R − mean R (over the batch) to the terminal step's advantage, so the
   * true outcome still reaches π in the dense phase and μ's scores only shape the earlier steps.
   */
  readonly outcomeAtTerminal?: boolean;
  /**
   * Ours, beyond the paper: `"per-step"` gives the terminal step a bucket per step index
   * (`terminal@0`, `terminal@1`, …) instead of ARCO's one `terminal` bucket (`"shared"`, the
   * default). With one bucket, after credited searches the terminal reward-to-go goes negative, so a
   * wrong Finish at the first step scores above the baseline and π learns to skip searching.
   */
  readonly terminalBuckets?: TerminalBuckets;
}

/** How the dense phase buckets terminal steps: ARCO's one bucket, or ours, one per step index. */
export type TerminalBuckets = "shared" | "per-step";

/**
 * The dense phase's advantages: G_t = Σ_{k≥t} s_k from μ's step scores, A_t = scale·(G_t −
 * b(bucket)), with ARCO's buckets labelled by action (the i-th search is `search_i`, every other
 * step and the last one `terminal`; a singleton bucket falls back to the batch mean). In ARCO the
 * true reward never enters here: it reaches π only through μ, which was regressed so that Σ s_t ≈ R.
 */
export function denseAdvantages(
  episodes: readonly Episode[],
  stepScores: readonly (readonly number[])[],
  options: DenseAdvantageOptions = {},
): number[][] {
  if (stepScores.length !== episodes.length) {
    throw new RlxarInputError(
      "stepScores",
      `expected one list per episode (${episodes.length}), got ${stepScores.length}`,
    );
  }
  const input = episodes.map((episode, e) => {
    const scores = stepScores[e]!;
    if (scores.length !== episode.steps.length) {
      throw new RlxarInputError(
        `stepScores[${e}]`,
        `expected ${episode.steps.length} scores (one per step of task ${JSON.stringify(episode.taskId)}), got ${scores.length}`,
      );
    }
    return { stepScores: scores, buckets: actionBuckets(episode, options.terminalBuckets) };
  });
  const advantages = stepAdvantages(input, { scale: options.scale, gamma: options.gamma });
  if (options.outcomeAtTerminal === true) {
    const mean = episodes.reduce((sum, episode) => sum + episode.reward, 0) / episodes.length;
    advantages.forEach((row, e) => {
      row[row.length - 1]! += episodes[e]!.reward - mean;
    });
  }
  return advantages;
}

/**
 * ARCO's bucket labels of an episode's steps: by what each step did (a tool call counts as a
 * search); with `"per-step"` terminal buckets, a terminal step's label carries its index.
 */
export function actionBuckets(episode: Episode, terminal: TerminalBuckets = "shared"): string[] {
  const labels = arcoActionBuckets(episode.steps.map((step) => step.transition.kind === "tool"));
  return terminal === "shared" ? labels : labels.map((label, t) => (label === "terminal" ? `terminal@${t}` : label));
}
