import type { Rng } from "../random/index.js";
import { PolicyInputError } from "./errors.js";

/**
 * log softmax(logits), stable for large logits (the maximum is subtracted before exponentiating).
 * A logit of −∞ is a masked-out choice: its log-probability is −∞.
 */
export function logSoftmax(logits: ArrayLike<number>): Float64Array {
  let top = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < logits.length; i++) top = Math.max(top, logits[i]!);
  if (top === Number.NEGATIVE_INFINITY || Number.isNaN(top))
    throw new PolicyInputError(
      "logits",
      `expected at least one finite logit, got [${Array.from(logits, String).join(", ")}]`,
    );
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i]! - top);
  const lse = top + Math.log(sum);
  return Float64Array.from({ length: logits.length }, (_, i) => logits[i]! - lse);
}

/**
 * A choice drawn from the categorical distribution with these log-probabilities, sharpened or
 * flattened by `temperature` (p ∝ exp(logp / temperature)). Choices at −∞ are never drawn.
 */
export function sampleCategorical(logps: ArrayLike<number>, rng: Rng, temperature = 1): number {
  if (!(temperature > 0)) throw new PolicyInputError("temperature", `expected a number > 0, got ${temperature}`);
  const weights = Array.from(logps, (l) => (l === Number.NEGATIVE_INFINITY ? 0 : Math.exp(l / temperature)));
  let u = rng.next() * weights.reduce((a, b) => a + b, 0);
  for (let i = 0; i < weights.length; i++) {
    u -= weights[i]!;
    if (u < 0 && weights[i]! > 0) return i;
  }
  // Rounding can leave u at 0 after the last weight: the last possible choice.
  return weights.findLastIndex((w) => w > 0);
}
