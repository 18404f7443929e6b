import { z } from "zod";

/** A finite, non-negative weight. NaN and ±Infinity are rejected by z.number() itself. */
export const WeightSchema = z.number().min(0);

/**
 * The issue for weights that are each finite but whose sum is not (1e308 + 1e308), or none.
 * Scoring divides the weights by a power of two before it sums them, so such weights would still
 * score; they are refused all the same because every total or maximum reported in weight units
 * would be Infinity (`null` in JSON), and no real rubric needs them.
 */
export function weightSumIssue(
  weights: readonly number[],
  path: (string | number)[],
): { code: "custom"; path: (string | number)[]; message: string } | undefined {
  const sum = weights.reduce((a, b) => a + b, 0);
  if (Number.isFinite(sum)) return undefined;
  return {
    code: "custom",
    path,
    message: `expected weights whose sum is finite, got ${weights.length} weights summing past Number.MAX_VALUE (≈1.8e308); scale them down`,
  };
}
