import { rubricCriteria, type FlatRubric, type RubricCriterion, type StagedRubric } from "@rubric/core";
import { contentTerms } from "../text/words.js";

/** Structure a rubric asks for: named headings and minimum counts of Markdown elements. */
export interface RequiredStructure {
  /** Heading lines the rubric looks for, e.g. `## Summary`. */
  readonly headings: readonly string[];
  /** The most headings, bullets, tables and code blocks any one criterion requires. */
  readonly minHeadings: number;
  readonly headingLevel: number;
  readonly bullets: number;
  readonly tables: number;
  readonly codeBlocks: number;
}

/**
 * What anyone holding the rubric can read off it — and so what a policy optimised against it
 * can learn to aim at: the terms it pays for, the terms it forbids, the structure it asks for.
 */
export interface RubricSurface {
  readonly criteria: readonly RubricCriterion[];
  /** Terms a presence check pays for: `includes` terms, literal phrases of `regex` rules, content words of criterion texts. */
  readonly payTerms: readonly string[];
  /** Terms the rubric forbids: `excludes` terms and literal words of `no-match` regex rules. */
  readonly forbiddenTerms: readonly string[];
  readonly structure: RequiredStructure;
  /** Every word the rubric uses, lower case: a control must neither introduce nor keep one. */
  readonly vocabulary: ReadonlySet<string>;
}

const MAX_PAY_TERMS = 80;

/**
 * Reads a rubric the way an attacker would.
 *
 * @example
 * const surface = rubricSurface({ id: "r", criteria: [{ id: "rev", text: "Mentions revenue", weight: 1, polarity: "reward", verifier: { kind: "includes", terms: ["revenue"] } }] });
 * surface.payTerms; // ["revenue"]
 */
export function rubricSurface(rubric: FlatRubric | StagedRubric): RubricSurface {
  const criteria = rubricCriteria(rubric);
  const pay = new Map<string, number>();
  const forbidden = new Set<string>();
  const headings = new Set<string>();
  let minHeadings = 0;
  let headingLevel = 2;
  let bullets = 0;
  let tables = 0;
  let codeBlocks = 0;
  const addPay = (term: string) => {
    const t = term.trim();
    if (t !== "") pay.set(t, (pay.get(t) ?? 0) + 1);
  };
  for (const criterion of criteria) {
    const spec = criterion.verifier as Record<string, unknown>;
    const terms = Array.isArray(spec["terms"])
      ? (spec["terms"] as unknown[]).filter((t): t is string => typeof t === "string")
      : [];
    if (spec["kind"] === "includes") terms.forEach(addPay);
    if (spec["kind"] === "excludes") terms.forEach((t) => forbidden.add(t));
    if (spec["kind"] === "regex" && typeof spec["pattern"] === "string") {
      const literals = regexLiterals(spec["pattern"]);
      for (const literal of literals) {
        const heading = /^(#{1,6}) +(\S.*)$/.exec(literal);
        if (heading && spec["expect"] !== "no-match") headings.add(`${heading[1]} ${heading[2]!.trim()}`);
        const phrase = literal.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "");
        if (!/\p{L}{3}/u.test(phrase)) continue;
        if (spec["expect"] === "no-match") phrase.split(/\s+/).forEach((w) => forbidden.add(w));
        else addPay(phrase);
      }
    }
    if (spec["kind"] === "markdown") {
      const min = (key: string) => (spec[key] as { min?: number } | undefined)?.min ?? 0;
      minHeadings = Math.max(minHeadings, min("headings"));
      if (typeof spec["headingLevel"] === "number") headingLevel = spec["headingLevel"];
      bullets = Math.max(bullets, min("bullets"));
      tables = Math.max(tables, min("tables"));
      codeBlocks = Math.max(codeBlocks, min("codeBlocks"));
    }
    // "Has a "Risks" section": a quoted name in a criterion about sections is a heading to aim at.
    if (/\b(section|heading|header|chapter|part)s?\b/i.test(criterion.text))
      for (const m of criterion.text.matchAll(/["“]([^"”\n]{2,60})["”]/g))
        headings.add(`${"#".repeat(headingLevel)} ${m[1]!.trim()}`);
    const prose = [criterion.text, spec["prompt"], spec["expectation"]]
      .filter((t): t is string => typeof t === "string")
      .join(" ");
    contentTerms(prose).forEach(addPay);
  }
  const payTerms = [...pay.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, MAX_PAY_TERMS)
    .map(([term]) => term);
  const vocabulary = new Set<string>();
  for (const text of [...payTerms, ...forbidden, ...criteria.map((c) => c.text)])
    for (const w of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) vocabulary.add(w);
  return {
    criteria,
    payTerms,
    forbiddenTerms: [...forbidden],
    structure: { headings: [...headings], minHeadings, headingLevel, bullets, tables, codeBlocks },
    vocabulary,
  };
}

/**
 * The literal runs of a regular expression: what text a match must contain verbatim. Character
 * classes, escapes such as `\b`, group syntax and quantifiers end a run; a `?` or `*` drops the
 * character it makes optional.
 *
 * @example
 * regexLiterals("^## Summary\\b"); // ["## Summary"]
 */
export function regexLiterals(pattern: string): string[] {
  const runs: string[] = [];
  let run = "";
  const end = () => {
    if (run !== "") runs.push(run);
    run = "";
  };
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === "\\") {
      const next = pattern[i + 1] ?? "";
      i++;
      if (/[A-Za-z0-9]/.test(next)) end();
      else run += next;
    } else if (ch === "[") {
      end();
      while (i < pattern.length && pattern[i] !== "]") i += pattern[i] === "\\" ? 2 : 1;
    } else if (ch === "(") {
      end();
      const groupSyntax = /^\(\?(?::|=|!|<=|<!|<[A-Za-z_]\w*>)/.exec(pattern.slice(i));
      if (groupSyntax) i += groupSyntax[0].length - 1;
    } else if (ch === "{" && /^\{\d+(,\d*)?\}/.test(pattern.slice(i))) {
      end();
      i = pattern.indexOf("}", i);
    } else if (ch === "?" || ch === "*") {
      run = run.slice(0, -1);
      end();
    } else if (")|^$.+".includes(ch)) end();
    else run += ch;
  }
  end();
  return runs.map((r) => r.trim()).filter((r) => r !== "");
}
