import { z } from "zod";
import { escapeRegExp, fold, foldOutput } from "./text.js";

/** The spec fields `includes` and `excludes` share, so that both find a term the same way. */
export const termOptions = {
  terms: z.array(z.string().min(1)).min(1),
  /** Case-insensitive by default, with Unicode folding. */
  caseSensitive: z.boolean().default(false),
  wholeWord: z.boolean().default(false),
};

/** Finds a term in folded or raw text, optionally only as a whole word. */
export function containsTerm(
  haystack: string,
  term: string,
  options: { caseSensitive: boolean; wholeWord: boolean },
): boolean {
  const h = options.caseSensitive ? haystack : foldOutput(haystack);
  const t = options.caseSensitive ? term : foldTerm(term);
  if (!options.wholeWord) return h.includes(t);
  return new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(t)}(?![\\p{L}\\p{N}])`, "u").test(h);
}

// Terms come from rubrics, a few hundred at most; folding one costs as much as the search.
const foldedTerms = new Map<string, string>();
function foldTerm(term: string): string {
  let folded = foldedTerms.get(term);
  if (folded === undefined) {
    if (foldedTerms.size >= 10_000) foldedTerms.clear();
    folded = fold(term);
    foldedTerms.set(term, folded);
  }
  return folded;
}
