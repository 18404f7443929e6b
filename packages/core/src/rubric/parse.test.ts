import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { describe, expect, it } from "vitest";
import { sharedPath } from "../__fixtures__/shared.js";
import { RubricValidationError } from "./errors.js";
import {
  loadRubrics,
  parseFlatRubric,
  parseRubric,
  parseStagedRubric,
  readRubricJson,
  readRubricJsonl,
} from "./parse.js";
import { serializeRubric, toJsonl } from "./serialize.js";

const flat = {
  id: "memo",
  criteria: [
    { id: "cites", text: "Cites at least two sources", weight: 2, verifier: { kind: "citations", min: 2 } },
    { id: "short", text: "Under 300 words", weight: 1, polarity: "reward", verifier: { kind: "length", max: 300 } },
    {
      id: "rude",
      text: "Insults the reader",
      weight: 1,
      polarity: "penalty",
      verifier: { kind: "llm-judge" },
      tags: ["tone"],
    },
  ],
};

const staged = {
  category_name: "Report",
  rationale: null,
  max_total_score: 10,
  stages: [
    {
      name: "Gate",
      description: "format",
      is_required: true,
      max_points: 4,
      min_score_to_pass: 3,
      rules: [
        {
          type: "llm_judge",
          name: "Format",
          description: "Is a report",
          weight: 4,
          judge_prompt: "Check",
          expectation: null,
        },
      ],
      on_failure_action: "zero_category",
      on_failure_score: 0,
    },
    {
      name: "Content",
      description: "content",
      is_required: false,
      max_points: 6,
      min_score_to_pass: 0,
      rules: [
        { type: "code", name: "Totals", description: "Totals add up", weight: 3, code: "def evaluate(w, c): return 1" },
        {
          id: "tone",
          type: "llm_judge",
          name: "Tone",
          description: "Professional",
          weight: 3,
          judge_prompt: "Judge tone",
        },
      ],
      on_failure_action: "continue",
      on_failure_score: 0,
    },
  ],
};

function issuesOf(fn: () => unknown) {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(RubricValidationError);
    return (error as RubricValidationError).issues;
  }
  throw new Error("expected a RubricValidationError");
}

describe("the shipped GDPval rubrics", () => {
  for (const file of ["rubrics-train.jsonl", "rubrics-eval.jsonl"]) {
    it(`${file}: every rubric validates and round-trips unchanged`, () => {
      const text = readFileSync(sharedPath(`data/gdpval/${file}`), "utf8");
      const lines = text.split("\n").filter((l) => l.trim() !== "");
      const document = readRubricJsonl(text, { source: file });
      expect(document.issues).toEqual([]);
      expect(document.rubrics).toHaveLength(lines.length);
      expect(lines.length).toBe(file === "rubrics-train.jsonl" ? 175 : 44);
      document.rubrics.forEach((loaded, i) => {
        expect(loaded.kind).toBe("staged");
        if (loaded.kind !== "staged") return;
        expect(loaded.corrections).toEqual([]);
        expect(loaded.line).toBe(i + 1);
        // serialise gives back the file's own value (loaded unchanged) ...
        expect(isDeepStrictEqual(serializeRubric(loaded), JSON.parse(lines[i]!))).toBe(true);
        // ... and parse → serialise → parse is the identity.
        const again = parseRubric(JSON.parse(JSON.stringify(serializeRubric(loaded))));
        expect(again.rubric).toEqual(loaded.rubric);
      });
      expect(loadRubrics(toJsonl(document.rubrics), { format: "jsonl" }).map((r) => r.rubric)).toEqual(
        document.rubrics.map((r) => r.rubric),
      );
    });
  }
});

