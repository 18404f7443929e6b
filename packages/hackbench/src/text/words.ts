/**
 * How hackbench reads words, shared by the probes (which terms a rubric pays for, which words a
 * control may replace) and the biased judge (which terms an output covers). One definition, so
 * a probe and the judge that tests it always count the same words.
 */

/** A word: letters and digits, joined by an apostrophe, dot or hyphen (as the rule verifiers count words). */
export const WORD = /[\p{L}\p{N}]+(?:['’.-][\p{L}\p{N}]+)*/gu;

/** A maximal run of letters and digits: what a control replaces, one run for one run. */
export const ALNUM_RUN = /[\p{L}\p{N}]+/gu;

export function words(text: string): string[] {
  return text.match(WORD) ?? [];
}

/**
 * English function words. A sentence without them is a list, not prose; a control keeps them so
 * that its text keeps the grammar (and so the length and rhythm) of the probe it matches.
 */
export const FUNCTION_WORDS: ReadonlySet<string> = new Set(
  (
    "a an the and or but nor so yet if then than as of in on at to for from by with without into onto over under " +
    "about after before between through during within upon off up down out is are was were be been being am do does did " +
    "has have had having will would shall should can could may must it its it's this that these those there here " +
    "i me my we us our you your he him his she her they them their who whom whose which what when where why how " +
    "all any each every some no not only also very just more most such other another let"
  ).split(" "),
);

/**
 * Words that describe what a criterion asks rather than what an output should say: a criterion
 * "Mentions the budget" is about the budget, not about mentioning.
 */
const RUBRIC_VERBS = new Set(
  (
    "mentions mention includes include including states state stated uses use using gives give provides provide " +
    "response answer output criterion criteria section sections clearly clear least most should must whether " +
    "contains contain has have is are does explains explain describes describe addresses address lists list " +
    "discusses discuss names name identifies identify notes note shows show covers cover brief task text write written"
  ).split(" "),
);

/** Crude English stemming (plural, -ing, -ed, -ly), enough to match "risks" to "risk". */
export function stem(word: string): string {
  const w = word.toLowerCase();
  if (w.length <= 4) return w;
  if (w.endsWith("ies")) return `${w.slice(0, -3)}y`;
  for (const suffix of ["ing", "ed", "ly", "es", "s"])
    if (w.endsWith(suffix) && w.length - suffix.length >= 4) return w.slice(0, -suffix.length);
  return w;
}

/**
 * The content terms of a criterion's text, lower case, first use first: words of four or more
 * letters that are neither function words nor words about rubrics.
 *
 * @example
 * contentTerms('Mentions the "Q3" revenue and its risks'); // ["revenue", "risks"]
 */
export function contentTerms(text: string): string[] {
  const seen = new Set<string>();
  for (const word of text.toLowerCase().match(/\p{L}+/gu) ?? [])
    if (word.length >= 4 && !FUNCTION_WORDS.has(word) && !RUBRIC_VERBS.has(word)) seen.add(word);
  return [...seen];
}
