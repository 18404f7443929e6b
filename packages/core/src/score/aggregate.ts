import { CriterionErrorsError, ScoringError } from "./errors.js";
import { STATUS_NAMES, Status, type AlignedVerdicts, type FlatPlan, type StagedPlan } from "./plan.js";
import type { CriterionResult, ErrorPolicy, StageResult } from "./result.js";

/**
 * The numbers behind a score, before they are dressed as a result object. Kept separate so that
 * benchmarks and reweighting can run the arithmetic alone.
 */
export interface FlatTotals {
  /** Σ signed w·ν in weight units; ±Infinity only when the exact sum is beyond the double range. */
  readonly total: number;
  /** Σ w of the counted reward criteria, in weight units (Infinity likewise). */
  readonly max: number;
  /** The power of two every weight was divided by before summing (see {@link weightScale}). */
  readonly scale: number;
  /** `total / scale` and `max / scale`: finite whatever the weights, so their ratios are too. */
  readonly scaledTotal: number;
  readonly scaledMax: number;
}

// What a verdict contributes under the error policy: its fraction, or one of these markers.
const LEFT_OUT = -1;
const UNUSABLE = -2;

function usableFraction(aligned: AlignedVerdicts, i: number, errorsAs: ErrorPolicy): number {
  const status = aligned.statuses[i]!;
  if (status === Status.Ok) return aligned.fractions[i]!;
  if (status === Status.Skipped || errorsAs === "renormalize") return LEFT_OUT;
  return errorsAs === "zero" ? 0 : UNUSABLE;
}

function fault(index: number, plan: FlatPlan | StagedPlan, aligned: AlignedVerdicts) {
  const status = aligned.statuses[index]!;
  return {
    criterionId: plan.ids[index]!,
    reason: status === Status.Missing ? "no verdict" : `verifier error: ${aligned.errors.get(index) ?? "unknown"}`,
  };
}

/**
 * A power of two near the largest of `weights[from..to)` (only those with `signs[i] === 1` when
 * signs are given), to divide the weights by before summing. Each weight may be finite and their
 * sum not (1e308 + 1e308); divided by this they are at most 2 each, so sums stay finite and ratios
 * of them exact. Dividing by a power of two is exact, so ordinary weights score to the same bits
 * as without it. Weights up to 1 cannot overflow a sum of any length a rubric has, and are left
 * alone so that tiny ones do not become subnormal; weights near the smallest doubles are scaled up.
 */
export function weightScale(weights: readonly number[], from: number, to: number, signs?: Int8Array): number {
  let largest = 0;
  let largestAny = 0;
  for (let i = from; i < to; i++) {
    const w = weights[i]!;
    if (w > largest && (signs === undefined || signs[i] === 1)) largest = w;
    if (w > largestAny) largestAny = w;
  }
  // log2(Number.MAX_VALUE) rounds to 1024, and 2 ** 1024 is Infinity.
  if (largest > 1) return 2 ** Math.min(1023, Math.floor(Math.log2(largest)));
  // Weights near the smallest doubles lose their low bits when multiplied by a verdict's fraction
  // (5e-324 × 0.5 rounds to 0): when every weight, penalties included, is that small, all are
  // scaled up to near 1 first, again by an exact power of two (2 ** −1074, the smallest
  // subnormal, is exact); a larger penalty beside them would overflow, so then nothing is scaled.
  if (largestAny > 0 && largestAny < TINY_WEIGHT) return 2 ** Math.max(-1074, Math.floor(Math.log2(largestAny)));
  return 1;
}

/** Below this, w × fraction may fall into the subnormal range and lose bits. */
const TINY_WEIGHT = 2 ** -900;

/** Flat weighted aggregation (HealthBench-style penalties). */
export function aggregateFlat(
  plan: FlatPlan,
  aligned: AlignedVerdicts,
  weights: readonly number[],
  errorsAs: ErrorPolicy,
): FlatTotals {
  const n = plan.ids.length;
  // Scaled by the reward weights, which make the denominator: a penalty far beyond all of them
  // may still drive the total to −Infinity, which is where its true value lies, clipped to 0.
  const scale = weightScale(weights, 0, n, plan.signs);
  let total = 0;
  let max = 0;
  let failures: ReturnType<typeof fault>[] | undefined;
  for (let i = 0; i < n; i++) {
    const fraction = usableFraction(aligned, i, errorsAs);
    if (fraction === LEFT_OUT) continue;
    if (fraction === UNUSABLE) {
      (failures ??= []).push(fault(i, plan, aligned));
      continue;
    }
    const w = weights[i]! / scale;
    if (plan.signs[i] === 1) {
      total += w * fraction;
      max += w;
    } else total -= w * fraction;
  }
  if (failures) throw criterionErrors(failures, []);
  if (!(max > 0))
    throw new ScoringError(
      "nothing left to score: no counted reward criterion has weight > 0 (all were skipped, errored or weightless)",
    );
  return { total: total * scale, max: max * scale, scale, scaledTotal: total, scaledMax: max };
}

export interface StagedTotals {
  readonly total: number;
  readonly stages: StageResult[];
  readonly stoppedAt: string | null;
  readonly failedGate: string | null;
  /** Criteria before this index belong to stages that were reached. */
  readonly reachedEnd: number;
}

