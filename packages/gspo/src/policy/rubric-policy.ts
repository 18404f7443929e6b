import { createRng, type FlatRubric, type Rng } from "@rubric/core";
import { CRITERIA_BANK, type BankCriterion } from "@rubric/autointeract";
import type { Features } from "./features.js";

/** One decision of the policy: which criterion next (or stop), and that criterion's weight bin (1–5). */
export interface RubricAction {
  /** Index into the vocabulary, or -1 for stop. */
  readonly criterion: number;
  /** 1–5; absent for stop. */
  readonly weight?: number;
}

export const WEIGHT_BINS = [1, 2, 3, 4, 5] as const;

/**
 * An in-process rubric-writing policy small enough to train on a CPU in seconds: log-linear and
 * autoregressive over the criteria vocabulary and weight bins. Each criterion choice is a softmax
 * over the not-yet-chosen, group-compatible criteria and "stop", with logits W·φ + b; each weight
 * choice a softmax over 5 bins with per-criterion logits. Log-probabilities are exact, per token.
 */
export class RubricPolicy {
  readonly vocab: readonly BankCriterion[];
  readonly dim: number;
  readonly maxCriteria: number;
  /** (V + 1) × dim criterion weights; row V is "stop". */
  readonly W: Float64Array;
  /** V × 5 weight-bin logits. */
  readonly U: Float64Array;

  constructor(options: { dim?: number; maxCriteria?: number; vocab?: readonly BankCriterion[]; seed?: number } = {}) {
    this.vocab = options.vocab ?? CRITERIA_BANK;
    this.dim = options.dim ?? 256;
    this.maxCriteria = options.maxCriteria ?? 14;
    this.W = new Float64Array((this.vocab.length + 1) * this.dim);
    this.U = new Float64Array(this.vocab.length * WEIGHT_BINS.length);
    if (options.seed !== undefined) {
      const rng = createRng(options.seed).fork("init");
      for (let i = 0; i < this.W.length; i++) this.W[i] = 0.01 * rng.normal();
    }
  }

  get stop(): number {
    return this.vocab.length;
  }

  /** Which criteria may come next, given those already chosen (no repeats, one per exclusive group). */
  allowed(chosen: readonly number[]): boolean[] {
    const groups = new Set(chosen.map((c) => this.vocab[c]!.group).filter((g): g is string => g !== undefined));
    const full = chosen.length >= this.maxCriteria;
    return [...this.vocab.map((c, i) => !full && !chosen.includes(i) && (c.group === undefined || !groups.has(c.group))), chosen.length > 0];
  }

  /** Log-softmax of the criterion logits under the mask (−Infinity where not allowed). */
  criterionLogProbs(x: Features, chosen: readonly number[]): Float64Array {
    const mask = this.allowed(chosen);
    const logits = new Float64Array(this.vocab.length + 1).fill(Number.NEGATIVE_INFINITY);
    for (let k = 0; k <= this.vocab.length; k++) {
      if (!mask[k]) continue;
      let z = 0;
      const row = k * this.dim;
      for (let j = 0; j < x.indices.length; j++) z += this.W[row + x.indices[j]!]! * x.values[j]!;
      logits[k] = z;
    }
    return logSoftmax(logits);
  }

  weightLogProbs(criterion: number): Float64Array {
    return logSoftmax(this.U.subarray(criterion * WEIGHT_BINS.length, (criterion + 1) * WEIGHT_BINS.length));
  }

  /** Exact per-token log-probabilities of an action sequence (criterion tokens and weight tokens, then stop). */
  tokenLogProbs(x: Features, actions: readonly RubricAction[]): number[] {
    const out: number[] = [];
    const chosen: number[] = [];
    for (const a of actions) {
      const lp = this.criterionLogProbs(x, chosen);
      const k = a.criterion < 0 ? this.stop : a.criterion;
      out.push(lp[k]!);
      if (k === this.stop) break;
      out.push(this.weightLogProbs(k)[a.weight! - 1]!);
      chosen.push(k);
    }
    return out;
  }

