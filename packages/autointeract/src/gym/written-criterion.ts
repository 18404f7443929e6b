import type { VerifierSpec } from "@rubric/core";
import { CRITERIA_BANK } from "./bank.js";

/**
 * How a criterion a manager wrote as text is verified: by a rule (a verifier of
 * `@rubric/verifiers` the text determines), or by the judge when no template reads it.
 */
export type WrittenCriterionVerifier =
  | { readonly kind: "rule"; readonly verifier: VerifierSpec; readonly template: string }
  | { readonly kind: "judge" };

const NUMBER_WORDS: Record<string, number> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
};

/** "3", "three" or "3,000" as a number; undefined otherwise. */
function count(text: string): number | undefined {
  const word = NUMBER_WORDS[text.toLowerCase()];
  if (word !== undefined) return word;
  const n = Number(text.replace(/,/g, ""));
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const N = "(\\d[\\d,]*|one|two|three|four|five|six|seven|eight|nine|ten)";

interface Template {
  readonly name: string;
  readonly pattern: RegExp;
  readonly verifier: (match: RegExpMatchArray) => VerifierSpec | undefined;
}

/**
 * The families of the gym's bank with their numbers, names and terms open: a manager that writes
 * "Includes at least three tables" or "Has a "Methodology" section" gets the rule the bank's
 * wording implies, not only the bank's own instances.
 */
const TEMPLATES: readonly Template[] = [
  {
    name: "section",
    pattern: /^has an? "([^"]+)" section$/i,
    verifier: ([, name]) => ({ kind: "regex", pattern: `^## ${escapeRegex(name!)}\\b`, flags: "m" }),
  },
  {
    name: "tables-min",
    pattern: new RegExp(`^includes at least ${N} tables?$`, "i"),
    verifier: ([, n]) => ({ kind: "markdown", tables: { min: count(n!)! } }),
  },
  {
    name: "bullets-min",
    pattern: new RegExp(
      `^(?:uses a bulleted list of|lists the key points as bullets \\()at least ${N} (?:points|bullets)?\\)?$`,
      "i",
    ),
    verifier: ([, n]) => ({ kind: "markdown", bullets: { min: count(n!)! } }),
  },
  {
    name: "words-max",
    pattern: new RegExp(`^is (?:short|brief|concise)?:? ?at most ${N} words$`, "i"),
    verifier: ([, n]) => ({ kind: "length", unit: "words", max: count(n!)! }),
  },
  {
    name: "words-min",
    pattern: new RegExp(`^is (?:thorough|detailed)?:? ?at least ${N} words(?: long)?$`, "i"),
    verifier: ([, n]) => ({ kind: "length", unit: "words", min: count(n!)! }),
  },
  {
    name: "words-between",
    pattern: new RegExp(`^is between ${N} and ${N} words(?: long)?$`, "i"),
    verifier: ([, lo, hi]) => {
      const min = count(lo!)!;
      const max = count(hi!)!;
      return min <= max ? { kind: "length", unit: "words", min, max } : undefined;
    },
  },
  {
    name: "sentences-max",
    pattern: new RegExp(`^keeps to at most ${N} sentences$`, "i"),
    verifier: ([, n]) => ({ kind: "length", unit: "sentences", max: count(n!)! }),
  },
  {
    name: "cites-min",
    pattern: new RegExp(`^(?:cites|backs its claims with) at least ${N} (?:cited )?sources?$`, "i"),
    verifier: ([, n]) => ({ kind: "citations", min: count(n!)!, styles: ["bracket"] }),
  },
  {
    name: "brief-term",
    pattern: /^(?:addresses|mentions|covers) "([^"]+)"(?: from the brief)?$/i,
    verifier: ([, term]) => ({ kind: "includes", terms: [term!] }),
  },
  {
    name: "avoids-terms",
    pattern: /^avoids (?:the words? )?((?:"[^"]+"(?:, | and | or )?)+)$/i,
    verifier: ([, list]) => ({
      kind: "excludes",
      terms: [...list!.matchAll(/"([^"]+)"/g)].map((m) => m[1]!),
      wholeWord: true,
    }),
  },
];

const BANK_BY_TEXT = new Map(CRITERIA_BANK.map((c) => [c.text.toLowerCase(), c]));

/**
 * The verifier of a criterion written as text: the bank's own when the text is a bank
 * criterion's, else the first template that reads it (its numbers, names and quoted terms
 * copied into the rule), else the judge. Case and a final full stop do not matter.
 *
 * @example
 * writtenCriterionVerifier('Includes at least three tables');
 * // { kind: "rule", template: "tables-min", verifier: { kind: "markdown", tables: { min: 3 } } }
 * writtenCriterionVerifier("Sounds confident"); // { kind: "judge" }
 */
export function writtenCriterionVerifier(text: string): WrittenCriterionVerifier {
  const clean = text.trim().replace(/\.$/, "").replace(/\s+/g, " ");
  const bank = BANK_BY_TEXT.get(clean.toLowerCase());
  if (bank !== undefined) return { kind: "rule", verifier: bank.verifier, template: `bank:${bank.id}` };
  for (const template of TEMPLATES) {
    const match = clean.match(template.pattern);
    if (match === null) continue;
    const verifier = template.verifier(match);
    if (verifier !== undefined) return { kind: "rule", verifier, template: template.name };
  }
  return { kind: "judge" };
}