/**
 * The reference's staged algorithm: per stage, Σ clamp(fraction·w, 0, w) capped at max_points,
 * passed = score ≥ min_score_to_pass; a failed required stage applies its action unless gates are
 * ignored. Additions happen in the reference's order so totals agree to the last bit.
 */
export function aggregateStaged(
  plan: StagedPlan,
  aligned: AlignedVerdicts,
  weights: readonly number[],
  errorsAs: ErrorPolicy,
  ignoreGates: boolean,
): StagedTotals {
  const stages: StageResult[] = [];
  let total = 0;
  let failedGate: string | null = null;
  for (let s = 0; s < plan.stages.length; s++) {
    const stage = plan.stages[s]!;
    const from = plan.stageStart[s]!;
    const to = plan.stageStart[s + 1]!;
    let raw = 0;
    // The weight sums only ever appear as a ratio, so they are kept in units of `scale`.
    const scale = weightScale(weights, from, to);
    let allWeight = 0;
    let countedWeight = 0;
    let failures: ReturnType<typeof fault>[] | undefined;
    for (let i = from; i < to; i++) {
      const w = weights[i]!;
      allWeight += w / scale;
      const fraction = usableFraction(aligned, i, errorsAs);
      if (fraction === LEFT_OUT) continue;
      if (fraction === UNUSABLE) {
        (failures ??= []).push(fault(i, plan, aligned));
        continue;
      }
      countedWeight += w / scale;
      const points = fraction * w;
      raw += points < 0 ? 0 : points > w ? w : points;
    }
    if (failures) throw criterionErrors(failures, stages, stage.name);
    if (countedWeight !== allWeight) {
      if (!(countedWeight > 0))
        throw new ScoringError(
          `stage ${JSON.stringify(stage.name)}: every weighted rule was skipped or errored; nothing to renormalise`,
        );
      // The reference's order of operations, unless the product overflows: then the ratio first.
      // An overflowed `raw` itself is right as it is: its true value is past the max_points cap.
      const product = raw * allWeight;
      raw = Number.isFinite(product) ? product / countedWeight : raw * (allWeight / countedWeight);
    }
    const score = raw < stage.maxPoints ? raw : stage.maxPoints;
    const passed = score >= stage.minToPass;
    stages.push({
      index: s,
      name: stage.name,
      score,
      maxPoints: stage.maxPoints,
      minScoreToPass: stage.minToPass,
      passed,
      required: stage.required,
      onFailureAction: stage.action,
    });
    if (!passed && stage.required) {
      failedGate ??= stage.name;
      if (!ignoreGates && stage.action === "zero_category") {
        // Earlier points are discarded: the category is worth on_failure_score.
        return {
          total: cap(stage.onFailureScore, plan.maxTotal),
          stages,
          stoppedAt: stage.name,
          failedGate,
          reachedEnd: to,
        };
      }
      if (!ignoreGates && stage.action === "skip_remaining") {
        return { total: cap(total, plan.maxTotal), stages, stoppedAt: stage.name, failedGate, reachedEnd: to };
      }
    }
    total += score;
  }
  return { total: cap(total, plan.maxTotal), stages, stoppedAt: null, failedGate, reachedEnd: plan.ids.length };
}

function cap(total: number, max: number): number {
  return total < max ? total : max;
}

function criterionErrors(
  failures: { criterionId: string; reason: string }[],
  partial: StageResult[],
  stageName?: string,
) {
  const where = stageName === undefined ? "" : ` in stage ${JSON.stringify(stageName)}`;
  const list = failures.map((f) => `${f.criterionId} (${f.reason})`).join(", ");
  return new CriterionErrorsError(
    `cannot score${where}: ${failures.length} criterion verdict(s) unusable: ${list}. ` +
      `Pass errorsAs: "zero" or errorsAs: "renormalize" to score anyway.`,
    failures,
    partial,
  );
}

/**
 * Per-criterion results, shared by both forms. A criterion counted when its stage was reached
 * (`reachedEnd`) and the error policy let its verdict in.
 */
export function criterionResults(
  plan: FlatPlan | StagedPlan,
  aligned: AlignedVerdicts,
  weights: readonly number[],
  errorsAs: ErrorPolicy,
  reachedEnd: number,
  contribution: (index: number, fraction: number) => number,
): CriterionResult[] {
  const out: CriterionResult[] = new Array(plan.ids.length);
  for (let i = 0; i < plan.ids.length; i++) {
    const status = aligned.statuses[i]!;
    const fraction = status === Status.Ok ? aligned.fractions[i]! : null;
    const isCounted = i < reachedEnd && usableFraction(aligned, i, errorsAs) >= 0;
    const result = {
      criterionId: plan.ids[i]!,
      weight: weights[i]!,
      status: STATUS_NAMES[status]!,
      fraction,
      contribution: isCounted ? contribution(i, fraction ?? 0) : null,
      counted: isCounted,
    };
    // Built without spreads: this runs for every criterion of every reweighted output.
    const error = status === Status.Error ? aligned.errors.get(i) : undefined;
    out[i] = error === undefined ? result : { ...result, error };
  }
  return out;
}
