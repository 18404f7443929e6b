import { describe, expect, it } from "vitest";
import { parseFlatRubric, parseStagedRubric } from "./parse.js";
import { approximateTokens, rubricSetStructure, rubricStructure } from "./structure.js";

describe("approximateTokens", () => {
  it.each([
    ["Cites at least two sources.", 6], // Cites| at| least| two| sources|.
    ["It's 42% of Q3's revenue!", 10], // It|'s| 42|%| of| Q|3|'s| revenue|!
    ["", 0],
    ["  spaced   out  ", 2],
  ])("%j has %i pre-tokens", (text, n) => {
    expect(approximateTokens(text)).toBe(n);
  });
});

describe("rubric structure", () => {
  const flat = parseFlatRubric({
    id: "f",
    criteria: [
      { id: "a", text: "Cites at least two sources.", weight: 1, verifier: { kind: "citations" } },
      {
        id: "b",
        text: "No hype",
        weight: 1,
        polarity: "penalty",
        verifier: { kind: "excludes", terms: ["guaranteed"] },
      },
    ],
  });
  const staged = parseStagedRubric({
    category_name: "c",
    max_total_score: 4,
    stages: [
      {
        name: "gate",
        description: "",
        max_points: 2,
        min_score_to_pass: 1,
        on_failure_action: "zero_category",
        rules: [{ type: "code", name: "n", description: "Has a table", weight: 2, code: "" }],
      },
      {
        name: "rest",
        description: "",
        is_required: false,
        max_points: 2,
        rules: [
          { type: "llm_judge", name: "Tone", description: "", weight: 1, judge_prompt: "" },
          { type: "llm_judge", name: "n", description: "Is clear and short", weight: 1, judge_prompt: "" },
        ],
      },
    ],
  });

  it("describes one rubric of either form", () => {
    expect(rubricStructure(flat)).toEqual({
      criteria: 2,
      tokensPerCriterion: [6, 2],
      stages: 1,
      byKind: { citations: 1, excludes: 1 },
      stoppingGates: 0,
      penalties: 1,
    });
    expect(rubricStructure(staged)).toEqual({
      criteria: 3,
      tokensPerCriterion: [3, 1, 4],
      stages: 2,
      byKind: { code: 1, llm_judge: 2 },
      stoppingGates: 1,
      penalties: 0,
    });
  });

  it("summarises a set", () => {
    expect(rubricSetStructure([flat, staged])).toEqual({
      rubrics: 2,
      criteriaPerRubric: { mean: 2.5, median: 2.5, min: 2, max: 3 },
      tokensPerCriterion: { mean: 16 / 5, median: 3 },
      stagesPerRubric: 1.5,
      byKind: { citations: 1, excludes: 1, code: 1, llm_judge: 2 },
      stoppingGates: 1,
      rubricsWithStoppingGate: 1,
    });
    expect(() => rubricSetStructure([])).toThrow(expect.objectContaining({ code: "statistics.input" }));
  });
});
