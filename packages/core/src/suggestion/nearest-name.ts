/** How far a typo may stray from the name it meant. */
export interface NearestNameOptions {
  /**
   * The smallest edit distance still read as a typo, however short the input (default 1). The
   * tolerance is this or a third of the input's length, whichever is larger.
   */
  readonly minTolerance?: number;
  /** Compare case-insensitively (default false: flags and commands are case-sensitive). */
  readonly ignoreCase?: boolean;
}

/**
 * "Did you mean …?": the known name a mistyped one most likely meant — the only known name it is a
 * prefix of, else the name at the smallest edit distance when that distance looks like a typo (at
 * most a third of the input's length, at least `minTolerance`). Undefined when nothing is close.
 *
 * One rule for every suggestion the toolkit makes (CLI commands and flags, verifier kinds), so a
 * user meets the same judgement of "close" everywhere.
 *
 * @example
 * nearestName("scor", ["validate", "score", "schema"]); // "score"  (distance 1)
 * nearestName("hack", ["score", "hackbench"]);           // "hackbench" (the only name it starts)
 * nearestName("deploy", ["validate", "score"]);          // undefined
 */
export function nearestName(
  input: string,
  known: readonly string[],
  options: NearestNameOptions = {},
): string | undefined {
  const fold = (s: string): string => (options.ignoreCase === true ? s.toLowerCase() : s);
  const typed = fold(input);
  const prefixed = known.filter((name) => fold(name).startsWith(typed));
  if (typed.length > 0 && prefixed.length === 1) return prefixed[0];
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of known) {
    const d = editDistance(typed, fold(name));
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  const tolerance = Math.max(options.minTolerance ?? 1, Math.floor(typed.length / 3));
  return bestDistance <= tolerance ? best : undefined;
}

/**
 * Levenshtein distance (insert, delete, substitute), one row at a time.
 *
 * @example
 * editDistance("kitten", "sitting"); // 3
 */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost));
    }
    previous = row;
  }
  return previous[b.length]!;
}
