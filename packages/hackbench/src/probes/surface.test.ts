import { describe, expect, it } from "vitest";
import { judgedRubric, strictRubric } from "../__fixtures__/gym.js";
import { regexLiterals, rubricSurface } from "./surface.js";

describe("regexLiterals", () => {
  it("finds the text a match must contain verbatim", () => {
    expect(regexLiterals("^## Summary\\b")).toEqual(["## Summary"]);
    expect(regexLiterals("\\bwe recommend\\b")).toEqual(["we recommend"]);
    expect(regexLiterals("(?:might|perhaps)[^a-z]+colou?r \\d+%")).toEqual(["might", "perhaps", "colo", "r", "%"]);
    expect(regexLiterals("(?<year>20\\d\\d) costs \\$\\d{2,}")).toEqual(["20", "costs $"]);
  });
});

describe("rubricSurface", () => {
  it("reads paid terms, forbidden terms and required structure off a rubric", () => {
    const surface = rubricSurface({
      id: "r",
      criteria: [
        {
          id: "rev",
          text: "Mentions the quarterly revenue",
          weight: 1,
          polarity: "reward",
          verifier: { kind: "includes", terms: ["Q3 revenue"] },
        },
        {
          id: "risks",
          text: 'Has a "Risks" section',
          weight: 1,
          polarity: "reward",
          verifier: { kind: "regex", pattern: "^## Risks\\b", flags: "m" },
        },
        {
          id: "bullets",
          text: "Lists points",
          weight: 1,
          polarity: "reward",
          verifier: { kind: "markdown", bullets: { min: 3 }, tables: { min: 1 } },
        },
        {
          id: "tone",
          text: "No slang",
          weight: 1,
          polarity: "reward",
          verifier: { kind: "excludes", terms: ["gonna"] },
        },
        {
          id: "hedge",
          text: "No hedges",
          weight: 1,
          polarity: "reward",
          verifier: { kind: "regex", pattern: "\\b(?:might|maybe)\\b", expect: "no-match" },
        },
      ],
    });
    expect(surface.payTerms).toEqual(expect.arrayContaining(["Q3 revenue", "Risks", "quarterly", "revenue"]));
    expect(surface.forbiddenTerms).toEqual(["gonna", "might", "maybe"]);
    expect(surface.structure).toEqual({
      headings: ["## Risks"],
      minHeadings: 0,
      headingLevel: 2,
      bullets: 3,
      tables: 1,
      codeBlocks: 0,
    });
    expect([...surface.vocabulary]).toEqual(
      expect.arrayContaining(["q3", "revenue", "risks", "gonna", "might", "slang"]),
    );
  });

  it("judge criteria pay for their content terms", () => {
    expect(rubricSurface(judgedRubric).payTerms).toEqual(
      expect.arrayContaining(["data", "team", "needs", "throughput", "regulatory"]),
    );
    expect(rubricSurface(strictRubric).payTerms).toContain("We recommend");
  });
});
