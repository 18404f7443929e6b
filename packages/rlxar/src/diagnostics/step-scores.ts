import type { Step } from "@rubric/arco-heads";
import { createRng, mean, quantile, rocAuc, shuffle, wilcoxonSignedRank } from "@rubric/core";
import { RlxarInputError } from "../errors.js";
import type { Episode } from "../rollout/rollout.js";
import type { StepCritic, StepRating } from "../critic/step-critic.js";
import { actionBuckets } from "../trainer/advantages.js";

function requireAligned(episodes: readonly Episode[], ratings: readonly (readonly StepRating[])[]): void {
  if (ratings.length !== episodes.length) {
    throw new RlxarInputError("ratings", `expected one list per episode (${episodes.length}), got ${ratings.length}`);
  }
  episodes.forEach((episode, e) => {
    if (ratings[e]!.length !== episode.steps.length) {
      throw new RlxarInputError(`ratings[${e}]`, `expected ${episode.steps.length} ratings, got ${ratings[e]!.length}`);
    }
  });
}

/** How well μ's step score singles out the searches that found evidence. */
export interface EvidenceAuc {
  /** AUC of s_t for "this search retrieved a supporting paragraph"; undefined when a class is missing. */
  readonly auc?: number;
  readonly positives: number;
  readonly negatives: number;
  /** Mean s_t of the searches that found a supporting paragraph, and of those that did not. */
  readonly meanPositive?: number;
  readonly meanNegative?: number;
}

/**
 * Does s_t single out good steps? Over every search step (kind `tool`) whose `info.supporting`
 * says whether it retrieved a gold paragraph (HotpotQA's environment does), the ROC AUC of μ's
 * s_t for that label. ARCO never uses these labels in training, so this checks its credit
 * assignment against ground truth it did not see.
 */
export function evidenceAuc(episodes: readonly Episode[], ratings: readonly (readonly StepRating[])[]): EvidenceAuc {
  requireAligned(episodes, ratings);
  const scores: number[] = [];
  const labels: boolean[] = [];
  episodes.forEach((episode, e) =>
    episode.steps.forEach((step, t) => {
      const supporting = (step.transition.info as { supporting?: unknown }).supporting;
      if (step.transition.kind !== "tool" || typeof supporting !== "boolean") return;
      scores.push(ratings[e]![t]!.s);
      labels.push(supporting);
    }),
  );
  const positive = scores.filter((_, i) => labels[i]);
  const negative = scores.filter((_, i) => !labels[i]);
  return {
    positives: positive.length,
    negatives: negative.length,
    ...(positive.length > 0 && negative.length > 0 ? { auc: rocAuc(scores, labels) } : {}),
    ...(positive.length > 0 ? { meanPositive: mean(positive) } : {}),
    ...(negative.length > 0 ? { meanNegative: mean(negative) } : {}),
  };
}

/** The distribution of s_t in one position bucket. */
export interface BucketScores {
  readonly count: number;
  readonly mean: number;
  readonly p10: number;
  readonly median: number;
  readonly p90: number;
}

/** μ's step scores per ARCO position bucket (`search_1..3`, `terminal`). */
export function bucketScores(
  episodes: readonly Episode[],
  ratings: readonly (readonly StepRating[])[],
): Record<string, BucketScores> {
  requireAligned(episodes, ratings);
  const byBucket = new Map<string, number[]>();
  episodes.forEach((episode, e) =>
    actionBuckets(episode).forEach((bucket, t) => {
      const list = byBucket.get(bucket) ?? [];
      list.push(ratings[e]![t]!.s);
      byBucket.set(bucket, list);
    }),
  );
  return Object.fromEntries(
    [...byBucket.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([bucket, values]) => {
        const sorted = [...values].sort((a, b) => a - b);
        return [
          bucket,
          {
            count: values.length,
            mean: mean(values),
            p10: quantile(sorted, 0.1),
            median: quantile(sorted, 0.5),
            p90: quantile(sorted, 0.9),
          },
        ];
      }),
  );
}

/** A sampled step's criteria, for reading what μ writes in each bucket. */
export interface CriteriaSample {
  readonly taskId: string;
  readonly bucket: string;
  readonly action: string;
  readonly criteria: readonly string[];
  readonly scores: readonly number[];
  readonly s: number;
}

/** Up to `perBucket` steps of each bucket, drawn with `seed`, with the criteria μ wrote and its scores. */
export function sampleCriteria(
  episodes: readonly Episode[],
  ratings: readonly (readonly StepRating[])[],
  perBucket: number,
  seed: number | string,
): CriteriaSample[] {
  requireAligned(episodes, ratings);
  const all: CriteriaSample[] = episodes.flatMap((episode, e) =>
    actionBuckets(episode).map((bucket, t) => ({
      taskId: episode.taskId,
      bucket,
      action: episode.steps[t]!.transition.actionText,
      criteria: ratings[e]![t]!.criteria,
      scores: ratings[e]![t]!.scores,
      s: ratings[e]![t]!.s,
    })),
  );
  const rng = createRng(seed).fork("criteria-samples");
  const buckets = [...new Set(all.map((sample) => sample.bucket))].sort();
  return buckets.flatMap((bucket) =>
    shuffle(
      all.filter((sample) => sample.bucket === bucket),
      rng.fork(bucket),
    ).slice(0, perBucket),
  );
}

/** The same prefix with a better and a worse action. */
export interface StepContrast {
  readonly better: Step;
  readonly worse: Step;
}

/** What μ's scores say of the contrasts. */
export interface ContrastResult {
  readonly pairs: number;
  /** Mean of s(better) − s(worse). */
  readonly meanDelta: number;
  /** Share of pairs where the better action scored higher. */
  readonly preferred: number;
  /** Two-sided Wilcoxon signed-rank p-value of the deltas (undefined when every delta is 0). */
  readonly p?: number;
  readonly deltas: readonly number[];
}

/**
 * Δs: μ rates each pair's two steps (the same question and prefix, a better and a worse action —
 * HotpotQA: a query for a supporting paragraph against one for a distractor) and the deltas are
 * summarised. A μ whose scores ignore the action gives Δs ≈ 0.
 */
export async function contrastScores(
  critic: Required<Pick<StepCritic, "rateSteps">>,
  pairs: readonly StepContrast[],
): Promise<ContrastResult> {
  if (pairs.length === 0) throw new RlxarInputError("pairs", "expected at least one pair");
  const rated = await critic.rateSteps(pairs.flatMap((pair) => [pair.better, pair.worse]));
  const deltas = pairs.map((_, i) => rated[2 * i]!.s - rated[2 * i + 1]!.s);
  const better = deltas.map((_, i) => rated[2 * i]!.s);
  const worse = deltas.map((_, i) => rated[2 * i + 1]!.s);
  let p: number | undefined;
  if (deltas.some((d) => d !== 0)) p = wilcoxonSignedRank(better, worse).pValue;
  return {
    pairs: pairs.length,
    meanDelta: mean(deltas),
    preferred: deltas.filter((d) => d > 0).length / deltas.length,
    ...(p === undefined ? {} : { p }),
    deltas,
  };
}
