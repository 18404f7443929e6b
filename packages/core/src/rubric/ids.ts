import { z } from "zod";

/*
 * What a criterion or rule id may be. Ids key verdicts, weights and cache entries, and people read
 * them in reports, so two rules hold besides uniqueness: an id is never one of the names a plain
 * JavaScript object treats specially (a verdict stored under `__proto__` in an object vanishes),
 * and it holds no character a reader cannot see (a zero-width space makes two ids that print
 * alike, a bidi control makes one print as another). Ids that differ only in compatibility forms
 * (`ｃ` and `c`) are allowed but warned about.
 */

/** A criterion or rule id: non-empty, not reserved, nothing invisible in it. */
export const IdSchema = z
  .string()
  .min(1)
  .superRefine((id, ctx) => {
    const problem = idProblem(id);
    if (problem !== undefined) ctx.addIssue({ code: "custom", input: id, message: problem });
  });

/** Ids refused because plain objects give them a meaning of their own. */
export const RESERVED_IDS: readonly string[] = ["__proto__", "constructor", "prototype"];

// Names for the invisible characters met in practice; any other is named by its category.
const INVISIBLE_NAMES: ReadonlyMap<number, string> = new Map([
  [0x00ad, "SOFT HYPHEN"],
  [0x061c, "ARABIC LETTER MARK"],
  [0x180e, "MONGOLIAN VOWEL SEPARATOR"],
  [0x200b, "ZERO WIDTH SPACE"],
  [0x200c, "ZERO WIDTH NON-JOINER"],
  [0x200d, "ZERO WIDTH JOINER"],
  [0x200e, "LEFT-TO-RIGHT MARK"],
  [0x200f, "RIGHT-TO-LEFT MARK"],
  [0x202a, "LEFT-TO-RIGHT EMBEDDING"],
  [0x202b, "RIGHT-TO-LEFT EMBEDDING"],
  [0x202c, "POP DIRECTIONAL FORMATTING"],
  [0x202d, "LEFT-TO-RIGHT OVERRIDE"],
  [0x202e, "RIGHT-TO-LEFT OVERRIDE"],
  [0x2060, "WORD JOINER"],
  [0x2066, "LEFT-TO-RIGHT ISOLATE"],
  [0x2067, "RIGHT-TO-LEFT ISOLATE"],
  [0x2068, "FIRST STRONG ISOLATE"],
  [0x2069, "POP DIRECTIONAL ISOLATE"],
  [0xfeff, "ZERO WIDTH NO-BREAK SPACE (BOM)"],
]);

// Format characters (Cf: zero-width, bidi controls, the BOM, tag characters) and controls (Cc).
const INVISIBLE = /[\p{Cf}\p{Cc}]/gu;

function codePoint(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * Why `id` may not be an id, or undefined when it may: a reserved name, or the first invisible
 * character it holds, named by code point.
 *
 * @example
 * idProblem("a\u200bb"); // 'holds U+200B ZERO WIDTH SPACE at index 1, an invisible character; …'
 */
export function idProblem(id: string): string | undefined {
  if (RESERVED_IDS.includes(id))
    return `${JSON.stringify(id)} is reserved (${RESERVED_IDS.join(", ")} have a meaning of their own in JavaScript objects, where verdicts are keyed by id); choose another id`;
  INVISIBLE.lastIndex = 0;
  const found = INVISIBLE.exec(id);
  if (!found) return undefined;
  const cp = found[0].codePointAt(0)!;
  const name = INVISIBLE_NAMES.get(cp) ?? (/\p{Cc}/u.test(found[0]) ? "a control character" : "a format character");
  return `holds ${codePoint(cp)} ${name} at index ${found.index}, an invisible character; ids must read as they are`;
}

/**
 * Pairs of distinct ids that are one under NFKC normalisation and case folding (`ｃ` and `c`,
 * `ﬁ` and `fi`, `Tone` and `tone`): legal, but a reader cannot tell them apart. Each later id of
 * such a pair is reported at its path, naming the earlier one.
 *
 * @example
 * confusableIdWarnings([{ id: "c", path: "criteria[0].id" }, { id: "ｃ", path: "criteria[1].id" }]);
 * // [{ path: "criteria[1].id", message: 'id "ｃ" reads like "c" (criteria[0].id): …' }]
 */
export function confusableIdWarnings(
  ids: readonly { readonly id: string; readonly path: string }[],
): { path: string; message: string }[] {
  const first = new Map<string, { id: string; path: string }>();
  const warnings: { path: string; message: string }[] = [];
  for (const entry of ids) {
    const key = entry.id.normalize("NFKC").toLowerCase().normalize("NFKC");
    const earlier = first.get(key);
    if (earlier === undefined) first.set(key, entry);
    else if (earlier.id !== entry.id)
      warnings.push({
        path: entry.path,
        message: `id ${JSON.stringify(entry.id)} reads like ${JSON.stringify(earlier.id)} (${earlier.path}): they are equal under NFKC normalisation and case folding; rename one so that reports tell them apart`,
      });
  }
  return warnings;
}
