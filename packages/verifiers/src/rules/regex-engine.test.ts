import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { backtrackingBound } from "./linear-regexp.js";
import { RegexUnsupportedError } from "./re2-syntax.js";
import { compileRulePattern, RegexTimeLimitError } from "./regex-engine.js";

// How the regex rule counted before RE2: JavaScript's own engine.
const jsCount = (pattern: string, flags: string, text: string) =>
  text.match(new RegExp(pattern, flags.includes("g") ? flags : `${flags}g`))?.length ?? 0;

const TEXTS = [
  "Revenue rose in Q3 and Q4; q1 fell.",
  "café Café CAFÉ cafe",
  "line one\nline two\nline three\n",
  "a\u00a0b\u2003c\td\ve\ufeff f",
  "😀 emoji 😀😀 end",
  "Ωμέγα alpha Δέλτα",
  "$12.50 and $3 or €4,00",
  "Dates: 2024-05 and 2025-11.",
  "",
  "a\rb a\nb a\u2028b a b",
  "colour color colouur",
];

// [pattern, flags]: patterns a rubric author writes, each under the flags it is written with.
// Patterns that could split a surrogate pair carry `u`: RE2 always reads code points.
const PATTERNS: [string, string][] = [
  ["\\bQ[1-4]\\b", ""],
  ["\\bq[1-4]\\b", "i"],
  ["\\d+", ""],
  ["\\d{4}-\\d{2}", ""],
  ["(?<year>\\d{4})-(\\d\\d)", ""],
  ["\\w+", ""],
  ["[A-Z][a-z]+", ""],
  ["caf[eé]", "i"],
  ["CAFÉ", "i"],
  ["\\u00e9", ""],
  ["\\u{1F600}", "u"],
  ["\\ud83d\\ude00", "u"],
  ["^line \\w+$", "m"],
  ["^line \\w+$", ""],
  ["one.line", "s"],
  ["a.b", ""],
  ["a.b", "s"],
  ["\\s+", ""],
  ["[\\s,]+", ""],
  ["\\S+", "u"],
  ["[^\\s]+", "u"],
  ["\\p{L}+", "u"],
  ["\\p{Lu}", "u"],
  ["\\P{L}+", "u"],
  ["\\p{Script=Greek}+", "u"],
  ["\\p{sc=Latin}+", "u"],
  ["colou?r", ""],
  ["(?:ab|cd)+", ""],
  ["x*", "u"],
  ["^$", "m"],
  ["[^]", "u"],
  ["[]", ""],
  ["(?<=\\$)\\d+", ""],
  ["(?<!\\$)\\b\\d+", ""],
  ["\\.\\d{2}\\b", ""],
  ["\\cJ", ""],
  ["[\\b]", ""],
  ["\\x41|\\x61", ""],
  ["[.]\\d", ""],
  ["\\/", ""],
  ["€\\d", "gi"],
];

describe("compileRulePattern, RE2 engine", () => {
  it("counts what JavaScript's engine counts, on every pattern × text of the table", () => {
    const differences: string[] = [];
    for (const [pattern, flags] of PATTERNS)
      for (const text of TEXTS) {
        const re2 = compileRulePattern(pattern, flags).count(text);
        const js = jsCount(pattern, flags, text);
        if (re2 !== js) differences.push(`/${pattern}/${flags} on ${JSON.stringify(text)}: re2 ${re2}, js ${js}`);
      }
    expect(differences).toEqual([]);
  });

  it("counts what JavaScript's engine counts on random texts (property)", () => {
    const alphabet = fc.constantFrom(..."aAbQ1 2\n\r\t\u00a0é😀$.-_,".split(/(?:)/u));
    fc.assert(
      fc.property(fc.constantFrom(...PATTERNS), fc.array(alphabet, { maxLength: 40 }), ([pattern, flags], chars) => {
        const text = chars.join("");
        const all = jsCount(pattern, flags, text);
        expect(compileRulePattern(pattern, flags).count(text)).toBe(all);
        // Stopped early, on either engine, the count is the full one capped.
        expect(compileRulePattern(pattern, flags).count(text, 2)).toBe(Math.min(2, all));
        expect(compileRulePattern(pattern, flags, { engine: "js" }).count(text, 2)).toBe(Math.min(2, all));
        expect(compileRulePattern(pattern, flags, { engine: "js" }).count(text)).toBe(all);
      }),
      { seed: 20261203, numRuns: 500 },
    );
  });

  it("differs where documented: multiline ^ and $ see only \\n as a line end, not \\r", () => {
    const text = "line one\r\nline two";
    expect(compileRulePattern("^line \\w+$", "m").count(text)).toBe(1);
    expect(jsCount("^line \\w+$", "m", text)).toBe(2);
  });

  it("finishes a catastrophic pattern on the text that took JavaScript 13.6 s, and on a far longer one", () => {
    const pattern = compileRulePattern("^(\\w+\\s?)*$", "");
    expect(pattern.count(`${"a".repeat(28)}!`)).toBe(0);
    expect(pattern.count(`${"a".repeat(50_000)}!`)).toBe(0);
    expect(pattern.count("a".repeat(28))).toBe(1);
  });

  it("refuses what RE2 cannot run with a RegexUnsupportedError naming the construct", () => {
    const refusal = (pattern: string, flags = "") => {
      try {
        compileRulePattern(pattern, flags);
      } catch (error) {
        expect(error).toBeInstanceOf(RegexUnsupportedError);
        expect((error as RegexUnsupportedError).code).toBe("verification.regex-unsupported");
        return (error as RegexUnsupportedError).feature;
      }
      throw new Error(`/${pattern}/${flags} compiled`);
    };
    expect(refusal("(a)\\1")).toBe("backreference \\1 at offset 3");
    expect(refusal("(?<q>['\"]).*?\\k<q>")).toBe("backreference \\k<q> at offset 13");
    expect(refusal("Q(?=3)")).toBe("lookahead (?= at offset 1");
    expect(refusal("Q(?!3)")).toBe("lookahead (?! at offset 1");
    expect(refusal("a", "y")).toBe("flag y (sticky matching)");
    // RE2's own refusals pass through in its words: here its repetition bound of 1000.
    expect(refusal("a{1001}")).toMatch(/repeat count/);
  });

  it("still refuses what JavaScript refuses, whichever the engine", () => {
    expect(() => compileRulePattern("(", "")).toThrow(SyntaxError);
    expect(() => compileRulePattern("(", "", { engine: "js" })).toThrow(SyntaxError);
  });
});

