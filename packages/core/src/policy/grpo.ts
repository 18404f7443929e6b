import { PolicyInputError, describeValue } from "./errors.js";
import {
  klPenaltyOfSequence,
  readClippedObjectiveInput,
  type ClippedObjectiveInput,
  type ParsedClippedObjective,
} from "./objective.js";

/** Arguments of {@link grpoObjective}; clip widths default to ε_low = ε_high = 0.2. */
export type GrpoObjectiveInput = ClippedObjectiveInput;

/** Arguments of {@link drGrpoObjective}. */
export interface DrGrpoObjectiveInput extends ClippedObjectiveInput {
  /**
   * L, the constant length normaliser (> 0). Default: the largest number of unmasked tokens of
   * any sequence in the batch. Pass the generation budget to match Dr.GRPO exactly.
   */
  readonly maxTokens?: number;
}

/** What {@link grpoObjective} and {@link drGrpoObjective} return. */
export interface GrpoObjectiveResult {
  /** The clipped token-level surrogate loss, plus β·KL when β > 0. */
  readonly loss: number;
  /** r_k,t = exp(logpNew − logpOld) at every token, masked or not. */
  readonly ratios: number[][];
  /** Fraction of unmasked tokens whose clipped term is the active one. */
  readonly clippedFraction: number;
  /** ∂loss/∂logpNew[k][t]; zero at masked and clipped tokens (KL aside). */
  readonly gradLogpNew: number[][];
  /** KL = (1/K) Σ_k masked-mean_t k3, unscaled by β; present whenever `logpRef` is given. */
  readonly kl?: number;
}

const GRPO_DEFAULTS = { epsLow: 0.2, epsHigh: 0.2 } as const;

/**
 * GRPO's token-level clipped surrogate, each sequence averaged over its own unmasked tokens:
 * loss = −(1/K) Σ_k (1/|m_k|) Σ_t m_k,t · min(r_k,t·A_k, clip(r_k,t, 1−ε_low, 1+ε_high)·A_k) + β·KL.
 *
 * @example
 * // r = [1, e^0.5 ≈ 1.6487], A = 1: the second token is clipped to 1.2
 * // loss = −(1 + 1.2)/2 = −1.1; gradient −A·r/(K·|m|) = −0.5 on the first token, 0 on the second
 * grpoObjective({ logpNew: [[-1, -0.5]], logpOld: [[-1, -1]], advantages: [1] });
 * // → { loss: -1.1, ratios: [[1, 1.6487…]], clippedFraction: 0.5, gradLogpNew: [[-0.5, 0]] }
 */
export function grpoObjective(input: GrpoObjectiveInput): GrpoObjectiveResult {
  const parsed = readClippedObjectiveInput(input, GRPO_DEFAULTS);
  return tokenLevelObjective(input, parsed, parsed.batch.activeCounts);
}

/**
 * Dr.GRPO: GRPO with a constant length normaliser L instead of each sequence's own length
 * (pair it with `groupAdvantages(r, { normalize: "none" })`):
 * loss = −(1/(K·L)) Σ_k Σ_t m_k,t · min(r_k,t·A_k, clip(r_k,t)·A_k) + β·KL.
 *
 * @example
 * // two sequences of 2 and 1 tokens, all ratios 1: L = 2, loss = −(1·2 + 3·1)/(2·2) = −1.25
 * drGrpoObjective({ logpNew: [[-1, -1], [-2]], logpOld: [[-1, -1], [-2]], advantages: [1, 3] });
 * // → { loss: -1.25, gradLogpNew: [[-0.25, -0.25], [-0.75]], … }
 */
export function drGrpoObjective(input: DrGrpoObjectiveInput): GrpoObjectiveResult {
  const parsed = readClippedObjectiveInput(input, GRPO_DEFAULTS);
  let maxTokens = input.maxTokens;
  if (maxTokens === undefined) {
    maxTokens = 0;
    for (const count of parsed.batch.activeCounts) maxTokens = Math.max(maxTokens, count);
  } else if (typeof maxTokens !== "number" || !Number.isFinite(maxTokens) || maxTokens <= 0) {
    throw new PolicyInputError("maxTokens", `expected a finite number > 0, got ${describeValue(maxTokens)}`);
  }
  return tokenLevelObjective(input, parsed, new Array<number>(parsed.batch.size).fill(maxTokens));
}

/** The token-level surrogate shared by GRPO and Dr.GRPO; sequence k's sum is divided by normalisers[k]. */
function tokenLevelObjective(
  input: ClippedObjectiveInput,
  parsed: ParsedClippedObjective,
  normalisers: readonly number[],
): GrpoObjectiveResult {
  const { batch, advantages } = parsed;
  const { logpNew, logpOld } = input;
  const K = batch.size;
  const low = 1 - parsed.epsLow;
  const high = 1 + parsed.epsHigh;

  const ratios = new Array<number[]>(K);
  const gradLogpNew = new Array<number[]>(K);
  let surrogate = 0;
  let clippedTokens = 0;
  let activeTokens = 0;
  let klTotal = 0;
  for (let k = 0; k < K; k++) {
    const newRow = logpNew[k]!;
    const oldRow = logpOld[k]!;
    const mask = batch.masks[k]!;
    const advantage = advantages[k]!;
    const normaliser = normalisers[k]!;
    const gradScale = (0 - advantage) / (K * normaliser); // 0 − x, not −x: a zero stays +0
    const n = newRow.length;
    const ratioRow = new Array<number>(n);
    const gradRow = new Array<number>(n);

    let sequenceSum = 0;
    for (let t = 0; t < n; t++) {
      const ratio = Math.exp(newRow[t]! - oldRow[t]!);
      ratioRow[t] = ratio;
      if (mask[t] !== 1) {
        gradRow[t] = 0;
        continue;
      }
      // min(r·A, clip(r)·A) is the clipped term exactly when A > 0 and r > 1+ε_high, or A < 0 and
      // r < 1−ε_low; everywhere else it equals r·A (inside the bounds the two terms coincide).
      // Testing r against the bounds, not comparing products, keeps the choice exact.
      if (advantage > 0 && ratio > high) {
        sequenceSum += high * advantage;
        clippedTokens++;
        gradRow[t] = 0;
      } else if (advantage < 0 && ratio < low) {
        sequenceSum += low * advantage;
        clippedTokens++;
        gradRow[t] = 0;
      } else {
        sequenceSum += ratio * advantage;
        gradRow[t] = gradScale * ratio;
      }
    }
    surrogate += sequenceSum / normaliser;
    activeTokens += batch.activeCounts[k]!;
    if (parsed.logpRef !== undefined) klTotal += klPenaltyOfSequence(parsed, k, newRow, gradRow);
    ratios[k] = ratioRow;
    gradLogpNew[k] = gradRow;
  }

  const policyLoss = (0 - surrogate) / K;
  const clippedFraction = clippedTokens / activeTokens;
  if (parsed.logpRef === undefined) return { loss: policyLoss, ratios, clippedFraction, gradLogpNew };
  const kl = klTotal / K;
  return { loss: policyLoss + parsed.beta * kl, ratios, clippedFraction, gradLogpNew, kl };
}
