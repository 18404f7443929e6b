/**
 * HotpotQA's answer metrics with the official evaluation script's semantics
 * (`hotpot_evaluate_v1.py`), and ARCO's exact-match variant beside them.
 *
 * Normalisation, in the official order: lower-case; drop ASCII punctuation (Python's
 * `string.punctuation`); drop the words a, an, the (Python's Unicode-aware `\b`, so a letter such
 * as é next to them keeps them); collapse whitespace as Python's `str.split()` sees it.
 */

const PUNCTUATION = new Set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~");
// Python 3's `\b(a|an|the)\b` on str: word characters are Unicode letters, digits and `_`.
const ARTICLES = /(?<![\p{L}\p{N}_])(?:a|an|the)(?![\p{L}\p{N}_])/gu;
const SPECIAL = new Set(["yes", "no", "noanswer"]);
// Python's `str.split()` whitespace, which differs from JavaScript's `\s`: it has the separators
// U+001C–U+001F and NEL (U+0085), and not the byte-order mark U+FEFF ("Yes\ufeff" is not "yes"
// there). Code points, not a regular expression: a character class of control characters is what
// a reader (and the linter) takes for a mistake.
const PYTHON_WHITESPACE = new Set([
  0x09,
  0x0a,
  0x0b,
  0x0c,
  0x0d,
  0x1c,
  0x1d,
  0x1e,
  0x1f,
  0x20,
  0x85,
  0xa0,
  0x1680,
  ...Array.from({ length: 11 }, (_, i) => 0x2000 + i),
  0x2028,
  0x2029,
  0x202f,
  0x205f,
  0x3000,
]);

/** `text.split()` as Python splits a str: on runs of its whitespace, empty pieces dropped. */
function pythonSplit(text: string): string[] {
  const words: string[] = [];
  let word = "";
  for (const ch of text) {
    if (PYTHON_WHITESPACE.has(ch.codePointAt(0)!)) {
      if (word !== "") words.push(word);
      word = "";
    } else word += ch;
  }
  if (word !== "") words.push(word);
  return words;
}

/**
 * An answer as the official script compares it.
 *
 * @example
 * normalizeAnswer("The  Eiffel Tower!"); // "eiffel tower"
 */
export function normalizeAnswer(text: string): string {
  const lower = text.toLowerCase();
  let unpunctuated = "";
  for (const ch of lower) if (!PUNCTUATION.has(ch)) unpunctuated += ch;
  return pythonSplit(unpunctuated.replace(ARTICLES, " ")).join(" ");
}

/** Official exact match: the normalised strings are equal. */
export function exactMatch(prediction: string, gold: string): number {
  return normalizeAnswer(prediction) === normalizeAnswer(gold) ? 1 : 0;
}

/**
 * ARCO's exact match (its `metrics.py`): the official one, and besides, a yes/no gold counts when
 * it appears within the first three characters of the normalised prediction ("yes, it is" → 1).
 * Reported beside the official EM, never instead of it.
 */
export function arcoExactMatch(prediction: string, gold: string): number {
  const p = normalizeAnswer(prediction);
  const g = normalizeAnswer(gold);
  if ((g === "yes" || g === "no") && p.slice(0, 3).includes(g)) return 1;
  return p === g ? 1 : 0;
}

/**
 * Official token F1, with its rule for yes / no / noanswer: when either side is one of them and
 * the two differ, F1 is 0.
 *
 * @example
 * f1Score("the Eiffel Tower in Paris", "Eiffel Tower"); // 2/3: precision 2/4, recall 2/2
 */
export function f1Score(prediction: string, gold: string): number {
  const p = normalizeAnswer(prediction);
  const g = normalizeAnswer(gold);
  if ((SPECIAL.has(p) || SPECIAL.has(g)) && p !== g) return 0;
  const predicted = p.split(" ").filter(Boolean);
  const expected = g.split(" ").filter(Boolean);
  const counts = new Map<string, number>();
  for (const token of expected) counts.set(token, (counts.get(token) ?? 0) + 1);
  let same = 0;
  for (const token of predicted) {
    const left = counts.get(token) ?? 0;
    if (left > 0) {
      same++;
      counts.set(token, left - 1);
    }
  }
  if (same === 0) return 0;
  const precision = same / predicted.length;
  const recall = same / expected.length;
  return (2 * precision * recall) / (precision + recall);
}
