import { readSequenceBatch, type TokenMask, type TokenMatrix } from "./sequences.js";

/** Arguments of {@link klK3}. */
export interface KlK3Input {
  /** log π_θ of each token, [sequence][token]. */
  readonly logp: TokenMatrix;
  /** log π_ref of the same tokens, same shape. */
  readonly logpRef: TokenMatrix;
  /** Which tokens count (0/1 or booleans), same shape; default all ones. */
  readonly mask?: TokenMask;
}

/** What {@link klK3} returns. */
export interface KlK3Result {
  /** k3 at every token, masked or not: exp(ref − θ) − (ref − θ) − 1 ≥ 0. */
  readonly perToken: number[][];
  /** (1/K) Σ_k (1/|m_k|) Σ_t m_k,t · k3_k,t. */
  readonly mean: number;
  /** ∂mean/∂logp[k][t] = m_k,t · (1 − exp(ref − θ)) / (K·|m_k|); zero where the mask is 0. */
  readonly gradLogp: number[][];
}

/**
 * The k3 estimator of KL(π_θ ‖ π_ref) per token, its masked mean (the per-sequence masked
 * mean, averaged over sequences) and that mean's gradient with respect to `logp`.
 *
 * @example
 * // ref − θ = ln 2 at one token: k3 = 2 − ln 2 − 1 ≈ 0.3069; ∂/∂θ = 1 − 2 = −1
 * klK3({ logp: [[Math.log(0.25)]], logpRef: [[Math.log(0.5)]] });
 * // → { perToken: [[0.3068…]], mean: 0.3068…, gradLogp: [[-1]] }
 */
export function klK3(input: KlK3Input): KlK3Result {
  const { logp, logpRef, mask } = input;
  const batch = readSequenceBatch({ name: "logp", rows: logp }, [{ name: "logpRef", rows: logpRef }], mask);
  const K = batch.size;
  const perToken = new Array<number[]>(K);
  const gradLogp = new Array<number[]>(K);
  let total = 0;
  for (let k = 0; k < K; k++) {
    const count = batch.activeCounts[k]!;
    const n = logp[k]!.length;
    const kRow = new Array<number>(n);
    const gRow = new Array<number>(n).fill(0);
    total += accumulateK3(logp[k]!, logpRef[k]!, batch.masks[k]!, 1 / (K * count), gRow, kRow) / count;
    perToken[k] = kRow;
    gradLogp[k] = gRow;
  }
  return { perToken, mean: total / K, gradLogp };
}

/**
 * One sequence of k3: returns Σ_t m_t·k3_t, adds `gradScale`·(1 − exp(ref − θ)) to `grad[t]` at
 * every unmasked token when `grad` is given, and writes k3 at every token into `perToken` when
 * given. Shared by {@link klK3} and the KL penalty of the clipped objectives.
 */
export function accumulateK3(
  logp: readonly number[],
  logpRef: readonly number[],
  mask: Uint8Array,
  gradScale: number,
  grad: number[] | undefined,
  perToken: number[] | undefined,
): number {
  // expm1 keeps k3 = (e^δ − 1) − δ accurate and ≥ 0 when δ = ref − θ is tiny, where
  // e^δ − δ − 1 would cancel to rounding noise of either sign.
  let sum = 0;
  for (let t = 0; t < logp.length; t++) {
    const delta = logpRef[t]! - logp[t]!;
    const ratioMinusOne = Math.expm1(delta);
    const k3 = ratioMinusOne - delta;
    if (perToken !== undefined) perToken[t] = k3;
    if (mask[t] === 1) {
      sum += k3;
      if (grad !== undefined) grad[t] = grad[t]! - gradScale * ratioMinusOne;
    }
  }
  return sum;
}
