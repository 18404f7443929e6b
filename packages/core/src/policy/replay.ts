import { PolicyInputError, describeValue, requireFinite } from "./errors.js";

/**
 * Prioritized replay (ARCANE): the episodes whose return is ≤ the p-th percentile of all returns,
 * in their original order. The percentile interpolates linearly between order statistics, like
 * numpy's default `np.percentile(returns, p)`. `percentile` lies in (0, 100]; 100 keeps everything.
 * The return is read from `episode.return` unless `returnOf` says otherwise.
 *
 * @example
 * const episodes = [{ id: "a", return: 0.9 }, { id: "b", return: 0.1 }, { id: "c", return: 0.5 }];
 * // 50th percentile of [0.1, 0.5, 0.9] = 0.5
 * prioritizedReplay(episodes, 50); // → [{ id: "b", … }, { id: "c", … }]
 * prioritizedReplay([{ score: 2 }, { score: 1 }], 10, (e) => e.score); // → [{ score: 1 }]
 */
export function prioritizedReplay<T extends { readonly return: number }>(
  episodes: readonly T[],
  percentile: number,
): T[];
export function prioritizedReplay<T>(episodes: readonly T[], percentile: number, returnOf: (episode: T) => number): T[];
export function prioritizedReplay<T>(
  episodes: readonly T[],
  percentile: number,
  returnOf?: (episode: T) => number,
): T[] {
  if (!Array.isArray(episodes)) {
    throw new PolicyInputError("episodes", `expected an array of episodes, got ${describeValue(episodes)}`);
  }
  if (episodes.length === 0) throw new PolicyInputError("episodes", "expected at least one episode, got none");
  if (typeof percentile !== "number" || !(percentile > 0 && percentile <= 100)) {
    throw new PolicyInputError("percentile", `expected a number in (0, 100], got ${describeValue(percentile)}`);
  }
  const returns = episodes.map((episode, i) =>
    returnOf === undefined
      ? requireFinite(`episodes[${i}].return`, (episode as { return?: unknown } | null)?.return)
      : requireFinite(`returnOf(episodes[${i}])`, returnOf(episode)),
  );
  const threshold = linearPercentile(returns, percentile);
  return episodes.filter((_, i) => returns[i]! <= threshold);
}

/** numpy.percentile(values, p) with method="linear", including numpy's two-sided lerp. */
function linearPercentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const position = (p / 100) * (n - 1);
  const below = Math.floor(position);
  const above = Math.min(below + 1, n - 1);
  const fraction = position - below;
  const a = sorted[below]!;
  const b = sorted[above]!;
  const difference = b - a;
  // numpy's _lerp interpolates from the nearer end, so the result is exact at fraction 0 and 1.
  return fraction >= 0.5 ? b - difference * (1 - fraction) : a + difference * fraction;
}
