import { mean } from "../metrics/summary.js";
import type { FlatRubric } from "../rubric/flat.js";
import type { LoadedRubric } from "../rubric/parse.js";
import type { StagedRubric } from "../rubric/staged.js";
import { aggregateFlat, aggregateStaged, criterionResults } from "./aggregate.js";
import { ScoringError, VerdictValidationError } from "./errors.js";
import {
  Status,
  alignVerdicts,
  planOf,
  weightVector,
  type AlignedVerdicts,
  type FlatPlan,
  type StagedPlan,
  type VerdictsInput,
} from "./plan.js";
import type { FlatScore, RubricScore, ScoreOptions, StagedScore } from "./result.js";

// What reweight needs to recompute a score without re-reading its criteria: the aligned verdicts
// and the weights it was computed with. A non-enumerable symbol property keeps scores plain,
// serialisable objects; a WeakMap would do the same but its GC cost dominated reweighting 10k scores.
const BASIS = Symbol("rubric.score.basis");
interface Basis {
  readonly aligned: AlignedVerdicts;
  readonly weights: readonly number[];
}
function attachBasis<S extends RubricScore>(score: S, basis: Basis): S {
  Object.defineProperty(score, BASIS, { value: basis, enumerable: false });
  return score;
}

function flatScore(
  rubric: FlatRubric,
  plan: FlatPlan,
  aligned: AlignedVerdicts,
  options: ScoreOptions,
  base?: readonly number[],
): FlatScore {
  const weights = weightVector(plan, options.weights, base);
  const errorsAs = options.errorsAs ?? "fail";
  const { total, max, scale, scaledTotal, scaledMax } = aggregateFlat(plan, aligned, weights, errorsAs);
  // Ratios are taken in units of `scale`: `total / max` would be 0 or NaN once a sum overflows.
  const unclipped = scaledTotal / scaledMax;
  const score: FlatScore = {
    kind: "flat",
    rubricId: rubric.id,
    total,
    max,
    normalized: unclipped < 0 ? 0 : unclipped > 1 ? 1 : unclipped,
    unclipped,
    // "+ 0" turns the −0 of a penalty that did not fire into 0.
    criteria: criterionResults(
      plan,
      aligned,
      weights,
      errorsAs,
      plan.ids.length,
      (i, fraction) => (plan.signs[i]! * (weights[i]! / scale) * fraction) / scaledMax + 0,
    ),
    rubric,
    options,
  };
  return attachBasis(score, { aligned, weights });
}

function stagedScore(
  rubric: StagedRubric,
  plan: StagedPlan,
  aligned: AlignedVerdicts,
  options: ScoreOptions,
  base?: readonly number[],
): StagedScore {
  const weights = weightVector(plan, options.weights, base);
  const errorsAs = options.errorsAs ?? "fail";
  const totals = aggregateStaged(plan, aligned, weights, errorsAs, options.ignoreGates ?? false);
  const score: StagedScore = {
    kind: "staged",
    rubricId: rubric.taskId ?? rubric.category_name,
    total: totals.total,
    max: plan.maxTotal,
    normalized: totals.total / plan.maxTotal,
    stages: totals.stages,
    stoppedAt: totals.stoppedAt,
    failedGate: totals.failedGate,
    criteria: criterionResults(
      plan,
      aligned,
      weights,
      errorsAs,
      totals.reachedEnd,
      (i, fraction) => fraction * weights[i]!,
    ),
    rubric,
    options,
  };
  return attachBasis(score, { aligned, weights });
}

/**
 * Scores one output from its verdicts: flat rubrics by û = Σ w_j ν_j (penalties subtract),
 * staged rubrics by the reference's gated algorithm. Verdicts are an array of {@link Verdict}s
 * or a `{criterionId: fraction}` record (all `ok`).
 *
 * @example
 * const score = scoreRubric(rubric, { "s0.r0": 1, "s0.r1": 0.5 });
 * score.normalized; // e.g. 0.75
 * @throws CriterionErrorsError when a needed verdict is an error or missing (default `errorsAs: "fail"`).
 * @throws VerdictValidationError for verdicts naming unknown criteria or scores outside [0, 1].
 */
