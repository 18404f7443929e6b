import { z } from "zod";
import { IdSchema } from "./ids.js";
import { VerifierKindSchema } from "./verifier-kind.js";
import { WeightSchema as weight, weightSumIssue } from "./weight.js";

/**
 * How a criterion is verified. Core treats it as data: `kind` selects a verifier
 * registered by `@rubric/verifiers` (or a third-party package); the rest is that verifier's spec.
 * `kind` is typed as a `VerifierKind` (see `VerifierKinds` for how a package adds one) and checked
 * at run time against the known kinds.
 */
export const VerifierSpecSchema = z.looseObject({ kind: VerifierKindSchema });
export type VerifierSpec = z.infer<typeof VerifierSpecSchema>;

export const CriterionSchema = z.strictObject({
  id: IdSchema,
  text: z.string().min(1),
  weight,
  /** A `penalty` criterion that holds subtracts its weight (HealthBench-style negative points). */
  polarity: z.enum(["reward", "penalty"]).default("reward"),
  verifier: VerifierSpecSchema,
  tags: z.array(z.string()).optional(),
});
export type Criterion = z.output<typeof CriterionSchema>;

/** ARCANE's rubric: weighted criteria, û = Σ w_j ν_j over reward criteria normalised to Σw = 1. */
export const FlatRubricSchema = z
  .strictObject({
    id: z.string().min(1),
    title: z.string().optional(),
    criteria: z.array(CriterionSchema).min(1),
  })
  .superRefine((rubric, ctx) => {
    for (const issue of duplicateCriterionIds(rubric)) ctx.addIssue({ code: "custom", ...issue });
    // Without positive reward weight there is nothing to normalise by: every score would be 0/0.
    if (rubric.criteria.length === 0) return;
    const overflow = weightSumIssue(
      rubric.criteria.map((c) => c.weight),
      ["criteria"],
    );
    if (overflow) ctx.addIssue(overflow);
    const rewardWeight = rubric.criteria.reduce((sum, c) => (c.polarity === "reward" ? sum + c.weight : sum), 0);
    if (!(rewardWeight > 0))
      ctx.addIssue({
        code: "custom",
        path: ["criteria"],
        message: "expected at least one reward criterion with weight > 0, got total reward weight 0",
      });
  });
export type FlatRubric = z.output<typeof FlatRubricSchema>;
/** What a flat rubric file may contain (defaults not yet applied). */
export type FlatRubricInput = z.input<typeof FlatRubricSchema>;

/**
 * Duplicate criterion ids, found on raw input too: zod runs refinements only once the shape is
 * valid, and a user fixing a file wants every problem in one pass.
 */
export function duplicateCriterionIds(value: unknown): { path: (string | number)[]; message: string }[] {
  const criteria = (value as { criteria?: unknown } | null)?.criteria;
  if (!Array.isArray(criteria)) return [];
  const firstAt = new Map<string, number>();
  const issues: { path: (string | number)[]; message: string }[] = [];
  criteria.forEach((criterion: unknown, index) => {
    const id = (criterion as { id?: unknown } | null)?.id;
    if (typeof id !== "string") return;
    const first = firstAt.get(id);
    if (first === undefined) firstAt.set(id, index);
    else
      issues.push({
        path: ["criteria", index, "id"],
        message: `duplicate id ${JSON.stringify(id)} (first at criteria[${first}])`,
      });
  });
  return issues;
}
