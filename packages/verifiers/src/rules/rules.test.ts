// One describe per rule kind; each kind is a file of its own beside this one.
import type { VerifierSpec } from "@rubric/core";
import { describe, expect, it } from "vitest";
import type { VerdictDraft, Verifier } from "../verifier/verifier.js";
import { jsonSchemaVerifier } from "./json-schema.js";
import { citationsVerifier, findCitations } from "./citations.js";
import { excludesVerifier } from "./excludes.js";
import { includesVerifier } from "./includes.js";
import { lengthVerifier } from "./length.js";
import { countCharacters, foldOutput } from "./text.js";
import { markdownCounts, markdownVerifier } from "./markdown.js";
import { extractNumbers, numericVerifier } from "./numeric.js";
import { readability, readabilityVerifier } from "./readability.js";
import { createRegexVerifier, regexVerifier } from "./regex.js";

async function judge<S extends VerifierSpec>(
  verifier: Verifier<S>,
  spec: unknown,
  output: string,
): Promise<VerdictDraft> {
  const parsed = verifier.specSchema.parse(spec);
  return verifier.verify({ id: "c", text: "criterion", verifier: parsed }, parsed, { output }, {});
}
const score = async <S extends VerifierSpec>(v: Verifier<S>, spec: unknown, output: string) =>
  (await judge(v, spec, output)).score;

describe("regex", () => {
  it("matches, counts towards minMatches for partial credit, and inverts with no-match", async () => {
    expect(await score(regexVerifier, { kind: "regex", pattern: "\\bQ[1-4]\\b" }, "Revenue rose in Q3.")).toBe(1);
    expect(await score(regexVerifier, { kind: "regex", pattern: "\\bQ[1-4]\\b", minMatches: 4 }, "Q1 and Q2")).toBe(
      0.5,
    );
    expect(
      await score(regexVerifier, { kind: "regex", pattern: "lorem", flags: "i", expect: "no-match" }, "Lorem ipsum"),
    ).toBe(0);
  });
  it("refuses an invalid pattern at spec time", () => {
    expect(regexVerifier.specSchema.safeParse({ kind: "regex", pattern: "(" }).success).toBe(false);
  });
  // The reproduction of issue 13 item 7: 13.6 s on JavaScript's engine, the reward server frozen.
  it("returns a verdict for a catastrophic pattern on a policy-written text", { timeout: 5_000 }, async () => {
    const verdict = await judge(regexVerifier, { kind: "regex", pattern: "^(\\w+\\s?)*$" }, `${"a".repeat(28)}!`);
    expect(verdict).toMatchObject({ status: "ok", score: 0 });
  });
  it("refuses at spec time, at `pattern`, a pattern RE2 cannot run unless the spec opts in to the JS engine", () => {
    const refused = regexVerifier.specSchema.safeParse({ kind: "regex", pattern: "(a)\\1" });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]).toMatchObject({
      path: ["pattern"],
      message: expect.stringMatching(/^RE2 cannot run \/\(a\)\\1\/: backreference \\1 at offset 3\. .*"engine": "js"/),
    });
    expect(
      regexVerifier.specSchema.safeParse({ kind: "regex", pattern: "a", flags: "y" }).error?.issues[0]?.path,
    ).toEqual(["flags"]);
    expect(regexVerifier.specSchema.safeParse({ kind: "regex", pattern: "(a)\\1", engine: "js" }).success).toBe(true);
  });
  it("runs the opt-in JS engine, and makes its time limit an error verdict, never a score", async () => {
    expect(await score(regexVerifier, { kind: "regex", pattern: "(a)\\1", engine: "js" }, "aa")).toBe(1);
    const verdict = await judge(
      createRegexVerifier({ jsLimitMs: 50 }),
      { kind: "regex", pattern: "^(\\w+\\s?)*$", engine: "js", expect: "no-match" },
      `${"a".repeat(40)}!`,
    );
    expect(verdict).toMatchObject({ status: "error", score: null, error: expect.stringContaining("50 ms limit") });
  });
});

describe("includes / excludes", () => {
  it("gives the share of terms present, with Unicode case folding", async () => {
    expect(
      await score(
        includesVerifier,
        { kind: "includes", terms: ["revenue", "margin", "EBITDA", "churn"] },
        "ＲＥＶＥＮＵＥ grew; Margin fell",
      ),
    ).toBe(0.5);
    expect(await score(includesVerifier, { kind: "includes", terms: ["x", "margin"], mode: "any" }, "margin")).toBe(1);
    expect(await score(includesVerifier, { kind: "includes", terms: ["Margin"], caseSensitive: true }, "margin")).toBe(
      0,
    );
  });
  it("respects whole words", async () => {
    expect(await score(includesVerifier, { kind: "includes", terms: ["cat"], wholeWord: true }, "concatenate")).toBe(0);
    expect(await score(includesVerifier, { kind: "includes", terms: ["cat"], wholeWord: true }, "the cat sat")).toBe(1);
  });
  it("excludes is all or nothing unless partial", async () => {
    const spec = { kind: "excludes", terms: ["guarantee", "risk-free"] };
    expect(await score(excludesVerifier, spec, "A risk-free return")).toBe(0);
    expect(await score(excludesVerifier, { ...spec, partial: true }, "A risk-free return")).toBe(0.5);
    expect(await score(excludesVerifier, spec, "A safe return")).toBe(1);
  });
});

