/**
 * Text measures shared by the rule verifiers: case folding, word and sentence splitting,
 * syllables. Kept in one module because several rules must count the same way.
 */

/** Unicode-aware case folding: NFKC, then lower case (so "Ｒｅｖｅｎｕｅ" matches "revenue"). */
export function fold(text: string): string {
  return text.normalize("NFKC").toLocaleLowerCase("en-US");
}

// The last output folded: an output's includes and excludes criteria are checked one after the
// other (the batched path runs all of an output's checks together), and each would fold it again.
let lastText: string | undefined;
let lastFolded = "";

/** {@link fold} of an output, remembered for the next criterion that asks about the same text. */
export function foldOutput(text: string): string {
  if (text !== lastText) {
    lastFolded = fold(text);
    lastText = text;
  }
  return lastFolded;
}

/** Characters as a person counts them: code points after NFC (a surrogate pair is one), without an array of them. */
export function countCharacters(text: string): number {
  const normalized = text.normalize("NFC");
  let n = normalized.length;
  for (let i = 0; i < normalized.length; i++) {
    const code = normalized.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < normalized.length) {
      const next = normalized.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
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
