import { logSoftmax, sampleCategorical, type Rng } from "@rubric/core";
import { PolicySequenceError } from "../errors.js";
import type { Features } from "./features.js";
import type { CopyCandidate, PolicyPrompt, PromptReader } from "./prompt.js";
import { WEIGHT_BINS, type PolicyVocabulary, type WrittenCriterion } from "./vocabulary.js";

/** The parameter blocks a walk reads: a `RubricPolicy`'s, documented on its fields. */
export interface PolicyBlocks {
  readonly dim: number;
  readonly Q: Float64Array;
  readonly W: Float64Array;
  readonly U: Float64Array;
  readonly C: Float64Array;
  readonly E: Float64Array;
  readonly S: Float64Array;
}

/** A policy as its walk sees it: what it may say, and its parameters. */
export type WalkedPolicy = PolicyVocabulary & PolicyBlocks;

/** Which head made a choice: questions, phrases, weight bins, or a template's slot. */
export type Block = 0 | 1 | 2 | 3;

/** One choice of a walk: the head, its inputs, and the log-softmax the choice was drawn from. */
export interface Choice {
  readonly block: Block;
  readonly x: Features;
  readonly rows: number;
  readonly mask: readonly boolean[];
  readonly logps: Float64Array;
  chosen: number;
  readonly row?: number;
  /** Criterion choices: each criterion's share of words heard (0 for "stop"). */
  readonly copy?: Float64Array;
  /** Slot choices: the candidate terms. */
  readonly candidates?: readonly CopyCandidate[];
}

/** Supplies the choice at token t: read from a sequence, or sampled. */
export type Pick = (logps: Float64Array, t: number, block: Block) => number;

/**
 * Walks a sequence choice by choice: for each token, the head that chose it, its inputs and the
 * log-softmax it was drawn from. `pick` supplies the choice (read from a sequence, or sampled).
 * The one place that knows the grammar, so scoring, sampling and gradients cannot disagree.
 */
export function walk(
  policy: WalkedPolicy,
  reader: PromptReader,
  prompt: PolicyPrompt,
  pick: Pick,
  visit?: (choice: Choice, t: number) => void,
): number[] {
  const tokens: number[] = [];
  const asked: number[] = [];
  for (;;) {
    const x = reader.features(prompt, asked);
    const mask = [...policy.questions.map((_, q) => !asked.includes(q)), true];
    const choice: Choice = {
      block: 0,
      x,
      rows: policy.questions.length + 1,
      mask,
      logps: maskedLogSoftmax(policy.Q, policy.dim, x, mask),
      chosen: -1,
    };
    choice.chosen = pick(choice.logps, tokens.length, 0);
    visit?.(choice, tokens.length);
    tokens.push(choice.chosen);
    if (choice.chosen === policy.questions.length) break;
    asked.push(choice.chosen);
  }
  const x = reader.features(prompt, asked);
  const heard = reader.mentions(prompt, asked);
  const candidates = reader.terms(prompt, asked);
  const copy = Float64Array.from([...heard.map((m) => m.share), 0]);
  const P = policy.phrases;
  const extra = copy.map((share, k) => (share === 0 ? 0 : (policy.C[P]! + policy.C[k]!) * share));
  const chosen: WrittenCriterion[] = [];
  for (;;) {
    const mask = policy.criterionMask(chosen, candidates.length);
    const choice: Choice = {
      block: 1,
      x,
      rows: P + 1,
      mask,
      logps: maskedLogSoftmax(policy.W, policy.dim, x, mask, extra),
      chosen: -1,
      copy,
    };
    choice.chosen = pick(choice.logps, tokens.length, 1);
    visit?.(choice, tokens.length);
    tokens.push(policy.criterionToken(choice.chosen));
    if (choice.chosen === P) return tokens;
    const k = choice.chosen;
    let context = heard[k]!.context;
    let term: number | undefined;
    if (policy.isTemplate(k)) {
      const used = chosen.filter((c) => c.criterion === k).map((c) => c.term);
      const slotMask = candidates.map((_, i) => !used.includes(i));
      const logits = new Float64Array(candidates.length).fill(Number.NEGATIVE_INFINITY);
      candidates.forEach((c, i) => {
        if (!slotMask[i]) return;
        let z = 0;
        for (let j = 0; j < c.features.indices.length; j++)
          z += policy.S[c.features.indices[j]!]! * c.features.values[j]!;
        logits[i] = z;
      });
      const slot: Choice = {
        block: 3,
        x,
        rows: candidates.length,
        mask: slotMask,
        logps: logSoftmax(logits),
        chosen: -1,
        candidates,
      };
      slot.chosen = pick(slot.logps, tokens.length, 3);
      visit?.(slot, tokens.length);
      tokens.push(policy.termToken(slot.chosen));
      term = slot.chosen;
      // The weight reads the sentence that mentioned this criterion, term and all.
      context = reader.writtenMention(
        prompt,
        asked,
        policy.phraseText(k).replace("{term}", candidates[term]!.text),
      ).context;
    }
    const logits = policy.U.slice(k * WEIGHT_BINS.length, (k + 1) * WEIGHT_BINS.length);
    for (let b = 0; b < WEIGHT_BINS.length; b++)
      for (let j = 0; j < context.indices.length; j++)
        logits[b]! += policy.E[b * policy.dim + context.indices[j]!]! * context.values[j]!;
    const bins = logSoftmax(logits);
    const weight: Choice = {
      block: 2,
      x: context,
      rows: WEIGHT_BINS.length,
      mask: [],
      logps: bins,
      chosen: -1,
      row: k,
    };
    weight.chosen = pick(bins, tokens.length, 2);
    visit?.(weight, tokens.length);
    tokens.push(policy.weightToken(weight.chosen + 1));
    chosen.push(term === undefined ? { criterion: k } : { criterion: k, term });
  }
}

