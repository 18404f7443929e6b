import type { RubricIssue } from "./errors.js";
import type { FlatRubric } from "./flat.js";
import { confusableIdWarnings } from "./ids.js";
import type { StagedRubric } from "./staged.js";

const EPS = 1e-9;

/**
 * Problems that leave a staged rubric valid but make some scores unreachable — common in
 * LLM-written rubrics (the shipped GDPval files have them). Each finding names its path.
 *
 * @example
 * lintStagedRubric(rubric).map((w) => `${w.path}: ${w.message}`);
 * // ["stages[0]: rule weights sum to 1, below min_score_to_pass 3: this gate can never pass (zero_category)"]
 */
export function lintStagedRubric(rubric: StagedRubric): RubricIssue[] {
  const findings: RubricIssue[] = [];
  rubric.stages.forEach((stage, s) => {
    stage.rules.forEach((rule, r) => {
      // LLM-written rules sometimes store their newlines escaped: one line of Python with "\n"
      // in it, which cannot compile. Say so instead of letting every output error on it.
      if (rule.type === "code" && !rule.code.includes("\n") && rule.code.includes("\\n"))
        findings.push({
          path: `stages[${s}].rules[${r}].code`,
          message:
            "the code is one line with literal \\n sequences where its line breaks should be: Python cannot compile it",
        });
    });
    const weights = stage.rules.reduce((sum, rule) => sum + rule.weight, 0);
    const reachable = Math.min(weights, stage.max_points);
    if (reachable + EPS < stage.min_score_to_pass) {
      const effect = !stage.is_required
        ? "the stage always counts as failed (not required, so scoring goes on)"
        : stage.on_failure_action === "continue"
          ? "this gate can never pass (continue: scoring goes on)"
          : `this gate can never pass (${stage.on_failure_action}: every output scores ${stage.on_failure_action === "zero_category" ? stage.on_failure_score : "only the earlier stages"})`;
      findings.push({
        path: `stages[${s}]`,
        message: `rule weights sum to ${round(weights)}, below min_score_to_pass ${stage.min_score_to_pass}: ${effect}`,
      });
    } else if (weights + EPS < stage.max_points) {
      findings.push({
        path: `stages[${s}]`,
        message: `rule weights sum to ${round(weights)}, below max_points ${stage.max_points}: the stage can never earn its maximum`,
      });
    }
  });
  const maxima = rubric.stages.reduce((sum, stage) => sum + stage.max_points, 0);
  if (maxima + EPS < rubric.max_total_score)
    findings.push({
      path: "max_total_score",
      message: `stage maxima sum to ${round(maxima)}, below max_total_score ${rubric.max_total_score}: no output can score 1`,
    });
  return findings;
}

function round(x: number): number {
  return Number(x.toFixed(6));
}

/**
 * Warnings about a parsed rubric's ids that are legal but confusable (see
 * {@link confusableIdWarnings}); paths point into the rubric (`criteria[1].id`,
 * `stages[0].rules[2].id`).
 */
export function lintRubricIds(rubric: FlatRubric | StagedRubric): { path: string; message: string }[] {
  const ids =
    "stages" in rubric
      ? rubric.stages.flatMap((stage, s) =>
          stage.rules.map((rule, r) => ({ id: rule.id, path: `stages[${s}].rules[${r}].id` })),
        )
      : rubric.criteria.map((c, i) => ({ id: c.id, path: `criteria[${i}].id` }));
  return confusableIdWarnings(ids);
}
