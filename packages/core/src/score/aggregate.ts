import { CriterionErrorsError, ScoringError } from "./errors.js";
import { STATUS_NAMES, Status, type AlignedVerdicts, type FlatPlan, type StagedPlan } from "./plan.js";
import type { CriterionResult, ErrorPolicy, StageResult } from "./result.js";

/**
 * The numbers behind a score, before they are dressed as a result object. Kept separate so that
 * benchmarks and reweighting can run the arithmetic alone.
 */
export interface FlatTotals {
  readonly total: number;
  readonly max: number;
  readonly counted: Uint8Array;
}

function fault(index: number, plan: FlatPlan | StagedPlan, aligned: AlignedVerdicts) {
  const status = aligned.statuses[index]!;
  return {
    criterionId: plan.ids[index]!,
    reason: status === Status.Missing ? "no verdict" : `verifier error: ${aligned.errors.get(index) ?? "unknown"}`,
  };
}

/** Flat weighted aggregation (HealthBench-style penalties). */
export function aggregateFlat(plan: FlatPlan, aligned: AlignedVerdicts, weights: Float64Array, errorsAs: ErrorPolicy): FlatTotals {
  const { fractions, statuses } = aligned;
  const n = plan.ids.length;
  const counted = new Uint8Array(n);
  let total = 0;
  let max = 0;
  let failures: ReturnType<typeof fault>[] | undefined;
  for (let i = 0; i < n; i++) {
    const status = statuses[i]!;
    let fraction: number;
    if (status === Status.Ok) fraction = fractions[i]!;
    else if (status === Status.Skipped) continue;
    else if (errorsAs === "zero") fraction = 0;
    else if (errorsAs === "renormalize") continue;
    else {
      (failures ??= []).push(fault(i, plan, aligned));
      continue;
    }
    const w = weights[i]!;
    counted[i] = 1;
    if (plan.signs[i] === 1) {
      total += w * fraction;
      max += w;
    } else total -= w * fraction;
  }
  if (failures) throw criterionErrors(failures, []);
  if (!(max > 0))
    throw new ScoringError("nothing left to score: no counted reward criterion has weight > 0 (all were skipped, errored or weightless)");
  return { total, max, counted };
}

export interface StagedTotals {
  readonly total: number;
  readonly stages: StageResult[];
  readonly stoppedAt: string | null;
  readonly failedGate: string | null;
  /** 1 where the criterion's stage was reached and it counted. */
  readonly counted: Uint8Array;
}

/**
 * The reference's staged algorithm: per stage, Σ clamp(fraction·w, 0, w) capped at max_points,
 * passed = score ≥ min_score_to_pass; a failed required stage applies its action unless gates are
 * ignored. Additions happen in the reference's order so totals agree to the last bit.
 */
export function aggregateStaged(
  plan: StagedPlan,
  aligned: AlignedVerdicts,
  weights: Float64Array,
  errorsAs: ErrorPolicy,
  ignoreGates: boolean,
): StagedTotals {
  const { fractions, statuses } = aligned;
  const counted = new Uint8Array(plan.ids.length);
  const stages: StageResult[] = [];
  let total = 0;
  let failedGate: string | null = null;
  for (let s = 0; s < plan.stages.length; s++) {
    const stage = plan.stages[s]!;
    const from = plan.stageStart[s]!;
    const to = plan.stageStart[s + 1]!;
    let raw = 0;
    let allWeight = 0;
    let countedWeight = 0;
    let failures: ReturnType<typeof fault>[] | undefined;
    for (let i = from; i < to; i++) {
      const w = weights[i]!;
      allWeight += w;
      const status = statuses[i]!;
      let fraction: number;
      if (status === Status.Ok) fraction = fractions[i]!;
      else if (status === Status.Skipped) continue;
      else if (errorsAs === "zero") fraction = 0;
      else if (errorsAs === "renormalize") continue;
      else {
        (failures ??= []).push(fault(i, plan, aligned));
        continue;
      }
      counted[i] = 1;
      countedWeight += w;
      const points = fraction * w;
      raw += points < 0 ? 0 : points > w ? w : points;
    }
    if (failures) throw criterionErrors(failures, stages, stage.name);
    if (countedWeight !== allWeight) {
      if (!(countedWeight > 0))
        throw new ScoringError(`stage ${JSON.stringify(stage.name)}: every weighted rule was skipped or errored; nothing to renormalise`);
      raw = (raw * allWeight) / countedWeight;
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
        return { total: cap(stage.onFailureScore, plan.maxTotal), stages, stoppedAt: stage.name, failedGate, counted };
      }
      if (!ignoreGates && stage.action === "skip_remaining") {
        return { total: cap(total, plan.maxTotal), stages, stoppedAt: stage.name, failedGate, counted };
      }
    }
    total += score;
  }
  return { total: cap(total, plan.maxTotal), stages, stoppedAt: null, failedGate, counted };
}

function cap(total: number, max: number): number {
  return total < max ? total : max;
}

function criterionErrors(failures: { criterionId: string; reason: string }[], partial: StageResult[], stageName?: string) {
  const where = stageName === undefined ? "" : ` in stage ${JSON.stringify(stageName)}`;
  const list = failures.map((f) => `${f.criterionId} (${f.reason})`).join(", ");
  return new CriterionErrorsError(
    `cannot score${where}: ${failures.length} criterion verdict(s) unusable: ${list}. ` +
      `Pass errorsAs: "zero" or "renormalize" to score anyway.`,
    failures,
    partial,
  );
}

/** Per-criterion results, shared by both forms. */
export function criterionResults(
  plan: FlatPlan | StagedPlan,
  aligned: AlignedVerdicts,
  weights: Float64Array,
  counted: Uint8Array,
  contribution: (index: number, fraction: number) => number,
): CriterionResult[] {
  const out: CriterionResult[] = new Array(plan.ids.length);
  for (let i = 0; i < plan.ids.length; i++) {
    const status = aligned.statuses[i]!;
    const fraction = status === Status.Ok ? aligned.fractions[i]! : null;
    const isCounted = counted[i] === 1;
    const error = aligned.errors.get(i);
    out[i] = {
      criterionId: plan.ids[i]!,
      weight: weights[i]!,
      status: STATUS_NAMES[status]!,
      fraction,
      contribution: isCounted ? contribution(i, fraction ?? 0) : null,
      counted: isCounted,
      ...(error === undefined ? {} : { error }),
    };
  }
  return out;
}
