import { klPenaltyOfSequence, readClippedObjectiveInput, type ClippedObjectiveInput } from "./objective.js";

/** Arguments of {@link gspoObjective}; clip widths default to the paper's ε_low = 3e-4, ε_high = 4e-4. */
export type GspoObjectiveInput = ClippedObjectiveInput;

/** What {@link gspoObjective} returns. */
export interface GspoObjectiveResult {
  /** −(1/K) Σ_k min(s_k·A_k, clip(s_k, 1−ε_low, 1+ε_high)·A_k) + β·KL. */
  readonly loss: number;
  /** The sequence ratios s_k = exp(masked mean_t (logpNew − logpOld)), one per sequence. */
  readonly ratios: number[];
  /** Fraction of sequences whose clipped term is the active one (so they get no gradient). */
  readonly clippedFraction: number;
  /** ∂loss/∂logpNew[k][t]; zero at masked tokens and throughout clipped sequences (KL aside). */
  readonly gradLogpNew: number[][];
  /** KL = (1/K) Σ_k masked-mean_t k3, unscaled by β; present whenever `logpRef` is given. */
  readonly kl?: number;
}

const GSPO_DEFAULTS = { epsLow: 3e-4, epsHigh: 4e-4 } as const;

/**
 * GSPO's sequence-level clipped surrogate loss (ARCANE Stage II) and its gradient with respect
 * to the new log-probabilities. A sequence is clipped when A > 0 and s > 1 + ε_high, or A < 0
 * and s < 1 − ε_low; the bounds themselves are not clipped (like torch.clamp).
 *
 * @example
 * // one sequence, log-ratios 0 and 0.0002: s = exp(0.0001) ≈ 1.0001 (inside the clip range),
 * // loss = −s·A = −2.0002…, gradient −A·s/(K·|m|) = −1.0001… per token
 * gspoObjective({ logpNew: [[-1, -2]], logpOld: [[-1, -2.0002]], advantages: [2] });
 * // → { loss: -2.0002…, ratios: [1.0001…], clippedFraction: 0, gradLogpNew: [[-1.0001…, -1.0001…]] }
 */
export function gspoObjective(input: GspoObjectiveInput): GspoObjectiveResult {
  const parsed = readClippedObjectiveInput(input, GSPO_DEFAULTS);
  const { batch, advantages } = parsed;
  const { logpNew, logpOld } = input;
  const K = batch.size;
  const low = 1 - parsed.epsLow;
  const high = 1 + parsed.epsHigh;

  const ratios = new Array<number>(K);
  const gradLogpNew = new Array<number[]>(K);
  let surrogate = 0;
  let clipped = 0;
  let klTotal = 0;
  for (let k = 0; k < K; k++) {
    const newRow = logpNew[k]!;
    const oldRow = logpOld[k]!;
    const mask = batch.masks[k]!;
    const count = batch.activeCounts[k]!;
    const advantage = advantages[k]!;
    const n = newRow.length;

    let logRatioSum = 0;
    for (let t = 0; t < n; t++) if (mask[t] === 1) logRatioSum += newRow[t]! - oldRow[t]!;
    const ratio = Math.exp(logRatioSum / count);
    ratios[k] = ratio;

    // min(s·A, clip(s)·A) is the clipped term exactly in the first two cases and s·A otherwise
    // (inside the bounds the terms coincide); testing s against the bounds keeps the choice exact.
    let coefficient: number;
    if (advantage > 0 && ratio > high) {
      surrogate += high * advantage;
      clipped++;
      coefficient = 0;
    } else if (advantage < 0 && ratio < low) {
      surrogate += low * advantage;
      clipped++;
      coefficient = 0;
    } else {
      surrogate += ratio * advantage;
      // ∂s/∂θ_t = s·m_t/|m|, and the loss carries −1/K. (0 − x, not −x: a zero stays +0.)
      coefficient = (0 - advantage * ratio) / (K * count);
    }

    const gradRow = new Array<number>(n);
    for (let t = 0; t < n; t++) gradRow[t] = mask[t] === 1 ? coefficient : 0;
    if (parsed.logpRef !== undefined) klTotal += klPenaltyOfSequence(parsed, k, newRow, gradRow);
    gradLogpNew[k] = gradRow;
  }

  const policyLoss = (0 - surrogate) / K;
  const clippedFraction = clipped / K;
  if (parsed.logpRef === undefined) return { loss: policyLoss, ratios, clippedFraction, gradLogpNew };
  const kl = klTotal / K;
  return { loss: policyLoss + parsed.beta * kl, ratios, clippedFraction, gradLogpNew, kl };
}