describe("compileRulePattern, RE2 engine: V8's RegExp for patterns proven linear", () => {
  it("runs a pattern without unbounded repeats on RegExp, and one with them on re2js", () => {
    expect(compileRulePattern("\\bQ[1-4]\\b", "").runsOn).toBe("RegExp");
    expect(compileRulePattern("colou?r", "i").runsOn).toBe("RegExp");
    expect(compileRulePattern("\\d+(?:\\.\\d+)?%", "").runsOn).toBe("re2js");
    expect(compileRulePattern("^(\\w+\\s?)*$", "").runsOn).toBe("re2js");
    // Valid JavaScript, but not with the `u` flag the RE2 path's meaning follows: re2js runs it.
    expect(compileRulePattern("\\-", "").runsOn).toBe("re2js");
    expect(compileRulePattern("\\bQ[1-4]\\b", "", { regExpWhenLinear: false }).runsOn).toBe("re2js");
    expect(compileRulePattern("\\bQ[1-4]\\b", "", { engine: "js" }).runsOn).toBe("RegExp");
  });

  it("accepts and refuses exactly what RE2 does, whichever engine then runs the pattern", () => {
    // a{1001} would be linear on RegExp; RE2's repeat bound still refuses it, as before.
    expect(() => compileRulePattern("a{1001}", "")).toThrow(RegexUnsupportedError);
    expect(() => compileRulePattern("Q(?=3)", "")).toThrow(RegexUnsupportedError);
  });

  it("counts and groups what re2js does, on every pattern × text of the table", () => {
    const differences: string[] = [];
    for (const [pattern, flags] of PATTERNS) {
      const fast = compileRulePattern(pattern, flags);
      const re2 = compileRulePattern(pattern, flags, { regExpWhenLinear: false });
      for (const text of TEXTS) {
        const [a, b] = [fast.count(text), re2.count(text)];
        if (a !== b)
          differences.push(`/${pattern}/${flags} on ${JSON.stringify(text)}: ${fast.runsOn} ${a}, re2js ${b}`);
        if (JSON.stringify(fast.firstGroups(text)) !== JSON.stringify(re2.firstGroups(text)))
          differences.push(`/${pattern}/${flags} on ${JSON.stringify(text)}: groups differ`);
      }
    }
    expect(differences).toEqual([]);
  });

  it("counts what re2js counts for random bounded patterns on random texts (property)", () => {
    const atom = fc.constantFrom(
      "a",
      "b",
      "\\d",
      "[ab]",
      "[^a]",
      ".",
      "\\w",
      "\\s",
      "(?:a|b1)",
      "(a)",
      "\\b",
      "^",
      "$",
    );
    const quantifier = fc.constantFrom("", "", "?", "{2}", "{0,2}", "{1,3}?");
    const assertion = new Set(["\\b", "^", "$"]);
    const piece = fc.tuple(atom, quantifier).map(([a, q]) => (assertion.has(a) ? a : a + q));
    const alphabet = fc.constantFrom(..."aab1 \n😀".split(/(?:)/u));
    fc.assert(
      fc.property(
        fc.array(piece, { minLength: 1, maxLength: 5 }),
        fc.constantFrom("", "i", "m", "s"),
        fc.array(alphabet, { maxLength: 30 }),
        (pieces, flags, chars) => {
          const pattern = pieces.join("");
          const text = chars.join("");
          const fast = compileRulePattern(pattern, flags);
          // Past the bound's limit (five optional pieces can pass it) re2js runs it.
          expect(fast.runsOn).toBe(backtrackingBound(pattern) === undefined ? "re2js" : "RegExp");
          expect(fast.count(text)).toBe(compileRulePattern(pattern, flags, { regExpWhenLinear: false }).count(text));
          expect(fast.count(text, 1)).toBe(Math.min(1, fast.count(text)));
        },
      ),
      { seed: 20261204, numRuns: 500 },
    );
  });
});

describe("compileRulePattern, opt-in JS engine", () => {
  it("runs what RE2 cannot", () => {
    expect(compileRulePattern("(a)\\1", "", { engine: "js" }).count("aa b aa")).toBe(2);
    expect(compileRulePattern("Q(?=3)", "", { engine: "js" }).count("Q1 Q3")).toBe(1);
  });

  it("is cut off by its limit on the catastrophic pattern, with a RegexTimeLimitError", () => {
    const pattern = compileRulePattern("^(\\w+\\s?)*$", "", { engine: "js", jsLimitMs: 50 });
    expect(() => pattern.count(`${"a".repeat(40)}!`)).toThrow(RegexTimeLimitError);
    // The context is left usable: the next text is counted.
    expect(pattern.count("abc")).toBe(1);
  });

  it("refuses a limit that is not a positive integer", () => {
    expect(() => compileRulePattern("a", "", { engine: "js", jsLimitMs: 0 })).toThrow(
      expect.objectContaining({ code: "verification.options" }),
    );
  });
});
