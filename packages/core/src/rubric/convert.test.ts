import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { sharedPath } from "../__fixtures__/shared.js";
import { scoreRubric } from "../score/score.js";
import { flatToStaged, rubricCriteria, stagedToFlat } from "./convert.js";
import { RubricConversionError } from "./errors.js";
import { parseFlatRubric, parseRubric, parseStagedRubric, readRubricJsonl } from "./parse.js";
import { serializeRubric } from "./serialize.js";
import type { StagedRubric } from "./staged.js";

const flat = parseFlatRubric({
  id: "memo",
  title: "Board memo",
  criteria: [
    { id: "cites", text: "Cites two sources", weight: 2, verifier: { kind: "citations", min: 2 }, tags: ["evidence"] },
    { id: "short", text: "Under 300 words", weight: 1, verifier: { kind: "length", unit: "words", max: 300 } },
    {
      id: "csv",
      text: "Totals add up",
      weight: 1.5,
      verifier: { kind: "python", code: "def evaluate(w, c): return 1.0" },
    },
    {
      id: "tone",
      text: "Professional tone",
      weight: 0.5,
      verifier: { kind: "llm-judge", prompt: "Is the tone professional?", expectation: "formal" },
    },
  ],
});

describe("flat → staged → flat", () => {
  it("is lossless, and the staged form is valid reference-format data", () => {
    const staged = flatToStaged(flat);
    // The staged rubric survives a trip through the reference file format ...
    const reloaded = parseStagedRubric(JSON.parse(JSON.stringify(serializeRubric(staged))));
    expect(reloaded.stages[0]!.rules.map((r) => r.type)).toEqual(["llm_judge", "llm_judge", "code", "llm_judge"]);
    // ... and converts back to exactly the original.
    const back = stagedToFlat(reloaded);
    expect(back.rubric).toEqual(flat);
    expect(back.losses).toEqual([]);
  });

  it("scores the same in both forms", () => {
    const verdicts = { cites: 1, short: 0.5, csv: 0, tone: 1 };
    expect(scoreRubric(flatToStaged(flat), verdicts).normalized).toBeCloseTo(
      scoreRubric(flat, verdicts).normalized,
      12,
    );
  });

  it("refuses penalty criteria, which staged rubrics cannot express", () => {
    const withPenalty = parseFlatRubric({
      id: "p",
      criteria: [
        { id: "a", text: "a", weight: 1, verifier: { kind: "llm-judge" } },
        { id: "b", text: "b", weight: 1, polarity: "penalty", verifier: { kind: "llm-judge" } },
      ],
    });
    expect(() => flatToStaged(withPenalty)).toThrow(RubricConversionError);
    expect(() => flatToStaged(withPenalty)).toThrow(/"b" is a penalty/);
  });
});

describe("staged → flat", () => {
  const gdpval = readRubricJsonl(readFileSync(sharedPath("data/gdpval/rubrics-eval.jsonl"), "utf8")).rubrics.map(
    (r) => r.rubric as StagedRubric,
  );

  it("keeps ids, points and verifiers of GDPval rules, and lists what it loses", () => {
    const rubric = gdpval[0]!;
    const { rubric: converted, losses } = stagedToFlat(rubric);
    expect(converted.id).toBe(rubric.taskId);
    expect(converted.title).toBe(rubric.category_name);
    const rules = rubric.stages.flatMap((s) => s.rules);
    expect(converted.criteria.map((c) => [c.id, c.weight, c.verifier.kind])).toEqual(
      rules.map((r) => [r.id, r.weight, r.type === "code" ? "python" : "llm-judge"]),
    );
    expect(converted.criteria[0]!.tags).toEqual(["stage:0"]);
    expect(losses.some((l) => /gate .* is dropped/.test(l))).toBe(true);
    expect(parseRubric(serializeRubric(converted)).kind).toBe("flat");
  });

  it("agrees with staged scoring when gates are ignored and no cap binds", () => {
    let compared = 0;
    for (const rubric of gdpval) {
      const capsExact = rubric.stages.every(
        (s) => Math.abs(s.rules.reduce((a, r) => a + r.weight, 0) - s.max_points) < 1e-9,
      );
      const maxExact = Math.abs(rubric.stages.reduce((a, s) => a + s.max_points, 0) - rubric.max_total_score) < 1e-9;
      if (!capsExact || !maxExact) continue;
      const ids = rubric.stages.flatMap((s) => s.rules.map((r) => r.id));
      const verdicts = Object.fromEntries(ids.map((id, i) => [id, ((i * 7) % 5) / 4]));
      const staged = scoreRubric(rubric, verdicts, { ignoreGates: true });
      const converted = scoreRubric(stagedToFlat(rubric).rubric, verdicts);
      expect(converted.normalized).toBeCloseTo(staged.normalized, 12);
      compared++;
    }
    expect(compared).toBeGreaterThan(30);
  });
});

describe("rubricCriteria", () => {
  it("gives staged rules their verifier on the rule's own scale, in scoring order", () => {
    const rubric = readRubricJsonl(readFileSync(sharedPath("data/gdpval/rubrics-eval.jsonl"), "utf8")).rubrics[0]!
      .rubric as StagedRubric;
    const criteria = rubricCriteria(rubric);
    const rules = rubric.stages.flatMap((s) => s.rules);
    expect(criteria.map((c) => c.id)).toEqual(rules.map((r) => r.id));
    criteria.forEach((c, i) => {
      const rule = rules[i]!;
      expect(c.text.startsWith(rule.name)).toBe(true);
      if (rule.type === "code") expect(c.verifier).toEqual({ kind: "python", code: rule.code, maxScore: rule.weight });
      else
        expect(c.verifier).toMatchObject({
          kind: "llm-judge",
          prompt: rule.judge_prompt,
          scale: { min: 0, max: rule.weight },
        });
    });
    expect(criteria.map((c) => c.stageIndex)).toEqual(rubric.stages.flatMap((s, i) => s.rules.map(() => i)));
  });

  it("passes flat criteria through", () => {
    expect(rubricCriteria(flat).map((c) => [c.id, c.verifier.kind])).toEqual([
      ["cites", "citations"],
      ["short", "length"],
      ["csv", "python"],
      ["tone", "llm-judge"],
    ]);
  });
});