  /** Samples a rubric's actions (ending with stop); `temperature` scales the logits. */
  sample(x: Features, rng: Rng, temperature = 1): RubricAction[] {
    const actions: RubricAction[] = [];
    const chosen: number[] = [];
    for (;;) {
      const k = draw(this.criterionLogProbs(x, chosen), rng, temperature);
      if (k === this.stop) {
        actions.push({ criterion: -1 });
        return actions;
      }
      const w = draw(this.weightLogProbs(k), rng, temperature) + 1;
      actions.push({ criterion: k, weight: w });
      chosen.push(k);
    }
  }

  /**
   * Adds coef_t · ∂ log π(token_t)/∂θ for every token of `actions` into the gradient buffers:
   * for a softmax choice of a, ∂ log p(a)/∂logit_k = [k = a] − p_k.
   */
  accumulateGradient(x: Features, actions: readonly RubricAction[], coefs: readonly number[], gW: Float64Array, gU: Float64Array): void {
    const chosen: number[] = [];
    let t = 0;
    for (const a of actions) {
      const lp = this.criterionLogProbs(x, chosen);
      const k = a.criterion < 0 ? this.stop : a.criterion;
      const coef = coefs[t++]!;
      for (let c = 0; c <= this.vocab.length; c++) {
        if (lp[c] === Number.NEGATIVE_INFINITY) continue;
        const d = coef * ((c === k ? 1 : 0) - Math.exp(lp[c]!));
        const row = c * this.dim;
        for (let j = 0; j < x.indices.length; j++) gW[row + x.indices[j]!]! += d * x.values[j]!;
      }
      if (k === this.stop) break;
      const wl = this.weightLogProbs(k);
      const wcoef = coefs[t++]!;
      for (let b = 0; b < WEIGHT_BINS.length; b++) gU[k * WEIGHT_BINS.length + b]! += wcoef * ((b === a.weight! - 1 ? 1 : 0) - Math.exp(wl[b]!));
      chosen.push(k);
    }
  }

  /** The rubric an action sequence spells. */
  toRubric(actions: readonly RubricAction[], id: string): FlatRubric {
    const criteria = actions.filter((a) => a.criterion >= 0).map((a) => {
      const c = this.vocab[a.criterion]!;
      return { id: c.id, text: c.text, weight: a.weight!, polarity: "reward" as const, verifier: c.verifier };
    });
    return { id, criteria: criteria.length > 0 ? criteria : [] };
  }

  /** A reference rubric as actions: criteria outside the vocabulary are dropped, weights rounded into 1–5. */
  fromRubric(rubric: FlatRubric): RubricAction[] {
    const actions: RubricAction[] = [];
    const chosen: number[] = [];
    for (const c of rubric.criteria) {
      const k = this.vocab.findIndex((v) => v.text === c.text);
      if (k < 0 || !this.allowed(chosen)[k]) continue;
      actions.push({ criterion: k, weight: Math.min(5, Math.max(1, Math.round(c.weight))) });
      chosen.push(k);
    }
    actions.push({ criterion: -1 });
    return actions;
  }
}

function logSoftmax(logits: ArrayLike<number>): Float64Array {
  let top = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < logits.length; i++) top = Math.max(top, logits[i]!);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i]! - top);
  const lse = top + Math.log(sum);
  return Float64Array.from({ length: logits.length }, (_, i) => logits[i]! - lse);
}

function draw(logps: Float64Array, rng: Rng, temperature: number): number {
  const w = Array.from(logps, (l) => (l === Number.NEGATIVE_INFINITY ? 0 : Math.exp(l / temperature)));
  let u = rng.next() * w.reduce((a, b) => a + b, 0);
  for (let i = 0; i < w.length; i++) {
    u -= w[i]!;
    if (u < 0 && w[i]! > 0) return i;
  }
  return w.findLastIndex((v) => v > 0);
}
