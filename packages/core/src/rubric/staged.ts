import { z } from "zod";
import { IdSchema } from "./ids.js";
import { pythonRound } from "./python-round.js";
import { WeightSchema as weight, weightSumIssue } from "./weight.js";

/**
 * The staged rubric in the ARCANE reference code's format (and the shipped GDPval data),
 * field names kept in snake_case so files load and save unchanged.
 */

// Field order follows the shipped files, so a serialised rule reads like the original.
const ruleHead = {
  /** Optional stable id; without one a rule is known as `s{stage}.r{rule}` (0-based). */
  id: IdSchema.optional(),
};
const ruleBody = {
  name: z.string(),
  description: z.string(),
  weight: weight.default(1),
};
const ruleTail = {
  /** Known optional fields of the reference format, kept as data. */
  resource_filter: z.unknown().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
};

export const StagedCodeRuleSchema = z.strictObject({
  ...ruleHead,
  type: z.literal("code"),
  ...ruleBody,
  /** Python defining `evaluate(workflow, context)`, run by a sandboxed verifier. */
  code: z.string(),
  ...ruleTail,
});

export const StagedJudgeRuleSchema = z.strictObject({
  ...ruleHead,
  type: z.literal("llm_judge"),
  ...ruleBody,
  judge_prompt: z.string(),
  expectation: z.string().nullable().optional(),
  ...ruleTail,
});

export const StagedRuleSchema = z.discriminatedUnion("type", [StagedCodeRuleSchema, StagedJudgeRuleSchema]);

export const FailureActionSchema = z.enum(["skip_remaining", "zero_category", "continue"]);
export type FailureAction = z.infer<typeof FailureActionSchema>;

export const StageSchema = z.strictObject({
  name: z.string(),
  description: z.string(),
  is_required: z.boolean().default(true),
  max_points: z.number().positive(),
  /** An ABSOLUTE score (≤ max_points), not a ratio. */
  min_score_to_pass: z.number().min(0).default(0),
  rules: z.array(StagedRuleSchema).min(1),
  on_failure_action: FailureActionSchema.default("skip_remaining"),
  on_failure_score: z.number().min(0).default(0),
});

