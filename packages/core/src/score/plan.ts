import type { FlatRubric } from "../rubric/flat.js";
import type { FailureAction, StagedRubric } from "../rubric/staged.js";
import { VerdictValidationError } from "./errors.js";
import type { Verdict } from "./verdict.js";

/**
 * A rubric laid out as flat arrays in criterion order, compiled once per rubric object so that
 * scoring and reweighting thousands of outputs touch no maps and allocate little. Vectors made
 * per output are plain number arrays: V8 allocates those far faster than small typed arrays.
 */
export interface FlatPlan {
  readonly kind: "flat";
  readonly ids: readonly string[];
  readonly index: ReadonlyMap<string, number>;
  readonly weights: readonly number[];
  /** +1 reward, −1 penalty. */
  readonly signs: Int8Array;
}

export interface StagedPlan {
  readonly kind: "staged";
  readonly ids: readonly string[];
  readonly index: ReadonlyMap<string, number>;
  readonly weights: readonly number[];
  /** Rules of stage s are ids[stageStart[s] .. stageStart[s+1]). */
  readonly stageStart: Int32Array;
  readonly stages: readonly {
    readonly name: string;
    readonly maxPoints: number;
    readonly minToPass: number;
    readonly required: boolean;
    readonly action: FailureAction;
    readonly onFailureScore: number;
  }[];
  readonly maxTotal: number;
}

export type Plan = FlatPlan | StagedPlan;

const plans = new WeakMap<object, Plan>();

export function planOf(rubric: FlatRubric | StagedRubric): Plan {
  let plan = plans.get(rubric);
  if (!plan) {
    plan = "stages" in rubric ? compileStaged(rubric) : compileFlat(rubric);
    plans.set(rubric, plan);
  }
  return plan;
}

function compileFlat(rubric: FlatRubric): FlatPlan {
  const ids = rubric.criteria.map((c) => c.id);
  return {
    kind: "flat",
    ids,
    index: new Map(ids.map((id, i) => [id, i])),
    weights: rubric.criteria.map((c) => c.weight),
    signs: Int8Array.from(rubric.criteria, (c) => (c.polarity === "penalty" ? -1 : 1)),
  };
}

function compileStaged(rubric: StagedRubric): StagedPlan {
  const ids: string[] = [];
  const weights: number[] = [];
  const stageStart = new Int32Array(rubric.stages.length + 1);
  rubric.stages.forEach((stage, s) => {
    stageStart[s] = ids.length;
    for (const rule of stage.rules) {
      ids.push(rule.id);
      weights.push(rule.weight);
    }
  });
  stageStart[rubric.stages.length] = ids.length;
  return {
    kind: "staged",
    ids,
    index: new Map(ids.map((id, i) => [id, i])),
    weights,
    stageStart,
    stages: rubric.stages.map((s) => ({
      name: s.name,
      maxPoints: s.max_points,
      minToPass: s.min_score_to_pass,
      required: s.is_required,
      action: s.on_failure_action,
      onFailureScore: s.on_failure_score,
    })),
    maxTotal: rubric.max_total_score,
  };
}

/** Verdict status codes, aligned with the plan's criterion order. */
export const Status = { Ok: 0, Error: 1, Skipped: 2, Missing: 3 } as const;
export type Status = (typeof Status)[keyof typeof Status];

export const STATUS_NAMES = ["ok", "error", "skipped", "missing"] as const;
export type CriterionStatus = (typeof STATUS_NAMES)[number];

/** Verdicts aligned with a plan: fraction (NaN when none) and status per criterion, plus error messages. */
export interface AlignedVerdicts {
  readonly fractions: Float64Array;
  readonly statuses: Uint8Array;
  readonly errors: ReadonlyMap<number, string>;
}

export type VerdictsInput = readonly Verdict[] | Readonly<Record<string, number>>;

/**
 * Lines verdicts up with the plan. A verdict for a criterion the rubric lacks is refused: it is
 * almost always a typo, and dropping it silently would score the output as if it were missing.
 */
