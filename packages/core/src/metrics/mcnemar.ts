import { StatisticsInputError } from "./errors.js";
import { logGamma } from "./special.js";

/** Outcome of an exact McNemar test on paired binary outcomes. */
export interface McNemarResult {
  /** Pairs where the first is right and the second wrong. */
  readonly b: number;
  /** Pairs where the second is right and the first wrong. */
  readonly c: number;
  /** Two-sided: 2·P(X ≤ min(b, c)) for X ~ Binomial(b + c, ½), at most 1; 1 when no pair differs. */
  readonly pValue: number;
}

/**
 * Exact McNemar test (the binomial test on the discordant pairs) of two paired binary outcomes,
 * e.g. two methods' exact match on the same questions: only the pairs where they differ carry
 * information, and under the null each difference is a fair coin (statsmodels'
 * `mcnemar(table, exact=True)` is the same test).
 *
 * @example
 * mcnemarExact([1, 1, 1, 0, 1, 1, 0, 1], [0, 0, 1, 0, 0, 0, 1, 1]); // { b: 4, c: 1, pValue: ≈0.375 }
 */
export function mcnemarExact(first: readonly number[], second: readonly number[]): McNemarResult {
  if (first.length !== second.length)
    throw new StatisticsInputError(`first and second must pair up, got ${first.length} and ${second.length} outcomes`);
  let b = 0;
  let c = 0;
  for (let i = 0; i < first.length; i++) {
    const x = first[i]!;
    const y = second[i]!;
    if ((x !== 0 && x !== 1) || (y !== 0 && y !== 1))
      throw new StatisticsInputError(`outcomes must be 0 or 1, got ${x} and ${y} at index ${i}`);
    if (x > y) b++;
    else if (y > x) c++;
  }
  const n = b + c;
  if (n === 0) return { b, c, pValue: 1 };
  const low = Math.min(b, c);
  // P(X ≤ low) summed in log space: n can be thousands when many questions are paired.
  const logHalfPower = n * Math.log(0.5);
  let tail = 0;
  for (let k = 0; k <= low; k++) {
    tail += Math.exp(logGamma(n + 1) - logGamma(k + 1) - logGamma(n - k + 1) + logHalfPower);
  }
  return { b, c, pValue: Math.min(1, 2 * tail) };
}
