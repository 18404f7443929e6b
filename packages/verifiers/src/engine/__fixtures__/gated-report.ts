import { parseStagedRubric } from "@rubric/core";

/** A GDPval-shaped staged rubric: a code gate (3 of 4 points or the category scores 0), then a judged stage. */
export const gatedReport = () =>
  parseStagedRubric({
    category_name: "report",
    max_total_score: 10,
    stages: [
      {
        name: "gate",
        description: "",
        max_points: 4,
        min_score_to_pass: 3,
        on_failure_action: "zero_category",
        rules: [{ type: "code", name: "shape", description: "", weight: 4, code: "def evaluate(w, c): ..." }],
      },
      {
        name: "content",
        description: "",
        is_required: false,
        max_points: 6,
        rules: [{ type: "llm_judge", name: "quality", description: "", weight: 6, judge_prompt: "Grade it." }],
      },
    ],
  });
