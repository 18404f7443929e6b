import { formatZodIssues } from "../records/zod-issues.js";
import { RubricConversionError } from "./errors.js";
import { FlatRubricSchema, type Criterion, type FlatRubric, type VerifierSpec } from "./flat.js";
import type { StagedRubric, StagedRule } from "./staged.js";

/** The result of a conversion that may not carry every meaning across. */
export interface Conversion<R> {
  readonly rubric: R;
  /** What the target form cannot express, one sentence each; empty when the conversion is lossless. */
  readonly losses: readonly string[];
}

// Where flatToStaged parks what the staged form has no field for, so the way back is exact.
interface FlatOrigin {
  readonly id: string;
  readonly title?: string;
}
interface CriterionOrigin {
  readonly verifier: VerifierSpec;
  readonly tags?: readonly string[];
}

const EPS = 1e-9;

/**
 * The verifier spec a staged rule stands for. Reference rules score on the rule's own scale
 * ([0, weight]: code returns points, judge prompts grade "4.0: …"), so the spec carries that
 * scale and verifiers turn it into a fraction.
 */
export function stagedRuleVerifier(rule: StagedRule): VerifierSpec {
  const origin = rule.metadata?.["flat"] as CriterionOrigin | undefined;
  if (origin?.verifier) return origin.verifier;
  if (rule.type === "code") return { kind: "python", code: rule.code, maxScore: rule.weight };
  return {
    kind: "llm-judge",
    prompt: rule.judge_prompt,
    ...(rule.expectation === undefined || rule.expectation === null ? {} : { expectation: rule.expectation }),
    scale: { min: 0, max: rule.weight },
  };
}

/** A criterion as verifiers see it, from either form of rubric. */
export interface RubricCriterion {
  readonly id: string;
  readonly text: string;
  readonly verifier: VerifierSpec;
  /** Staged rubrics: the stage the rule belongs to. */
  readonly stageIndex?: number;
}

/**
 * Every criterion of a rubric with its verifier spec, in scoring order. Staged rules become
 * `python` (code) and `llm-judge` criteria, their text the rule's name and description.
 */
export function rubricCriteria(rubric: FlatRubric | StagedRubric): RubricCriterion[] {
  if (!("stages" in rubric)) return rubric.criteria.map((c) => ({ id: c.id, text: c.text, verifier: c.verifier }));
  return rubric.stages.flatMap((stage, stageIndex) =>
    stage.rules.map((rule) => ({
      id: rule.id,
      text:
        rule.description.trim() === "" || rule.description === rule.name
          ? rule.name
          : `${rule.name}: ${rule.description}`,
      verifier: stagedRuleVerifier(rule),
      stageIndex,
    })),
  );
}

/**
 * Turns a staged rubric into a flat one: one criterion per rule, weight = the rule's points,
 * tagged `stage:{index}`. Gates, stage caps and stage names have no flat equivalent; they are
 * listed in `losses`. With gates ignored and no cap binding, both forms give the same normalised score.
 */
export function stagedToFlat(staged: StagedRubric): Conversion<FlatRubric> {
  const losses: string[] = [];
  const origin = staged.metadata?.["flat"] as FlatOrigin | undefined;
  const criteria: Criterion[] = [];
  staged.stages.forEach((stage, s) => {
    stage.rules.forEach((rule) => {
      const criterionOrigin = rule.metadata?.["flat"] as CriterionOrigin | undefined;
      criteria.push({
        id: rule.id,
        text: rule.description.trim() === "" ? rule.name : rule.description,
        weight: rule.weight,
        polarity: "reward",
        verifier: stagedRuleVerifier(rule),
        ...(criterionOrigin
          ? criterionOrigin.tags
            ? { tags: [...criterionOrigin.tags] }
            : {}
          : { tags: [`stage:${s}`] }),
      });
      if (!criterionOrigin && rule.name !== rule.description && rule.description.trim() !== "")
        losses.push(
          `${rule.id}: the rule name ${JSON.stringify(rule.name)} is dropped (the criterion text is its description)`,
        );
    });
    const weightSum = stage.rules.reduce((sum, rule) => sum + rule.weight, 0);
    if (Math.abs(weightSum - stage.max_points) > EPS)
      losses.push(`stages[${s}]: rule weights sum to ${weightSum} but the stage is capped at ${stage.max_points}`);
    if (stage.is_required && stage.min_score_to_pass > 0 && stage.on_failure_action !== "continue")
      losses.push(`stages[${s}]: the gate (${stage.on_failure_action} below ${stage.min_score_to_pass}) is dropped`);
  });
  if (staged.stages.length > 1 && !origin)
    losses.push("stage names, descriptions and order survive only as `stage:{index}` tags");
  const maxSum = staged.stages.reduce((sum, stage) => sum + stage.max_points, 0);
  if (Math.abs(maxSum - staged.max_total_score) > EPS)
    losses.push(`stage maxima sum to ${maxSum} but max_total_score is ${staged.max_total_score}`);
  const flat: FlatRubric = {
    id: origin?.id ?? staged.taskId ?? slug(staged.category_name),
    ...(origin ? (origin.title === undefined ? {} : { title: origin.title }) : { title: staged.category_name }),
    criteria,
  };
  const checked = FlatRubricSchema.safeParse(flat);
  if (!checked.success)
    throw new RubricConversionError(
      `cannot convert ${flat.id} to a flat rubric: ${formatZodIssues(checked.error, { limit: 1 })}`,
    );
  return { rubric: checked.data, losses };
}

/**
 * Turns a flat rubric into a single-stage staged rubric with no gate (max_points = Σ reward
 * weights), keeping verifier specs and tags in `metadata.flat` so `stagedToFlat` restores the
 * original exactly. Penalty criteria have no staged equivalent.
 *
 * @throws RubricConversionError naming the first penalty criterion.
 */
export function flatToStaged(flat: FlatRubric): StagedRubric {
  const penalty = flat.criteria.find((c) => c.polarity === "penalty");
  if (penalty)
    throw new RubricConversionError(
      `criterion ${JSON.stringify(penalty.id)} is a penalty; staged rubrics only add points, so ${flat.id} cannot be converted`,
    );
  const maxPoints = flat.criteria.reduce((sum, c) => sum + c.weight, 0);
  const rules: StagedRule[] = flat.criteria.map((criterion) => {
    const metadata = { flat: { verifier: criterion.verifier, tags: criterion.tags } };
    const common = {
      id: criterion.id,
      name: criterion.id,
      description: criterion.text,
      weight: criterion.weight,
      metadata,
    };
    const spec = criterion.verifier;
    if (spec.kind === "python" && typeof spec["code"] === "string")
      return { ...common, type: "code", code: spec["code"] };
    // Every other verifier is judged by a model in the reference format; the spec rides along in metadata.
    const prompt = typeof spec["prompt"] === "string" ? spec["prompt"] : criterion.text;
    const expectation = typeof spec["expectation"] === "string" ? spec["expectation"] : undefined;
    return {
      ...common,
      type: "llm_judge",
      judge_prompt: prompt,
      expectation,
    };
  });
  return {
    category_name: flat.title ?? flat.id,
    max_total_score: maxPoints,
    stages: [
      {
        name: "criteria",
        description: "All criteria of the flat rubric; no gate.",
        is_required: false,
        max_points: maxPoints,
        min_score_to_pass: 0,
        rules,
        on_failure_action: "continue",
        on_failure_score: 0,
      },
    ],
    metadata: { flat: { id: flat.id, title: flat.title } },
  };
}

function slug(text: string): string {
  const s = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return s === "" ? "rubric" : s;
}
