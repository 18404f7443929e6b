import type { FlatRubric, StagedRubric } from "@rubric/core";

/**
 * What a stakeholder may know of its own preferences: for a staged rubric only the stage outline
 * (names, descriptions, points) — never rules, code or judge prompts, which would let the
 * manager copy the gold rubric out of the conversation; for a flat rubric the criteria and their
 * relative importance.
 */
export function preferenceOutline(rubric: FlatRubric | StagedRubric): string {
  if ("stages" in rubric) {
    return rubric.stages
      .map(
        (s) =>
          `- ${s.name} (${s.max_points} of ${rubric.max_total_score} points${s.is_required && s.on_failure_action !== "continue" ? "; a must-have" : ""}): ${s.description}`,
      )
      .join("\n");
  }
  const total = rubric.criteria.reduce((sum, c) => sum + c.weight, 0);
  return rubric.criteria
    .map(
      (c) =>
        `- ${c.polarity === "penalty" ? "Avoid: " : ""}${c.text} (importance ${Math.round((100 * c.weight) / total)}%)`,
    )
    .join("\n");
}