describe("parseRubric", () => {
  it("loads a flat rubric, defaulting polarity to reward", () => {
    const rubric = parseFlatRubric(flat);
    expect(rubric.criteria.map((c) => c.polarity)).toEqual(["reward", "reward", "penalty"]);
    expect(rubric.criteria[2]!.tags).toEqual(["tone"]);
  });

  it("gives staged rules stable ids s{stage}.r{rule} unless they carry one", () => {
    const rubric = parseStagedRubric(staged);
    expect(rubric.stages.flatMap((s) => s.rules.map((r) => r.id))).toEqual(["s0.r0", "s1.r0", "tone"]);
    // generated ids are not written back; explicit ones are
    const written = serializeRubric(rubric) as typeof staged;
    expect(written.stages[0]!.rules[0]).not.toHaveProperty("id");
    expect(written.stages[1]!.rules[1]).toHaveProperty("id", "tone");
  });

  it("accepts the {task_id, rubric} record and the bare rubric alike", () => {
    const record = parseStagedRubric({ task_id: "t-1", rubric: staged });
    expect(record.taskId).toBe("t-1");
    expect(serializeRubric(record)).toMatchObject({ task_id: "t-1", rubric: { category_name: "Report" } });
    expect(parseStagedRubric(staged).taskId).toBeUndefined();
  });

  it("accepts the reference format's optional fields resource_filter and metadata", () => {
    const withOptional = structuredClone(staged) as any;
    withOptional.metadata = { generation_llm_calls: 3 };
    withOptional.stages[1].rules[0].resource_filter = { mime: "text/csv" };
    withOptional.stages[1].rules[0].metadata = { origin: "gpt-5" };
    const rubric = parseStagedRubric(withOptional);
    expect(rubric.metadata).toEqual({ generation_llm_calls: 3 });
    expect((rubric.stages[1]!.rules[0] as any).resource_filter).toEqual({ mime: "text/csv" });
  });

  it("names the path and value of a negative weight", () => {
    const bad = structuredClone(staged) as any;
    bad.stages[1].rules[0].weight = -2;
    expect(issuesOf(() => parseRubric(bad))).toEqual([
      { path: "stages[1].rules[0].weight", message: "expected ≥ 0, got -2" },
    ]);
  });

  it("rejects NaN and infinite weights", () => {
    const nan = structuredClone(flat) as any;
    nan.criteria[0].weight = Number.NaN;
    nan.criteria[1].weight = Number.POSITIVE_INFINITY;
    expect(issuesOf(() => parseRubric(nan))).toEqual([
      { path: "criteria[0].weight", message: "expected a finite number, got NaN" },
      { path: "criteria[1].weight", message: "expected a finite number, got Infinity" },
    ]);
  });

  it("rejects weights whose sum is not finite, though each weight is (1e308 + 1e308 overflows)", () => {
    const huge = structuredClone(flat) as any;
    for (const c of huge.criteria) c.weight = 1e308;
    expect(issuesOf(() => parseRubric(huge))).toEqual([
      {
        path: "criteria",
        message: `expected weights whose sum is finite, got ${huge.criteria.length} weights summing past Number.MAX_VALUE (≈1.8e308); scale them down`,
      },
    ]);
    const hugeStage = structuredClone(staged) as any;
    for (const r of hugeStage.stages[1].rules) r.weight = 1e308;
    hugeStage.stages[1].rules.push({ ...hugeStage.stages[1].rules[0], id: "extra" });
    expect(issuesOf(() => parseRubric(hugeStage))).toEqual([
      {
        path: "stages[1].rules",
        message: `expected weights whose sum is finite, got ${hugeStage.stages[1].rules.length} weights summing past Number.MAX_VALUE (≈1.8e308); scale them down`,
      },
    ]);
  });

  it("rejects empty criteria, empty stages and empty rules", () => {
    expect(issuesOf(() => parseRubric({ id: "x", criteria: [] }))).toEqual([
      { path: "criteria", message: "expected at least 1 item, got 0" },
    ]);
    const noRules = structuredClone(staged) as any;
    noRules.stages[0].rules = [];
    expect(issuesOf(() => parseRubric(noRules))).toEqual([
      { path: "stages[0].rules", message: "expected at least 1 item, got 0" },
    ]);
  });

  it("rejects a flat rubric with no positive reward weight", () => {
    const onlyPenalty = {
      id: "x",
      criteria: [{ id: "a", text: "t", weight: 1, polarity: "penalty", verifier: { kind: "regex" } }],
    };
    expect(issuesOf(() => parseRubric(onlyPenalty))[0]!.message).toMatch(
      /at least one reward criterion with weight > 0/,
    );
  });

  it("reports duplicate ids, alongside other errors", () => {
    const dup = structuredClone(flat) as any;
    dup.criteria[2].id = "cites";
    dup.criteria[1].weight = -1;
    expect(issuesOf(() => parseRubric(dup))).toEqual([
      { path: "criteria[1].weight", message: "expected ≥ 0, got -1" },
      { path: "criteria[2].id", message: 'duplicate id "cites" (first at criteria[0])' },
    ]);
    const dupRule = structuredClone(staged) as any;
    dupRule.stages[1].rules[1].id = "s0.r0";
    expect(issuesOf(() => parseRubric(dupRule))).toEqual([
      { path: "stages[1].rules[1].id", message: 'duplicate rule id "s0.r0" (also stages[0].rules[0])' },
    ]);
  });

  it("rejects unknown fields (strict) at the field's own path", () => {
    const extra = structuredClone(staged) as any;
    extra.stages[0].max_point = 4;
    extra.stages[1].rules[0].wieght = 1;
    expect(issuesOf(() => parseRubric(extra))).toEqual([
      { path: "stages[0].max_point", message: "unknown field" },
      { path: "stages[1].rules[0].wieght", message: "unknown field" },
    ]);
  });

  it("names unknown enum values and rule types", () => {
    const bad = structuredClone(staged) as any;
    bad.stages[0].on_failure_action = "explode";
    bad.stages[1].rules[0].type = "python";
    expect(issuesOf(() => parseRubric(bad))).toEqual(
      [{ path: "stages[0].rules", message: expect.anything() as unknown as string }]
        .slice(0, 0)
        .concat([
          {
            path: "stages[0].on_failure_action",
            message: 'expected one of "skip_remaining", "zero_category", "continue", got "explode"',
          },
          { path: "stages[1].rules[0].type", message: "expected 'code' | 'llm_judge', got \"python\"" },
        ])
        .sort((a, b) => a.path.localeCompare(b.path)),
    );
  });

  it("refuses a value that is neither form", () => {
    expect(issuesOf(() => parseRubric({ name: "x" }))[0]!.message).toMatch(/not a rubric/);
    expect(issuesOf(() => parseRubric([1, 2]))[0]!.message).toMatch(/expected a rubric object, got an array/);
  });
});