export function alignVerdicts(plan: Plan, verdicts: VerdictsInput): AlignedVerdicts {
  const n = plan.ids.length;
  const fractions = new Float64Array(n).fill(Number.NaN);
  const statuses = new Uint8Array(n).fill(Status.Missing);
  // Made only when a verdict is an error: scoring thousands of outputs allocates one map per error, not per output.
  let errors: Map<number, string> | undefined;
  const put = (criterionId: string, status: Status, score: number | null, error: string | undefined, where: string) => {
    const i = plan.index.get(criterionId);
    if (i === undefined)
      throw new VerdictValidationError(
        `${where}: unknown criterion id ${JSON.stringify(criterionId)}; the rubric has ${describeIds(plan.ids)}`,
      );
    // Every criterion starts Missing, so any other status means a verdict for it came already.
    if (statuses[i] !== Status.Missing)
      throw new VerdictValidationError(`${where}: a second verdict for ${JSON.stringify(criterionId)}`);
    if (status === Status.Ok) {
      if (typeof score !== "number" || !(score >= 0 && score <= 1))
        throw new VerdictValidationError(
          `${where}: score of ${JSON.stringify(criterionId)} must be a fraction in [0, 1], got ${String(score)}`,
        );
      fractions[i] = score;
    }
    statuses[i] = status;
    if (status === Status.Error) (errors ??= new Map()).set(i, error ?? "verifier error");
  };
  if (Array.isArray(verdicts)) {
    (verdicts as readonly Verdict[]).forEach((v, k) => {
      const status = v.status === "ok" ? Status.Ok : v.status === "error" ? Status.Error : Status.Skipped;
      put(v.criterionId, status, v.score, v.error, `verdicts[${k}]`);
    });
  } else {
    for (const [id, score] of Object.entries(verdicts as Readonly<Record<string, number>>))
      put(id, Status.Ok, score, undefined, `scores.${id}`);
  }
  return { fractions, statuses, errors: errors ?? NO_ERRORS };
}

const NO_ERRORS: ReadonlyMap<number, string> = new Map();

function describeIds(ids: readonly string[]): string {
  const shown = ids
    .slice(0, 8)
    .map((id) => JSON.stringify(id))
    .join(", ");
  return ids.length > 8 ? `${shown}, … (${ids.length} in all)` : shown;
}

/**
 * Weight overrides as a vector in plan order: unspecified criteria keep their weight.
 * @throws VerdictValidationError for an unknown id or a weight that is not finite and ≥ 0.
 */
export function weightVector(
  plan: Plan,
  overrides: Readonly<Record<string, number>> | ReadonlyMap<string, number> | undefined,
  base: readonly number[] = plan.weights,
): readonly number[] {
  if (overrides === undefined) return base;
  const { indices, values } = resolveOverrides(plan, overrides);
  const weights = base.slice();
  for (let k = 0; k < indices.length; k++) weights[indices[k]!] = values[k]!;
  return weights;
}

// Reweighting thousands of stored scores passes the same overrides object each time; resolving
// its ids against the plan once per (overrides, plan) keeps the per-output cost to a copy. The
// object may have been changed since (a page's weight control edits one in place): the cached
// entry is used only while the object still holds exactly the ids and weights it was made from.
const resolved = new WeakMap<
  object,
  { plan: Plan; ids: readonly string[]; indices: Int32Array; values: Float64Array }
>();

function unchanged(
  cached: { ids: readonly string[]; values: Float64Array },
  overrides: Readonly<Record<string, number>> | ReadonlyMap<string, number>,
): boolean {
  if (overrides instanceof Map) {
    if (overrides.size !== cached.ids.length) return false;
    return cached.ids.every((id, k) => overrides.get(id) === cached.values[k]);
  }
  const record = overrides as Readonly<Record<string, number>>;
  let count = 0;
  for (const id in record) if (Object.hasOwn(record, id)) count++;
  return count === cached.ids.length && cached.ids.every((id, k) => record[id] === cached.values[k]);
}

function resolveOverrides(plan: Plan, overrides: Readonly<Record<string, number>> | ReadonlyMap<string, number>) {
  const cached = resolved.get(overrides);
  if (cached && cached.plan === plan && unchanged(cached, overrides)) return cached;
  const entries = [...(overrides instanceof Map ? overrides.entries() : Object.entries(overrides))] as [
    string,
    number,
  ][];
  const indices = new Int32Array(entries.length);
  const values = new Float64Array(entries.length);
  entries.forEach(([id, w], k) => {
    const i = plan.index.get(id);
    if (i === undefined)
      throw new VerdictValidationError(`weights.${id}: unknown criterion id; the rubric has ${describeIds(plan.ids)}`);
    if (typeof w !== "number" || !Number.isFinite(w) || w < 0)
      throw new VerdictValidationError(`weights.${id}: expected a finite weight ≥ 0, got ${String(w)}`);
    indices[k] = i;
    values[k] = w;
  });
  const entry = { plan, ids: entries.map(([id]) => id), indices, values };
  resolved.set(overrides, entry);
  return entry;
}
