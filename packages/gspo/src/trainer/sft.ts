import { createRng, shuffle } from "@rubric/core";
import { z } from "zod";
import type { PolicyPrompt, RubricPolicy } from "../policy/rubric-policy.js";
import { Adam } from "./adam.js";
import type { TokenPolicy } from "./token-policy.js";

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
