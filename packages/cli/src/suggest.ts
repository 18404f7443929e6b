/**
 * "Did you mean …?" for a mistyped command or flag: the closest known name by edit distance,
 * when it is close enough to be a typo (at most a third of the name's length, at least 1), or
 * the only known name the input is a prefix of.
 *
 * @example
 * suggest("scor", ["validate", "score", "schema"]); // "score"
 * suggest("deploy", ["validate", "score"]);         // undefined
 */
export function suggest(input: string, known: readonly string[]): string | undefined {
  const prefixed = known.filter((name) => name.startsWith(input));
  if (input.length > 0 && prefixed.length === 1) return prefixed[0];
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of known) {
    const d = editDistance(input, name);
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  return bestDistance <= Math.max(1, Math.floor(input.length / 3)) ? best : undefined;
}

/** Levenshtein distance (insert, delete, substitute), one row at a time. */
function editDistance(a: string, b: string): number {
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
