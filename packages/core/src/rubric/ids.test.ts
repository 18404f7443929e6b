import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RubricValidationError } from "./errors.js";
import { confusableIdWarnings } from "./ids.js";
import { lintRubricIds } from "./lint.js";
import { parseFlatRubric, parseRubric, readRubricJson, readRubricJsonl } from "./parse.js";

const criterion = (id: string) => ({ id, text: `criterion ${id}`, weight: 1, verifier: { kind: "length", min: 1 } });
const flat = (...ids: string[]) => ({ id: "r", criteria: ids.map(criterion) });
const staged = (...ids: string[]) => ({
  category_name: "c",
  max_total_score: 1,
  stages: [
    {
      name: "s",
      description: "",
      max_points: 1,
      rules: ids.map((id) => ({ id, type: "code", name: id, description: "", weight: 1, code: "" })),
    },
  ],
});

function issuesOf(value: unknown) {
  try {
    parseRubric(value);
  } catch (error) {
    if (error instanceof RubricValidationError) return error.issues.map(({ path, message }) => ({ path, message }));
    throw error;
  }
  return [];
}

describe("criterion and rule ids", () => {
  it("refuses __proto__, constructor and prototype at the id's path", () => {
    expect(issuesOf(flat("ok", "__proto__"))).toEqual([
      { path: "criteria[1].id", message: expect.stringMatching(/^"__proto__" is reserved/) },
    ]);
    // JSON.parse makes `__proto__` an own key, as a rubric file would.
    expect(issuesOf(JSON.parse(JSON.stringify(flat("constructor"))))[0]?.path).toBe("criteria[0].id");
    expect(issuesOf(staged("a", "prototype"))).toEqual([
      { path: "stages[0].rules[1].id", message: expect.stringMatching(/^"prototype" is reserved/) },
    ]);
  });

  it("refuses zero-width, bidi and other invisible characters, naming the code point", () => {
    expect(issuesOf(flat("tone", "to\u200bne"))).toEqual([
      {
        path: "criteria[1].id",
        message: "holds U+200B ZERO WIDTH SPACE at index 2, an invisible character; ids must read as they are",
      },
    ]);
    expect(issuesOf(flat("\u202eenot"))[0]?.message).toMatch(/^holds U\+202E RIGHT-TO-LEFT OVERRIDE at index 0/);
    expect(issuesOf(flat("a\u2066b"))[0]?.message).toMatch(/^holds U\+2066 LEFT-TO-RIGHT ISOLATE/);
    expect(issuesOf(flat("a\u{E0041}"))[0]?.message).toMatch(/^holds U\+E0041 a format character at index 1/);
    expect(issuesOf(flat("a\tb"))[0]?.message).toMatch(/^holds U\+0009 a control character/);
    expect(issuesOf(staged("ok\u200d"))[0]?.path).toBe("stages[0].rules[0].id");
  });

  it("reports an id problem beside the rubric's other problems, in one pass", () => {
    const bad = flat("__proto__", "b");
    (bad.criteria[1] as { text: string }).text = "";
    expect(issuesOf(bad).map((i) => i.path)).toEqual(["criteria[0].id", "criteria[1].text"]);
  });

  it("warns, without refusing, on ids that are one under NFKC and case folding", () => {
    const rubric = parseFlatRubric(flat("c", "ｃ", "Tone", "tone", "ﬁne", "fine", "other"));
    expect(lintRubricIds(rubric)).toEqual([
      { path: "criteria[1].id", message: expect.stringMatching(/^id "ｃ" reads like "c" \(criteria\[0\]\.id\)/) },
      { path: "criteria[3].id", message: expect.stringMatching(/^id "tone" reads like "Tone"/) },
      { path: "criteria[5].id", message: expect.stringMatching(/^id "fine" reads like "ﬁne"/) },
    ]);
    expect(lintRubricIds(parseRubric(staged("x", "ｘ")).rubric as never)[0]?.path).toBe("stages[0].rules[1].id");
    expect(
      confusableIdWarnings([
        { id: "a", path: "p" },
        { id: "b", path: "q" },
      ]),
    ).toEqual([]);
  });

  // The fuzz suite's rule for rubric files: whatever the text, a result or named issues, never a throw.
  it("reading any rubric text gives rubrics or issues, never a crash (property)", () => {
    const idLike = fc.oneof(
      fc.constantFrom("__proto__", "constructor", "prototype", "a\u200bb", "\u202e", "ｃ", "c", ""),
      fc.string({ unit: "binary", maxLength: 6 }),
    );
    const value = fc.oneof(
      fc.array(idLike, { minLength: 1, maxLength: 4 }).map((ids) => flat(...ids)),
      fc.array(idLike, { minLength: 1, maxLength: 4 }).map((ids) => staged(...ids)),
      fc.jsonValue(),
    );
    fc.assert(
      fc.property(
        fc.oneof(
          value.map((v) => JSON.stringify(v)),
          fc.string({ unit: "binary", maxLength: 80 }),
        ),
        (text) => {
          for (const document of [
            readRubricJson(text, { source: "fuzz.json" }),
            readRubricJsonl(`${text}\n${text}`, { source: "fuzz.jsonl" }),
          ]) {
            expect(document.rubrics.length + document.issues.length).toBeGreaterThan(0);
            for (const issue of document.issues) expect(typeof issue.message).toBe("string");
          }
        },
      ),
      { seed: 20261203, numRuns: 1000 },
    );
  });
});
