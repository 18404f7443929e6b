/**
 * Text measures shared by the rule verifiers: case folding, word and sentence splitting,
 * syllables. Kept in one module because several rules must count the same way.
 */

/** Unicode-aware case folding: NFKC, then lower case (so "Ｒｅｖｅｎｕｅ" matches "revenue"). */
export function fold(text: string): string {
  return text.normalize("NFKC").toLocaleLowerCase("en-US");
}

const WORD = /[\p{L}\p{N}]+(?:['’.-][\p{L}\p{N}]+)*/gu;

export function words(text: string): string[] {
  return text.match(WORD) ?? [];
}

/** Sentences end at . ! ? (or a line break after text); abbreviations such as "e.g." are not special-cased. */
export function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n{2,}/u)
    .map((s) => s.trim())
    .filter((s) => /[\p{L}\p{N}]/u.test(s));
}

/** English syllable estimate: vowel groups, minus a silent final e, at least one. */
export function syllables(word: string): number {
  const w = word.toLowerCase().replace(/[^a-z]/g, "");
  if (w.length === 0) return 0;
  if (w.length <= 3) return 1;
  const trimmed = w.replace(/(?:[^laeiouy]es|ed|[^laeiouy]e)$/, "").replace(/^y/, "");
  const groups = trimmed.match(/[aeiouy]{1,2}/g);
  return Math.max(1, groups?.length ?? 1);
}

/** Escapes a literal for use inside a RegExp. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