export function scoreRubric(rubric: FlatRubric, verdicts: VerdictsInput, options?: ScoreOptions): FlatScore;
export function scoreRubric(rubric: StagedRubric, verdicts: VerdictsInput, options?: ScoreOptions): StagedScore;
export function scoreRubric(
  rubric: FlatRubric | StagedRubric | LoadedRubric,
  verdicts: VerdictsInput,
  options?: ScoreOptions,
): RubricScore;
export function scoreRubric(
  input: FlatRubric | StagedRubric | LoadedRubric,
  verdicts: VerdictsInput,
  options: ScoreOptions = {},
): RubricScore {
  const rubric = "kind" in input && "rubric" in input ? input.rubric : (input as FlatRubric | StagedRubric);
  const plan = planOf(rubric);
  const aligned = alignVerdicts(plan, verdicts);
  return plan.kind === "flat"
    ? flatScore(rubric as FlatRubric, plan, aligned, options)
    : stagedScore(rubric as StagedRubric, plan, aligned, options);
}

function alignedFromResult(score: RubricScore): AlignedVerdicts {
  const n = score.criteria.length;
  const fractions = new Float64Array(n).fill(Number.NaN);
  const statuses = new Uint8Array(n);
  const errors = new Map<number, string>();
  score.criteria.forEach((c, i) => {
    statuses[i] =
      c.status === "ok"
        ? Status.Ok
        : c.status === "error"
          ? Status.Error
          : c.status === "skipped"
            ? Status.Skipped
            : Status.Missing;
    if (c.fraction !== null) fractions[i] = c.fraction;
    if (c.error !== undefined) errors.set(i, c.error);
  });
  return { fractions, statuses, errors };
}

/**
 * Checks weight overrides against a rubric before anything is scored with them: every id must
 * name a criterion (staged: a rule) and every weight be finite and ≥ 0. What `scoreRubric` would
 * refuse, refused up front (the verifier engine checks before it calls any verifier).
 *
 * @throws VerdictValidationError naming the first bad entry (`weights.<id>: …`).
 * @example
 * checkWeights(rubric, { accuracy: 3 });
 */
export function checkWeights(
  rubric: FlatRubric | StagedRubric,
  weights: Readonly<Record<string, number>> | ReadonlyMap<string, number>,
): void {
  weightVector(planOf(rubric), weights);
}

/**
 * Recomputes a score under new weights from the verdicts it already holds — no verifier is
 * called again. Criteria not named keep their current weight; other options are kept.
 *
 * @example
 * const edited = reweight(score, { "tone": 0, "accuracy": 3 });
 */
export function reweight<S extends RubricScore>(
  scored: S,
  weights: Readonly<Record<string, number>> | ReadonlyMap<string, number>,
): S {
  const plan = planOf(scored.rubric);
  if (plan.ids.length !== scored.criteria.length)
    throw new VerdictValidationError(
      `scored output has ${scored.criteria.length} criteria but its rubric has ${plan.ids.length}`,
    );
  // A score that went through JSON has lost its basis; rebuild it from the criteria it lists.
  const known = (scored as { [BASIS]?: Basis })[BASIS] ?? {
    aligned: alignedFromResult(scored),
    weights: scored.criteria.map((c) => c.weight),
  };
  const options: ScoreOptions = { ...scored.options, weights };
  return (
    plan.kind === "flat"
      ? flatScore(scored.rubric as FlatRubric, plan, known.aligned, options, known.weights)
      : stagedScore(scored.rubric as StagedRubric, plan, known.aligned, options, known.weights)
  ) as S;
}

/** Several rubric categories for one output: the mean of their normalised scores (the reference's rule). */
export function meanNormalizedScore(scores: readonly RubricScore[]): number {
  if (scores.length === 0) throw new ScoringError("meanNormalizedScore: no category scores to average");
  return mean(scores.map((s) => s.normalized));
}
