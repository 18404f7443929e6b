import { createRng, shuffle, type FlatRubric } from "@rubric/core";
import type { TaskBrief } from "@rubric/autointeract";
import { featurize, type Features } from "./features.js";
import type { RubricAction, RubricPolicy } from "./rubric-policy.js";

/** One supervised example: the task, what the stakeholder said, and the rubric to imitate. */
export interface SftItem {
  readonly task: TaskBrief;
  readonly answers: readonly string[];
  readonly reference: FlatRubric;
}

interface Prepared {
  readonly x: Features;
  readonly actions: RubricAction[];
}

/** Examples as (features, actions); a reference with no criterion in the policy's vocabulary teaches nothing and is left out. */
function prepare(policy: RubricPolicy, items: readonly SftItem[]): Prepared[] {
  return items
    .map((item) => ({ x: featurize(item.task, item.answers, policy.dim), actions: policy.fromRubric(item.reference) }))
    .filter((d) => d.actions.length > 1);
}

/** Mean negative log-likelihood per token of the references under the policy (Stage I's loss). */
export function sftLoss(policy: RubricPolicy, items: readonly SftItem[]): number {
  let nll = 0;
  let tokens = 0;
  for (const { x, actions } of prepare(policy, items)) {
    const lps = policy.tokenLogProbs(x, actions);
    nll -= lps.reduce((a, b) => a + b, 0);
    tokens += lps.length;
  }
  return nll / tokens;
}

/** Adam state over the policy's two parameter blocks. */
export class Adam {
  #t = 0;
  readonly #m: Float64Array[];
  readonly #v: Float64Array[];
  constructor(
    readonly params: readonly Float64Array[],
    readonly learningRate: number,
    readonly beta1 = 0.9,
    readonly beta2 = 0.999,
    readonly eps = 1e-8,
  ) {
    this.#m = params.map((p) => new Float64Array(p.length));
    this.#v = params.map((p) => new Float64Array(p.length));
  }

  /** Moves the parameters along `grads` (ascent: grads are of an objective to maximise). */
  ascend(grads: readonly Float64Array[]): void {
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
        p[i]! += (this.learningRate * (m[i]! / c1)) / (Math.sqrt(v[i]! / c2) + this.eps);
      }
    });
  }
}

/**
 * Stage I: supervised fine-tuning of the policy on reference rubrics given (task, dialogue) —
 * per-token cross-entropy, minibatches in a seeded order, Adam. Returns the loss after each epoch.
 */
export function trainSft(
  policy: RubricPolicy,
  items: readonly SftItem[],
  options: { epochs: number; seed: number; learningRate?: number; batchSize?: number; onEpoch?: (epoch: number, loss: number) => void },
): number[] {
  const data = prepare(policy, items);
  const adam = new Adam([policy.W, policy.U], options.learningRate ?? 0.05);
  const rng = createRng(options.seed).fork("sft");
  const batchSize = options.batchSize ?? 16;
  const losses: number[] = [];
  for (let epoch = 0; epoch < options.epochs; epoch++) {
    const order = shuffle(data, rng);
    for (let start = 0; start < order.length; start += batchSize) {
      const batch = order.slice(start, start + batchSize);
      const gW = new Float64Array(policy.W.length);
      const gU = new Float64Array(policy.U.length);
      const tokens = batch.reduce((n, d) => n + policy.tokenLogProbs(d.x, d.actions).length, 0);
      for (const d of batch) policy.accumulateGradient(d.x, d.actions, new Array(2 * d.actions.length).fill(1 / tokens), gW, gU);
      adam.ascend([gW, gU]);
    }
    const loss = sftLoss(policy, items);
    losses.push(loss);
    options.onEpoch?.(epoch, loss);
  }
  return losses;
}