export const StagedRubricSchema = z
  .strictObject({
    category_name: z.string(),
    rationale: z.string().nullable().optional(),
    max_total_score: z.number().positive(),
    stages: z.array(StageSchema).min(1),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .superRefine((rubric, ctx) => {
    rubric.stages.forEach((stage, index) => {
      const overflow = weightSumIssue(
        stage.rules.map((r) => r.weight),
        ["stages", index, "rules"],
      );
      if (overflow) ctx.addIssue(overflow);
      if (stage.on_failure_score > rubric.max_total_score)
        ctx.addIssue({
          code: "custom",
          path: ["stages", index, "on_failure_score"],
          message: `expected ≤ max_total_score (${rubric.max_total_score}), got ${stage.on_failure_score}`,
        });
    });
    for (const issue of duplicateRuleIds(rubric)) ctx.addIssue({ code: "custom", ...issue });
  });

/** A task's rubric as stored in `rubrics-*.jsonl`: `{task_id, rubric}`. */
export const StagedRubricRecordSchema = z.strictObject({
  task_id: z.string().min(1),
  rubric: StagedRubricSchema,
});

type ParsedStagedRubric = z.output<typeof StagedRubricSchema>;
type ParsedRule = z.output<typeof StagedRuleSchema>;

/** A staged rule after loading: its id is always known. */
export type StagedRule = ParsedRule & { readonly id: string };
export type StagedCodeRule = Extract<StagedRule, { type: "code" }>;
export type StagedJudgeRule = Extract<StagedRule, { type: "llm_judge" }>;
export type Stage = Omit<ParsedStagedRubric["stages"][number], "rules"> & { readonly rules: readonly StagedRule[] };
export type StagedRubric = Omit<ParsedStagedRubric, "stages"> & {
  readonly stages: readonly Stage[];
  /** GDPval task id when the rubric was loaded from a `{task_id, rubric}` record. */
  readonly taskId?: string;
};
/** What a staged rubric file may contain (defaults not yet applied). */
export type StagedRubricInput = z.input<typeof StagedRubricSchema>;

/** The stable id of a staged rule that carries none: `s{stage}.r{rule}`, 0-based. */
export function stagedRuleId(stageIndex: number, ruleIndex: number): string {
  return `s${stageIndex}.r${ruleIndex}`;
}

/** A change the loader made to a rubric so that it can be scored as the reference does. */
export interface LoadCorrection {
  readonly path: string;
  readonly from: number;
  readonly to: number;
  readonly reason: string;
}

/**
 * Completes a schema-valid staged rubric: assigns rule ids, rescales stages whose maxima exceed
 * the category maximum, and auto-corrects unreachable pass marks — the reference's load rules.
 */
export function completeStagedRubric(
  parsed: ParsedStagedRubric,
  taskId?: string,
): { rubric: StagedRubric; corrections: LoadCorrection[] } {
  const corrections: LoadCorrection[] = [];
  const maxPoints = rescaledStageMaxima(parsed, corrections);
  const stages = parsed.stages.map((stage, s): Stage => {
    const max = maxPoints[s]!;
    let minToPass = stage.min_score_to_pass;
    if (minToPass > max) {
      const corrected = 0.25 * max;
      corrections.push({
        path: `stages[${s}].min_score_to_pass`,
        from: minToPass,
        to: corrected,
        reason: `min_score_to_pass ${minToPass} exceeds max_points ${max}; set to 25% of max_points`,
      });
      minToPass = corrected;
    }
    return {
      ...stage,
      max_points: max,
      min_score_to_pass: minToPass,
      rules: stage.rules.map((rule, r) => ({ ...rule, id: rule.id ?? stagedRuleId(s, r) })),
    };
  });
  const rubric: StagedRubric = { ...parsed, stages, taskId };
  return { rubric, corrections };
}

// Tolerance for "Σ max_points exceeds max_total_score": the data's maxima are decimal literals,
// and their float sum may overshoot an equal total by an ulp.
const SUM_TOLERANCE = 1e-9;

function rescaledStageMaxima(rubric: ParsedStagedRubric, corrections: LoadCorrection[]): number[] {
  const maxima = rubric.stages.map((s) => s.max_points);
  const sum = maxima.reduce((a, b) => a + b, 0);
  if (sum <= rubric.max_total_score + SUM_TOLERANCE) return maxima;
  const factor = rubric.max_total_score / sum;
  const rescaled = maxima.map((m) => pythonRound(m * factor, 1));
  const others = rescaled.slice(0, -1).reduce((a, b) => a + b, 0);
  // The last stage absorbs the rounding residue so the maxima sum to the category maximum.
  rescaled[rescaled.length - 1] = Number((rubric.max_total_score - others).toFixed(10));
  rescaled.forEach((to, s) =>
    corrections.push({
      path: `stages[${s}].max_points`,
      from: maxima[s]!,
      to,
      reason: `stage maxima sum to ${sum} > max_total_score ${rubric.max_total_score}; rescaled proportionally`,
    }),
  );
  return rescaled;
}

/**
 * The rubric as the reference format writes it: generated rule ids are left out, explicit ones
 * kept, field order as in the shipped files.
 */
export function serializeStagedRubric(rubric: StagedRubric): Record<string, unknown> {
  const { taskId, stages, ...rest } = rubric;
  const body = {
    ...rest,
    stages: stages.map((stage, s) => ({
      ...stage,
      rules: stage.rules.map((rule, r) => {
        if (rule.id !== stagedRuleId(s, r)) return rule;
        const { id: _generated, ...withoutId } = rule;
        return withoutId;
      }),
    })),
  };
  return taskId === undefined ? body : { task_id: taskId, rubric: body };
}

/** Duplicate rule ids (explicit or generated), found on raw input too; see `duplicateCriterionIds`. */
export function duplicateRuleIds(value: unknown): { path: (string | number)[]; message: string }[] {
  const stages = (value as { stages?: unknown } | null)?.stages;
  if (!Array.isArray(stages)) return [];
  const firstAt = new Map<string, string>();
  const issues: { path: (string | number)[]; message: string }[] = [];
  stages.forEach((stage: unknown, s) => {
    const rules = (stage as { rules?: unknown } | null)?.rules;
    if (!Array.isArray(rules)) return;
    rules.forEach((rule: unknown, r) => {
      const explicit = (rule as { id?: unknown } | null)?.id;
      const id = typeof explicit === "string" ? explicit : stagedRuleId(s, r);
      const here = `stages[${s}].rules[${r}]`;
      const first = firstAt.get(id);
      if (first === undefined) firstAt.set(id, here);
      else
        issues.push({
          path: ["stages", s, "rules", r, "id"],
          message: `duplicate rule id ${JSON.stringify(id)} (also ${first})`,
        });
    });
  });
  return issues;
}