describe("documents", () => {
  it("JSONL: keeps good lines, reports every bad one with its line number", () => {
    const bad = structuredClone(staged) as any;
    bad.stages[1].rules[0].weight = -2;
    const text = [
      JSON.stringify(flat),
      "",
      "{not json",
      JSON.stringify({ task_id: "t", rubric: bad }),
      JSON.stringify(staged),
    ].join("\n");
    const document = readRubricJsonl(text, { source: "mixed.jsonl" });
    expect(document.rubrics.map((r) => [r.kind, r.line])).toEqual([
      ["flat", 1],
      ["staged", 5],
    ]);
    expect(document.issues).toEqual([
      { path: "(root)", message: expect.stringMatching(/^invalid JSON: /), source: "mixed.jsonl", line: 3 },
      { path: "rubric.stages[1].rules[0].weight", message: "expected ≥ 0, got -2", source: "mixed.jsonl", line: 4 },
    ]);
    expect(() => loadRubrics(text, { source: "mixed.jsonl" })).toThrow(
      "mixed.jsonl:line 4: rubric.stages[1].rules[0].weight: expected ≥ 0, got -2",
    );
  });

  it("JSONL: issues come in line order, whether the line is bad JSON or a bad rubric", () => {
    const text = [JSON.stringify({ id: "y", criteria: [] }), "{not json", JSON.stringify({ id: "z", criteria: [] })];
    expect(readRubricJsonl(text.join("\n")).issues.map((issue) => [issue.line, issue.path])).toEqual([
      [1, "criteria"],
      [2, "(root)"],
      [3, "criteria"],
    ]);
  });

  it("JSON: a syntax error names its line and column", () => {
    const document = readRubricJson('{\n  "id": "x",\n  "criteria": [,]\n}', { source: "r.json" });
    expect(document.issues).toHaveLength(1);
    expect(document.issues[0]).toMatchObject({ line: 3, source: "r.json" });
    expect(document.issues[0]!.message).toMatch(/^invalid JSON: .*\(column \d+\)$/);
  });

  it("JSON: an array of rubrics reports issues under their index", () => {
    const document = readRubricJson(JSON.stringify([flat, { id: "y", criteria: [] }]));
    expect(document.rubrics).toHaveLength(1);
    expect(document.issues).toEqual([{ path: "[1].criteria", message: "expected at least 1 item, got 0" }]);
  });

  it("an empty document is an issue, not an empty success", () => {
    expect(readRubricJsonl("\n\n").issues[0]!.message).toMatch(/empty/);
    expect(readRubricJson("[]").issues[0]!.message).toMatch(/empty/);
  });
});