describe("length", () => {
  it("counts words, chars and sentences", async () => {
    expect(await score(lengthVerifier, { kind: "length", unit: "words", max: 5 }, "one two three four five")).toBe(1);
    expect(await score(lengthVerifier, { kind: "length", unit: "chars", min: 3, max: 3 }, "héé")).toBe(1);
    expect(await score(lengthVerifier, { kind: "length", unit: "sentences", min: 2 }, "One. Two! Three?")).toBe(1);
  });
  it("falls off linearly outside the band with a tolerance, else scores 0", async () => {
    const ten = Array.from({ length: 12 }, () => "w").join(" ");
    expect(await score(lengthVerifier, { kind: "length", max: 10 }, ten)).toBe(0);
    // 12 words, max 10, tolerance 0.5 → 1 − 2/5 = 0.6
    expect(await score(lengthVerifier, { kind: "length", max: 10, tolerance: 0.5 }, ten)).toBeCloseTo(0.6, 12);
  });
  it("needs a bound and a sane band", () => {
    expect(lengthVerifier.specSchema.safeParse({ kind: "length" }).success).toBe(false);
    expect(lengthVerifier.specSchema.safeParse({ kind: "length", min: 5, max: 2 }).success).toBe(false);
  });
});

describe("markdown", () => {
  const doc = [
    "# Title",
    "",
    "## Part",
    "- a",
    "- b",
    "1. c",
    "",
    "| a | b |",
    "| --- | :-: |",
    "| 1 | 2 |",
    "",
    "```ts",
    "# not a heading",
    "- not a bullet",
    "```",
  ].join("\n");
  it("counts structure outside code fences", () => {
    expect(markdownCounts(doc)).toEqual({ headings: 2, bullets: 3, tables: 1, codeBlocks: 1 });
    expect(markdownCounts(doc, 2).headings).toBe(1);
  });
  it("scores the share of checks satisfied", async () => {
    expect(await score(markdownVerifier, { kind: "markdown", headings: { min: 2 }, tables: { min: 2 } }, doc)).toBe(
      0.5,
    );
    expect(
      await score(markdownVerifier, { kind: "markdown", bullets: { min: 3, max: 3 }, codeBlocks: { max: 1 } }, doc),
    ).toBe(1);
  });
});

describe("citations", () => {
  it("finds distinct URLs, numeric references and DOIs", () => {
    const text =
      "See https://example.org/a, [1], [2, 3], [4-5] and again [1]; doi 10.1000/xyz123. Not [link](x) nor [ ].";
    expect(findCitations(text, ["url", "bracket", "doi"]).sort()).toEqual(
      ["https://example.org/a", "[1]", "[2]", "[3]", "[4]", "[5]", "doi:10.1000/xyz123"].sort(),
    );
  });
  it("gives credit up to the minimum", async () => {
    expect(await score(citationsVerifier, { kind: "citations", min: 4 }, "[1] and https://a.io")).toBe(0.5);
  });
});

describe("numeric", () => {
  it("extracts numbers as written", () => {
    expect(extractNumbers("Revenue was 1,234.5 (−3% YoY), 4.2e-3 of v2.0 and Q3")).toEqual([1234.5, -3, 0.0042]);
  });
  it("compares with absolute or relative tolerance, selecting first/last/any", async () => {
    expect(await score(numericVerifier, { kind: "numeric", expected: 1234, tolerance: 1 }, "total: 1,234.5")).toBe(1);
    expect(
      await score(numericVerifier, { kind: "numeric", expected: 100, relativeTolerance: 0.01 }, "about 99.5"),
    ).toBe(1);
    expect(await score(numericVerifier, { kind: "numeric", expected: 7, select: "last" }, "7 then 8")).toBe(0);
    expect(
      await score(
        numericVerifier,
        { kind: "numeric", expected: 42, pattern: "answer:\\s*([-\\d.,]+)" },
        "x 42 answer: 41",
      ),
    ).toBe(0);
    expect(await score(numericVerifier, { kind: "numeric", expected: 1 }, "none here")).toBe(0);
  });
  it("runs its pattern on RE2 too: a catastrophic one returns a verdict, a backreference needs engine js", async () => {
    const verdict = await judge(
      numericVerifier,
      { kind: "numeric", expected: 1, pattern: "^(\\w+\\s?)*$" },
      `${"a".repeat(28)}!`,
    );
    expect(verdict).toMatchObject({ status: "ok", score: 0 });
    expect(
      await score(numericVerifier, { kind: "numeric", expected: 42, pattern: "answer:\\s*(\\d+)" }, "answer: 42"),
    ).toBe(1);
    const refused = numericVerifier.specSchema.safeParse({ kind: "numeric", expected: 1, pattern: "(\\d)\\1" });
    expect(refused.error?.issues[0]).toMatchObject({
      path: ["pattern"],
      message: expect.stringContaining("backreference"),
    });
    expect(
      await score(numericVerifier, { kind: "numeric", expected: 7, pattern: "(\\d)\\1", engine: "js" }, "1 2 77"),
    ).toBe(1);
  });
});