/**
 * A pick that reads `tokens`: the choice index each token stands for at its position, checked
 * against the grammar. @throws PolicySequenceError when the sequence breaks it.
 */
export function following(policy: PolicyVocabulary, tokens: readonly number[]): Pick {
  return (logps, t, block) => {
    const token = tokens[t];
    if (token === undefined) throw new PolicySequenceError(`sequence ended at token ${t} before "stop"`);
    const index =
      block === 0
        ? token
        : block === 1
          ? token - policy.questions.length - 1
          : block === 2
            ? token - policy.stop - 1
            : token - policy.termToken(0);
    if (!(index >= 0 && index < logps.length) || logps[index] === Number.NEGATIVE_INFINITY)
      throw new PolicySequenceError(`token ${t} (${token}) is not a valid choice there`);
    return index;
  };
}

/**
 * Samples a sequence with each token's log-probability (at temperature 1) read off the same
 * walk; with `questions`, the dialogue is fixed to those and only the rubric is sampled.
 */
export function sampleWalk(
  policy: WalkedPolicy,
  reader: PromptReader,
  prompt: PolicyPrompt,
  rng: Rng,
  temperature: number,
  questions: readonly number[] | undefined,
): { tokens: number[]; logprobs: number[] } {
  const logprobs: number[] = [];
  const tokens = walk(
    policy,
    reader,
    prompt,
    (logps, t, block) =>
      block === 0 && questions ? (questions[t] ?? policy.done) : sampleCategorical(logps, rng, temperature),
    (c) => logprobs.push(c.logps[c.chosen]!),
  );
  return { tokens, logprobs };
}

function maskedLogSoftmax(
  weights: Float64Array,
  dim: number,
  x: Features,
  mask: readonly boolean[],
  extra?: Float64Array,
): Float64Array {
  const logits = new Float64Array(mask.length).fill(Number.NEGATIVE_INFINITY);
  for (let k = 0; k < mask.length; k++) {
    if (!mask[k]) continue;
    let z = extra?.[k] ?? 0;
    const row = k * dim;
    for (let j = 0; j < x.indices.length; j++) z += weights[row + x.indices[j]!]! * x.values[j]!;
    logits[k] = z;
  }
  return logSoftmax(logits);
}
