import { describe, expect, it } from "vitest";
import { parseRubric } from "./parse.js";

function rubricWith(maxTotal: number, stages: { max: number; min: number }[]) {
  return {
    category_name: "c",
    max_total_score: maxTotal,
    stages: stages.map((s, i) => ({
      name: `stage ${i}`,
      description: "",
      max_points: s.max,
      min_score_to_pass: s.min,
      rules: [{ type: "code", name: "r", description: "", weight: s.max, code: "" }],
    })),
  };
}

describe("staged rubric load rules", () => {
  it("rescales stage maxima that exceed the category maximum, rounding to 0.1 with the last stage absorbing the residue", () => {
    const loaded = parseRubric(
      rubricWith(10, [
        { max: 4, min: 0 },
        { max: 4, min: 0 },
        { max: 4, min: 0 },
      ]),
    );
    if (loaded.kind !== "staged") throw new Error("expected staged");
    // 4 · 10/12 = 3.333… → 3.3, 3.3, and 10 − 6.6 = 3.4
    expect(loaded.rubric.stages.map((s) => s.max_points)).toEqual([3.3, 3.3, 3.4]);
    expect(loaded.corrections.map((c) => c.path)).toEqual([
      "stages[0].max_points",
      "stages[1].max_points",
      "stages[2].max_points",
    ]);
    expect(loaded.corrections[0]).toMatchObject({ from: 4, to: 3.3 });
  });

  it("rounds ties to even, as Python's round() does", () => {
    // 2.5 · 10/20 = 1.25 → round(1.25, 1) = 1.2 in Python (1.25 is exact in binary)
    const loaded = parseRubric(
      rubricWith(10, [
        { max: 2.5, min: 0 },
        { max: 17.5, min: 0 },
      ]),
    );
    if (loaded.kind !== "staged") throw new Error("expected staged");
    expect(loaded.rubric.stages.map((s) => s.max_points)).toEqual([1.2, 8.8]);
  });

  it("auto-corrects a pass mark above the stage maximum to 25% of it", () => {
    const loaded = parseRubric(
      rubricWith(10, [
        { max: 4, min: 5 },
        { max: 6, min: 6 },
      ]),
    );
    if (loaded.kind !== "staged") throw new Error("expected staged");
    expect(loaded.rubric.stages.map((s) => s.min_score_to_pass)).toEqual([1, 6]);
    expect(loaded.corrections).toEqual([
      {
        path: "stages[0].min_score_to_pass",
        from: 5,
        to: 1,
        reason: "min_score_to_pass 5 exceeds max_points 4; set to 25% of max_points",
      },
    ]);
  });

  it("leaves a rubric whose maxima sum exactly to the total alone", () => {
    const loaded = parseRubric(
      rubricWith(1, [
        { max: 0.1, min: 0 },
        { max: 0.2, min: 0 },
        { max: 0.7, min: 0 },
      ]),
    );
    if (loaded.kind !== "staged") throw new Error("expected staged");
    // 0.1 + 0.2 + 0.7 = 1.0000000000000002 in floating point: still no rescaling
    expect(loaded.corrections).toEqual([]);
  });

  it("refuses an on_failure_score above the category maximum", () => {
    const bad = rubricWith(10, [{ max: 4, min: 0 }]) as any;
    bad.stages[0].on_failure_score = 11;
    expect(() => parseRubric(bad)).toThrow("stages[0].on_failure_score: expected ≤ max_total_score (10), got 11");
  });
});