describe("readability", () => {
  it("computes Flesch–Kincaid as the formula says", () => {
    const r = readability("The cat sat on the mat. The dog ran.");
    // 9 words, 2 sentences, 9 syllables → FKGL = 0.39·4.5 + 11.8·1 − 15.59 = −2.035
    expect([r.words, r.sentences, r.syllables]).toEqual([9, 2, 9]);
    expect(r.fleschKincaidGrade).toBeCloseTo(-2.035, 10);
  });
  it("scores 1 inside the band", async () => {
    expect(
      await score(readabilityVerifier, { kind: "readability", max: 8 }, "The cat sat on the mat. The dog ran."),
    ).toBe(1);
    expect(
      await score(
        readabilityVerifier,
        { kind: "readability", metric: "flesch-reading-ease", min: 100 },
        "Notwithstanding institutional considerations, organisational restructuring necessitates comprehensive reevaluation.",
      ),
    ).toBe(0);
  });
});

describe("json-schema", () => {
  const schema = { type: "object", properties: { total: { type: "number" } }, required: ["total"] };
  it("validates the whole output or its fenced block", async () => {
    expect(await score(jsonSchemaVerifier, { kind: "json-schema", schema }, '{"total": 3}')).toBe(1);
    expect(
      await score(jsonSchemaVerifier, { kind: "json-schema", schema }, 'Here:\n```json\n{"total": 3}\n```\nDone.'),
    ).toBe(1);
    expect(
      await score(
        jsonSchemaVerifier,
        { kind: "json-schema", schema, extract: "whole" },
        'Here:\n```json\n{"total": 3}\n```',
      ),
    ).toBe(0);
    const invalid = await judge(jsonSchemaVerifier, { kind: "json-schema", schema }, '{"total": "3"}');
    expect(invalid).toMatchObject({
      status: "ok",
      score: 0,
      rationale: expect.stringContaining("/total must be number"),
    });
  });
  it("a broken schema is refused at spec time, and is an error verdict, not a 0, past it", async () => {
    const spec = { kind: "json-schema", schema: { type: "nonsense" }, extract: "embedded" } as const;
    expect(jsonSchemaVerifier.specSchema.safeParse(spec).error!.issues[0]).toMatchObject({
      path: ["schema"],
      message: expect.stringContaining("invalid JSON Schema: schema is invalid"),
    });
    const draft = await jsonSchemaVerifier.verify({ id: "c", text: "t", verifier: spec }, spec, { output: "{}" }, {});
    expect(draft).toMatchObject({
      status: "error",
      score: null,
      error: expect.stringContaining("invalid JSON Schema"),
    });
  });
  // Issue 29 item 5: regex rules ran on RE2 but a schema's `pattern` and `patternProperties` ran on
  // JavaScript's backtracking engine; this output took over 60 s. The tests assert completion and the
  // verdict, with a generous timeout, not a time bound: a backtracking engine never returns at all.
  const bomb = `"${"a".repeat(34)}!"`;
  it("runs a schema's pattern in linear time: a catastrophic pattern finishes with its verdict", async () => {
    const spec = { kind: "json-schema", extract: "whole", schema: { type: "string", pattern: "^(a+)+$" } };
    expect(await judge(jsonSchemaVerifier, spec, bomb)).toMatchObject({
      status: "ok",
      score: 0,
      rationale: expect.stringContaining('must match pattern "^(a+)+$"'),
    });
    expect(await score(jsonSchemaVerifier, spec, `"${"a".repeat(34)}"`)).toBe(1);
    const words = { kind: "json-schema", extract: "whole", schema: { type: "string", pattern: "^(\\w+\\s?)*$" } };
    expect(await score(jsonSchemaVerifier, words, `"${"a".repeat(40)}!"`)).toBe(0);
    expect(await score(jsonSchemaVerifier, words, '"two words"')).toBe(1);
  }, 10_000);
  it("runs patternProperties in linear time, each key against its own pattern", async () => {
    const schema = {
      type: "object",
      patternProperties: { "^(a+)+$": { type: "number" }, "^x\\d$": { type: "string" } },
    };
    const spec = { kind: "json-schema", extract: "whole", schema };
    const key = `${"a".repeat(34)}!`;
    // The key does not match, so its string value is not checked against `number`.
    expect(await score(jsonSchemaVerifier, spec, JSON.stringify({ [key]: "text", x1: "one" }))).toBe(1);
    expect(await score(jsonSchemaVerifier, spec, JSON.stringify({ aaaa: "text" }))).toBe(0);
    expect(await score(jsonSchemaVerifier, spec, JSON.stringify({ aaaa: 4, x1: 1 }))).toBe(0);
    expect(await score(jsonSchemaVerifier, spec, JSON.stringify({ aaaa: 4, x1: "one" }))).toBe(1);
  }, 10_000);
  it("keeps JavaScript's meaning of a pattern (unanchored, \\s and . as JavaScript reads them)", async () => {
    const spec = (pattern: string) => ({ kind: "json-schema", extract: "whole", schema: { type: "string", pattern } });
    expect(await score(jsonSchemaVerifier, spec("b"), '"abc"')).toBe(1);
    expect(await score(jsonSchemaVerifier, spec("^a\\sb$"), '"a\\u00a0b"')).toBe(1);
    expect(await score(jsonSchemaVerifier, spec("^a.b$"), '"a\\nb"')).toBe(0);
    expect(await score(jsonSchemaVerifier, spec("^\\p{Lu}$"), '"Δ"')).toBe(1);
  });
  it("compiles a schema with an $id on every parse (each parse is a new object; ajv refused a second id)", async () => {
    const spec = {
      kind: "json-schema",
      schema: { $id: "https://example.com/total", type: "object", required: ["total"] },
    };
    for (let i = 0; i < 3; i++) expect(await score(jsonSchemaVerifier, spec, '{"total": 3}')).toBe(1);
  });
  it("refuses at spec time a pattern RE2 cannot run, naming where it is in the schema", () => {
    const parsed = jsonSchemaVerifier.specSchema.safeParse({
      kind: "json-schema",
      schema: {
        type: "object",
        properties: { pattern: { type: "string" }, id: { type: "string", pattern: "(a)\\1" } },
        patternProperties: { "^(?=x)": true },
        const: { pattern: "(a)\\1" },
      },
    });
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues.map((i) => [i.path.join("."), i.message])).toEqual([
      [
        "schema.properties.id.pattern",
        expect.stringMatching(/^RE2 cannot run \/\(a\)\\1\/: backreference \\1 at offset 3\. /),
      ],
      [
        "schema.patternProperties.^(?=x)",
        expect.stringMatching(/^RE2 cannot run \/\^\(\?=x\)\/: lookahead \(\?= at offset 1\. /),
      ],
    ]);
    // A pattern reached only through a `$ref` into a corner the walk does not enter: ajv's compile,
    // on the same RE2 engine, still refuses it when the spec is read.
    const referenced = jsonSchemaVerifier.specSchema.safeParse({
      kind: "json-schema",
      schema: { $ref: "#/x/y", x: { y: { type: "string", pattern: "(?!a)" } } },
    });
    expect(referenced.error!.issues[0]).toMatchObject({
      path: ["schema"],
      message: expect.stringContaining("RE2 cannot run /(?!a)/: lookahead (?! at offset 0"),
    });
    const invalid = jsonSchemaVerifier.specSchema.safeParse({ kind: "json-schema", schema: { pattern: "(" } });
    expect(invalid.error!.issues[0]).toMatchObject({
      path: ["schema", "pattern"],
      message: expect.stringContaining("invalid regular expression"),
    });
  });
});

describe("text measures", () => {
  it("counts characters as code points after NFC, without building an array of them", () => {
    const texts = [
      "",
      "plain",
      "e\u0301te\u0301",
      "café",
      "😀 emoji 👩‍💻",
      "lone \ud800 high",
      "lone \udc00 low",
      "\ud83d",
      "a\u0301\ud83d\ude00",
    ];
    for (const text of texts)
      expect(countCharacters(text), JSON.stringify(text)).toBe([...text.normalize("NFC")].length);
  });

  it("folds each output once for its term criteria, and a new output afresh", () => {
    expect(foldOutput("Ｒｅｖｅｎｕｅ UP")).toBe("revenue up");
    expect(foldOutput("Ｒｅｖｅｎｕｅ UP")).toBe("revenue up");
    expect(foldOutput("MARGIN")).toBe("margin");
    expect(foldOutput("Ｒｅｖｅｎｕｅ UP")).toBe("revenue up");
  });
});
