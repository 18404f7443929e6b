import { requireFiniteValues } from "./input.js";

/** Ranks with ties averaged, plus the size of every tied group (singletons left out). */
export interface TiedRanks {
  readonly ranks: number[];
  readonly tieSizes: number[];
}

/**
 * 1-based ranks with tied values sharing the mean of their ranks, as
 * `scipy.stats.rankdata(values, method="average")`.
 *
 * @example
 * averageRanks([10, 20, 20, 5]); // [2, 3.5, 3.5, 1]
 */
export function averageRanks(values: readonly number[]): number[] {
  requireFiniteValues("values", values, 0);
  return rankWithTies(values).ranks;
}

/** Unchecked core of `averageRanks`, for callers that validated already and need the tie sizes too. */
export function rankWithTies(values: readonly number[]): TiedRanks {
  const order = sortedOrder(values);
  const ranks = new Array<number>(values.length);
  const tieSizes: number[] = [];
  let start = 0;
  while (start < order.length) {
    let end = start + 1;
    while (end < order.length && values[order[end]!] === values[order[start]!]) end++;
    // Positions start..end-1 hold equal values: ranks start+1..end, whose mean is this.
    const shared = (start + 1 + end) / 2;
    for (let i = start; i < end; i++) ranks[order[i]!] = shared;
    if (end - start > 1) tieSizes.push(end - start);
    start = end;
  }
  return { ranks, tieSizes };
}

/** Indices of `values` in ascending order of value (stable). */
function sortedOrder(values: readonly number[]): number[] {
  return values.map((_, index) => index).sort((a, b) => values[a]! - values[b]!);
}
