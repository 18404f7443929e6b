import type { PolicyPrompt, PromptReader } from "./prompt.js";
import { following, walk, type Choice, type WalkedPolicy } from "./walk.js";

/** A walked sequence: its per-token log-probabilities, and the choices behind them (opaque). */
export interface PolicyTrace {
  readonly logprobs: readonly number[];
  readonly choices: readonly unknown[];
}

/**
 * One walk of a sequence, kept: see `RubricPolicy.trace`. The choices are opaque to callers so
 * that only {@link accumulateTrace} reads them. @throws PolicySequenceError when it breaks the grammar.
 */
export function traceSequence(
  policy: WalkedPolicy,
  reader: PromptReader,
  prompt: PolicyPrompt,
  tokens: readonly number[],
): PolicyTrace {
  const choices: Choice[] = [];
  walk(policy, reader, prompt, following(policy, tokens), (c) => choices.push(c));
  return { logprobs: choices.map((c) => c.logps[c.chosen]!), choices };
}

/**
 * Adds coef_t · ∂ log π(token_t)/∂θ for a traced sequence into `grads` (one buffer per parameter
 * block, in `RubricPolicy.parameters` order): for a softmax choice of a,
 * ∂ log p(a)/∂logit_k = [k = a] − p_k.
 */
export function accumulateTrace(
  policy: WalkedPolicy,
  trace: PolicyTrace,
  coefs: readonly number[],
  grads: readonly Float64Array[],
): void {
  const { dim } = policy;
  (trace.choices as Choice[]).forEach((c, t) => {
    const coef = coefs[t]!;
    if (coef === 0) return;
    if (c.block === 3) {
      // The slot: S on each candidate term's features.
      const gS = grads[5]!;
      c.candidates!.forEach((candidate, i) => {
        if (!c.mask[i]) return;
        const d = coef * ((i === c.chosen ? 1 : 0) - Math.exp(c.logps[i]!));
        const f = candidate.features;
        for (let j = 0; j < f.indices.length; j++) gS[f.indices[j]!]! += d * f.values[j]!;
      });
      return;
    }
    const g = grads[c.block]!;
    if (c.block === 2) {
      // Weight bins: U's row of the criterion, and E on the words that mentioned it (c.x).
      const gE = grads[4]!;
      for (let b = 0; b < c.rows; b++) {
        const d = coef * ((b === c.chosen ? 1 : 0) - Math.exp(c.logps[b]!));
        g[c.row! * c.rows + b]! += d;
        for (let j = 0; j < c.x.indices.length; j++) gE[b * dim + c.x.indices[j]!]! += d * c.x.values[j]!;
      }
      return;
    }
    const gC = grads[3]!;
    const shared = policy.phrases;
    for (let k = 0; k < c.rows; k++) {
      if (!c.mask[k]) continue;
      const d = coef * ((k === c.chosen ? 1 : 0) - Math.exp(c.logps[k]!));
      const row = k * dim;
      for (let j = 0; j < c.x.indices.length; j++) g[row + c.x.indices[j]!]! += d * c.x.values[j]!;
      const share = c.copy?.[k] ?? 0;
      if (share !== 0) {
        gC[k]! += d * share;
        gC[shared]! += d * share;
      }
    }
  });
}
