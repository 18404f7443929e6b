import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { sharedPath } from "../__fixtures__/shared.js";
import { scoreRubric } from "../score/score.js";
import { lintStagedRubric } from "./lint.js";
import { parseStagedRubric, readRubricJsonl } from "./parse.js";
import type { StagedRubric } from "./staged.js";

describe("lintStagedRubric", () => {
  it("flags a gate whose rules cannot reach its pass mark", () => {
    const rubric = parseStagedRubric({
      category_name: "c",
      max_total_score: 10,
      stages: [
        {
          name: "gate",
          description: "",
          max_points: 4,
          min_score_to_pass: 3,
          on_failure_action: "zero_category",
          rules: [{ type: "code", name: "r", description: "", weight: 1, code: "" }],
        },
        {
          name: "rest",
          description: "",
          is_required: false,
          max_points: 6,
          rules: [{ type: "code", name: "r", description: "", weight: 5, code: "" }],
        },
      ],
    });
    expect(lintStagedRubric(rubric)).toEqual([
      {
        path: "stages[0]",
        message:
          "rule weights sum to 1, below min_score_to_pass 3: this gate can never pass (zero_category: every output scores 0)",
      },
      { path: "stages[1]", message: "rule weights sum to 5, below max_points 6: the stage can never earn its maximum" },
    ]);
  });

  it("flags code whose line breaks were stored as literal \\n (98 shipped GDPval rules)", () => {
    const rubric = parseStagedRubric({
      category_name: "c",
      max_total_score: 1,
      stages: [
        {
          name: "s",
          description: "",
          max_points: 1,
          rules: [
            { type: "code", name: "r", description: "", weight: 1, code: "def evaluate(w, c):\\n    return 1.0" },
          ],
        },
      ],
    });
    expect(lintStagedRubric(rubric)).toEqual([
      {
        path: "stages[0].rules[0].code",
        message:
          "the code is one line with literal \\n sequences where its line breaks should be: Python cannot compile it",
      },
    ]);
    const shipped = ["rubrics-train.jsonl", "rubrics-eval.jsonl"].flatMap((f) =>
      readRubricJsonl(readFileSync(sharedPath(`data/gdpval/${f}`), "utf8")).rubrics.map(
        (r) => r.rubric as StagedRubric,
      ),
    );
    expect(shipped.flatMap((r) => lintStagedRubric(r)).filter((w) => w.path.endsWith(".code"))).toHaveLength(98);
  });

  it("finds exactly the shipped rubrics that no output can score 1 on", () => {
    const rubrics = ["rubrics-train.jsonl", "rubrics-eval.jsonl"].flatMap((f) =>
      readRubricJsonl(readFileSync(sharedPath(`data/gdpval/${f}`), "utf8")).rubrics.map(
        (r) => r.rubric as StagedRubric,
      ),
    );
    const perfectBelowOne = rubrics.filter((rubric) => {
      const all = Object.fromEntries(rubric.stages.flatMap((s) => s.rules.map((r) => [r.id, 1])));
      return scoreRubric(rubric, all).normalized < 1 - 1e-12;
    });
    const linted = rubrics.filter((rubric) => lintStagedRubric(rubric).length > 0);
    // Every rubric that cannot reach 1 is flagged; flagged ones beyond that have slack elsewhere.
    expect(perfectBelowOne.every((r) => linted.includes(r))).toBe(true);
    expect(perfectBelowOne).toHaveLength(6);
  });
});
