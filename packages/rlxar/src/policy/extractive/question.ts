import { isStopword, type Word, words } from "./spans.js";

/** What kind of answer the question's wh-phrase asks for. */
export type AnswerType = "person" | "time" | "count" | "place" | "entity" | "other";

export const ANSWER_TYPES: readonly AnswerType[] = ["person", "time", "count", "place", "entity", "other"];

/** What a question says about its answer before anything is retrieved. */
export interface QuestionCues {
  readonly words: readonly Word[];
  /** The question's content words (lower-case, possessive "'s" dropped): what overlap is measured on. */
  readonly content: ReadonlySet<string>;
  readonly type: AnswerType;
  /** Starts with an auxiliary ("Are", "Was", "Did", …): a yes/no question. */
  readonly yesNo: boolean;
  /** "both", "same", "either": the comparison questions whose answers are yes or no. */
  readonly comparison: boolean;
  /** "X or Y": the answer is usually one of the alternatives the question names. */
  readonly choice: boolean;
}

const AUXILIARIES = new Set("is are was were do does did has have had can could will would should am".split(" "));

// The earliest wh-phrase decides ("In what year was the university where …" asks for a time);
// at one position the more specific pattern, listed first, wins.
const TYPE_PATTERNS: readonly [AnswerType, RegExp][] = [
  ["count", /\bhow (?:many|much|long|old|tall|big|far)\b/u],
  ["time", /\b(?:what|which) (?:year|date|decade|century|month)\b|\bwhen\b/u],
  ["person", /\bwho(?:m|se)?\b/u],
  ["place", /\bwhere\b|\b(?:what|which) (?:city|country|state|town)\b/u],
  ["entity", /\b(?:what|which)\b/u],
];

/** A word as overlap counts it: lower-case, without a possessive. */
export function contentKey(word: Word): string {
  return word.lower.replace(/['’]s$/u, "");
}

export function questionCues(question: string): QuestionCues {
  const ws = words(question);
  const lower = question.toLowerCase();
  let type: AnswerType = "other";
  let at = Number.POSITIVE_INFINITY;
  for (const [kind, pattern] of TYPE_PATTERNS) {
    const index = lower.search(pattern);
    if (index >= 0 && index < at) {
      at = index;
      type = kind;
    }
  }
  return {
    words: ws,
    content: new Set(ws.filter((w) => !w.stopword).map(contentKey)),
    type,
    yesNo: ws.length > 0 && AUXILIARIES.has(ws[0]!.lower),
    comparison: /\b(?:both|same|either|also)\b/u.test(lower),
    choice: /\bor\b/u.test(lower),
  };
}

/** Content words of a span that are not function words, as overlap keys. */
export function contentKeys(ws: readonly Word[], start: number, end: number): string[] {
  const out: string[] = [];
  for (let i = start; i < end; i++) if (!isStopword(ws[i]!.lower)) out.push(contentKey(ws[i]!));
  return out;
}
