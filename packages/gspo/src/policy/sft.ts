import { createRng, shuffle } from "@rubric/core";
import { z } from "zod";
import type { PolicyPrompt, RubricPolicy } from "./rubric-policy.js";
import type { TokenPolicy } from "../trainer/in-process.js";

/** One supervised example: what the policy sees, and the sequence to imitate (questions asked, then the reference rubric). */
export interface SftItem {
  readonly prompt: PolicyPrompt;
  readonly tokens: readonly number[];
}

/** Mean negative log-likelihood per token of the items under the policy (Stage I's loss). */
export function sftLoss(policy: RubricPolicy, items: readonly SftItem[]): number {
  let nll = 0;
  let tokens = 0;
  for (const { prompt, tokens: seq } of items) {
    const lps = policy.tokenLogProbs(prompt, seq);
    nll -= lps.reduce((a, b) => a + b, 0);
    tokens += lps.length;
  }
  return nll / tokens;
}

/**
 * One Stage I step on a minibatch: ascend the mean per-token log-likelihood. Returns the batch's
 * mean NLL per token before the step.
 */
export function sftStep<Prompt>(
  policy: TokenPolicy<Prompt>,
  adam: Adam,
  batch: readonly { readonly prompt: Prompt; readonly tokens: readonly number[] }[],
  learningRate?: number,
): number {
  const grads = policy.parameters.map((p) => new Float64Array(p.length));
  const perItem = batch.map((d) => policy.tokenLogProbs(d.prompt, d.tokens));
  const tokens = perItem.reduce((n, lps) => n + lps.length, 0);
  batch.forEach((d, i) =>
    policy.accumulateGradient(d.prompt, d.tokens, new Array<number>(perItem[i]!.length).fill(1 / tokens), grads),
  );
  adam.ascend(grads, learningRate);
  return -perItem.flat().reduce((a, b) => a + b, 0) / tokens;
}

export const AdamStateSchema = z.strictObject({
  t: z.number().int().min(0),
  m: z.array(z.array(z.number())),
  v: z.array(z.array(z.number())),
});
export type AdamState = z.infer<typeof AdamStateSchema>;

/** Adam over a list of parameter blocks; it ascends (the gradients given are of an objective to maximise). */
export class Adam {
  #t = 0;
  #m: Float64Array[];
  #v: Float64Array[];
  constructor(
    readonly params: readonly Float64Array[],
    public learningRate: number,
    readonly beta1 = 0.9,
    readonly beta2 = 0.999,
    readonly eps = 1e-8,
  ) {
    this.#m = params.map((p) => new Float64Array(p.length));
    this.#v = params.map((p) => new Float64Array(p.length));
  }

  /** Moves the parameters along `grads`, at `learningRate` if given (else the optimiser's own). */
  ascend(grads: readonly Float64Array[], learningRate = this.learningRate): void {
    this.#t++;
    const c1 = 1 - this.beta1 ** this.#t;
    const c2 = 1 - this.beta2 ** this.#t;
    this.params.forEach((p, b) => {
      const g = grads[b]!;
      const m = this.#m[b]!;
      const v = this.#v[b]!;
      for (let i = 0; i < p.length; i++) {
        if (g[i] === 0 && m[i] === 0) continue;
        m[i] = this.beta1 * m[i]! + (1 - this.beta1) * g[i]!;
        v[i] = this.beta2 * v[i]! + (1 - this.beta2) * g[i]! * g[i]!;
        p[i]! += (learningRate * (m[i]! / c1)) / (Math.sqrt(v[i]! / c2) + this.eps);
      }
    });
  }

  /** The moments and step count, for checkpoints (JSON numbers round-trip doubles exactly). */
  state(): AdamState {
    return { t: this.#t, m: this.#m.map((a) => Array.from(a)), v: this.#v.map((a) => Array.from(a)) };
  }

  restore(state: AdamState): void {
    const shapes = this.params.map((p) => p.length);
    if (
      state.m.length !== shapes.length ||
      state.m.some((m, b) => m.length !== shapes[b] || state.v[b]?.length !== shapes[b])
    )
      throw new RangeError(
        `optimiser state has blocks of ${state.m.map((m) => m.length).join("/")} values; the policy has ${shapes.join("/")}`,
      );
    this.#t = state.t;
    this.#m = state.m.map((m) => Float64Array.from(m));
    this.#v = state.v.map((v) => Float64Array.from(v));
  }
}

/**
 * Stage I: supervised fine-tuning of the policy on reference sequences — per-token cross-entropy,
 * minibatches in a seeded order, Adam. Returns the loss over all items after each epoch.
 */
export function trainSft(
  policy: RubricPolicy,
  items: readonly SftItem[],
  options: {
    epochs: number;
    seed: number;
    learningRate?: number;
    batchSize?: number;
    onEpoch?: (epoch: number, loss: number) => void;
  },
): number[] {
  const adam = new Adam(policy.parameters, options.learningRate ?? 0.05);
  const rng = createRng(options.seed).fork("sft");
  const batchSize = options.batchSize ?? 16;
  const losses: number[] = [];
  for (let epoch = 0; epoch < options.epochs; epoch++) {
    const order = shuffle(items, rng);
    for (let start = 0; start < order.length; start += batchSize)
      sftStep(policy, adam, order.slice(start, start + batchSize));
    const loss = sftLoss(policy, items);
    losses.push(loss);
    options.onEpoch?.(epoch, loss);
  }
  return losses;
}
