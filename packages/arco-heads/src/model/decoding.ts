import { createRng, type Rng, type RngState } from "@rubric/core";
import { ArcoInputError } from "../errors.js";

/** How the generation head picks each criteria token. */
export type Decoding =
  /** The most likely token (ties: the lowest id); the default, and ARCO's at evaluation. */
  | { readonly mode: "greedy" }
  /**
   * A draw from softmax(logits / temperature). Each step gets its own stream, forked from `seed`
   * by the step's index in the call, so a step's criteria do not depend on the batch it ran in.
   */
  | { readonly mode: "sampled"; readonly seed: number | string; readonly temperature?: number };

/** The temperature ARCO samples at. */
export const DEFAULT_TEMPERATURE = 0.7;

/** What a backend needs to decode: the temperature (0 = greedy) and, when sampling, one stream per row. */
export interface DecodingPlan {
  readonly temperature: number;
  readonly streams?: readonly RngState[];
}

/** The per-row plan for the steps at `indices` (their positions in the caller's list). */
export function decodingPlan(decoding: Decoding, indices: readonly number[]): DecodingPlan {
  if (decoding.mode === "greedy") return { temperature: 0 };
  const temperature = decoding.temperature ?? DEFAULT_TEMPERATURE;
  if (!(temperature > 0) || !Number.isFinite(temperature))
    throw new ArcoInputError("decoding.temperature", `expected a finite number > 0, got ${temperature}`);
  const root = createRng(decoding.seed);
  return { temperature, streams: indices.map((i) => root.fork(`step:${i}`).state()) };
}

/**
 * The next token from one row of logits, exactly as the sidecar's `mu.generate` picks it (both
 * backends must write the same criteria): greedy is the first maximum; sampling takes
 * p = softmax(logits / temperature) in doubles, one draw u from the row's stream, and the lowest
 * id whose running sum of p exceeds u·Σp (the highest id with p > 0 when rounding leaves none).
 */
export function pickToken(logits: ArrayLike<number>, temperature: number, rng: Rng | undefined): number {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i]! > logits[best]!) best = i;
  if (temperature === 0 || rng === undefined) return best;
  const top = logits[best]!;
  const weights = new Float64Array(logits.length);
  let total = 0;
  for (let i = 0; i < logits.length; i++) {
    weights[i] = Math.exp((logits[i]! - top) / temperature);
    total += weights[i]!;
  }
  const threshold = rng.next() * total;
  let running = 0;
  let last = best;
  for (let i = 0; i < weights.length; i++) {
    if (weights[i]! > 0) last = i;
    running += weights[i]!;
    if (running > threshold) return i;
  }
  return last;
}
