import { createRng, logSoftmax, sampleCategorical, type FlatRubric, type Rng } from "@rubric/core";
import { CRITERIA_BANK, DEFAULT_POLICY, type BankCriterion, type TaskBrief } from "@rubric/autointeract";
import { TrainingError } from "../errors.js";
import { featurize, type Features, type Mention, mentions } from "./features.js";

/**
 * What the policy conditions on: the task, and the stakeholder's reply to each question of the
 * repertoire (index-aligned). The policy only ever sees the replies to the questions it chose to
 * ask; having them all up front keeps log-probabilities exact and synchronous — the gym
 * stakeholder answers a question the same way whenever it is asked.
 */
export interface PolicyPrompt {
  readonly task: TaskBrief;
  readonly replies: readonly string[];
}

/** A decoded sequence: the questions asked (repertoire indices, in order) and the rubric's criteria with weight bins 1–5. */
export interface DecodedSequence {
  readonly questions: readonly number[];
  readonly criteria: readonly { readonly criterion: number; readonly weight: number }[];
}

export const WEIGHT_BINS = [1, 2, 3, 4, 5] as const;

/**
 * The gym's question repertoire: the default manager's five family questions, and one broad
 * question that a well-informed stakeholder answers about everything at once.
 */
export const QUESTION_REPERTOIRE: readonly string[] = [
  ...DEFAULT_POLICY.questions,
  "What matters most to you in this document?",
];

/**
 * An in-process manager policy small enough to train on a CPU in seconds: log-linear and
 * autoregressive. It first asks questions (a softmax over the not-yet-asked questions of the
 * repertoire and "done", conditioned on the task and the replies so far), then writes the rubric
 * (a softmax over the not-yet-chosen, group-compatible criteria and "stop", each chosen criterion
 * followed by a softmax over 5 weight bins). Every choice is a token; log-probabilities and their
 * gradients are exact.
 *
 * Besides the hashed words of the task and the replies, two heads read what the replies say of
 * each criterion (`mentions`: the share of its words in one reply sentence): a copy term
 * (C[V] + C[k]) · share_k in criterion k's logit, so that a criterion heard can be written
 * whatever the task, and the weight bins of criterion k read that sentence's words (E), so a
 * weight follows how it was said. Both start at 0.
 *
 * Token ids: questions 0…Q−1, done Q, criteria Q+1…Q+V, stop Q+V+1, weight bins Q+V+2…Q+V+6.
 */
export class RubricPolicy {
  readonly vocab: readonly BankCriterion[];
  readonly questions: readonly string[];
  readonly dim: number;
  readonly maxCriteria: number;
  /** (Q + 1) × dim question weights; row Q is "done asking". */
  readonly Q: Float64Array;
  /** (V + 1) × dim criterion weights; row V is "stop". */
  readonly W: Float64Array;
  /** V × 5 weight-bin logits. */
  readonly U: Float64Array;
  /** Copy coefficients: C[k] for criterion k's share of words heard, C[V] shared by all. */
  readonly C: Float64Array;
  /** 5 × dim: the weight bins' weights on the words of the sentence that mentioned the criterion. */
  readonly E: Float64Array;
  readonly #features = new WeakMap<PolicyPrompt, Map<string, Features>>();
  readonly #mentions = new WeakMap<PolicyPrompt, Map<string, Mention[]>>();

  constructor(
    options: {
      dim?: number;
      maxCriteria?: number;
      vocab?: readonly BankCriterion[];
      questions?: readonly string[];
      seed?: number;
    } = {},
  ) {
    this.vocab = options.vocab ?? CRITERIA_BANK;
    this.questions = options.questions ?? QUESTION_REPERTOIRE;
    this.dim = options.dim ?? 256;
    this.maxCriteria = options.maxCriteria ?? 14;
    this.Q = new Float64Array((this.questions.length + 1) * this.dim);
    this.W = new Float64Array((this.vocab.length + 1) * this.dim);
    this.U = new Float64Array(this.vocab.length * WEIGHT_BINS.length);
    this.C = new Float64Array(this.vocab.length + 1);
    this.E = new Float64Array(WEIGHT_BINS.length * this.dim);
    if (options.seed !== undefined) {
      const rng = createRng(options.seed).fork("init");
      for (const block of [this.W, this.Q]) for (let i = 0; i < block.length; i++) block[i] = 0.01 * rng.normal();
    }
  }

  /** The parameter blocks, in a fixed order (for optimisers and checkpoints). */
  get parameters(): readonly Float64Array[] {
    return [this.Q, this.W, this.U, this.C, this.E];
  }

  get done(): number {
    return this.questions.length;
  }
  get stop(): number {
    return this.questions.length + 1 + this.vocab.length;
  }
  criterionToken(k: number): number {
    return this.questions.length + 1 + k;
  }
  weightToken(bin: number): number {
    return this.stop + bin;
  }

  /**
   * The sequence a rubric spells after asking `questions`: criteria outside the vocabulary are
   * dropped, weights rounded into 1–5. @throws PolicySequenceError when no criterion is left (the
   * grammar wants at least one).
   */
  encode(questions: readonly number[], rubric: FlatRubric): number[] {
    const tokens = [...questions, this.done];
    const chosen: number[] = [];
    for (const c of rubric.criteria) {
      const k = this.vocab.findIndex((v) => v.text === c.text);
      if (k < 0 || !this.criterionMask(chosen)[k]) continue;
      tokens.push(this.criterionToken(k), this.weightToken(Math.min(5, Math.max(1, Math.round(c.weight)))));
      chosen.push(k);
    }
    if (chosen.length === 0)
      throw new PolicySequenceError(`rubric ${rubric.id} has no criterion in the policy's vocabulary`);
    tokens.push(this.stop);
    return tokens;
  }

  decode(tokens: readonly number[]): DecodedSequence {
    const questions: number[] = [];
    const criteria: { criterion: number; weight: number }[] = [];
    let t = 0;
    for (; t < tokens.length && tokens[t] !== this.done; t++) questions.push(tokens[t]!);
    for (t++; t < tokens.length && tokens[t] !== this.stop; t += 2)
      criteria.push({ criterion: tokens[t]! - this.questions.length - 1, weight: tokens[t + 1]! - this.stop });
    return { questions, criteria };
  }

  /** The rubric a sequence spells. */
  toRubric(tokens: readonly number[], id: string): FlatRubric {
    const criteria = this.decode(tokens).criteria.map(({ criterion, weight }) => {
      const c = this.vocab[criterion]!;
      return { id: c.id, text: c.text, weight, polarity: "reward" as const, verifier: c.verifier };
    });
    return { id, criteria };
  }

  /** Features of the task and the replies to the questions asked so far (plus how many), cached per prompt. */
  features(prompt: PolicyPrompt, asked: readonly number[]): Features {
    return cachedFor(this.#features, prompt, asked, (replies) =>
      featurize(prompt.task, replies, this.dim, [`asked-${asked.length}`]),
    );
  }

  /** What the replies to the questions asked say of each criterion (see `mentions`), cached per prompt. */
  mentions(prompt: PolicyPrompt, asked: readonly number[]): Mention[] {
    return cachedFor(this.#mentions, prompt, asked, (replies) =>
      mentions(
        this.vocab.map((c) => c.text),
        replies,
        this.dim,
      ),
    );
  }

  /** Which criteria may come next, given those already chosen (no repeats, one per exclusive group), then "stop". */
  criterionMask(chosen: readonly number[]): boolean[] {
    const groups = new Set(chosen.map((c) => this.vocab[c]!.group).filter((g): g is string => g !== undefined));
    const full = chosen.length >= this.maxCriteria;
    return [
      ...this.vocab.map((c, i) => !full && !chosen.includes(i) && (c.group === undefined || !groups.has(c.group))),
      chosen.length > 0,
    ];
  }

  /**
   * Walks a sequence choice by choice: for each token, the head that chose it, its inputs and the
   * log-softmax it was drawn from. `pick` supplies the choice (read from a sequence, or sampled).
   * The one place that knows the grammar, so scoring, sampling and gradients cannot disagree.
   */
  #walk(
    prompt: PolicyPrompt,
    pick: (logps: Float64Array, t: number, block: 0 | 1 | 2) => number,
    visit?: (choice: Choice, t: number) => void,
  ): number[] {
    const tokens: number[] = [];
    const asked: number[] = [];
    for (;;) {
      const x = this.features(prompt, asked);
      const mask = [...this.questions.map((_, q) => !asked.includes(q)), true];
      const choice: Choice = {
        block: 0,
        x,
        rows: this.questions.length + 1,
        mask,
        logps: maskedLogSoftmax(this.Q, this.dim, x, mask),
        chosen: -1,
      };
      choice.chosen = pick(choice.logps, tokens.length, 0);
      visit?.(choice, tokens.length);
      tokens.push(choice.chosen);
      if (choice.chosen === this.questions.length) break;
      asked.push(choice.chosen);
    }
    const x = this.features(prompt, asked);
    const heard = this.mentions(prompt, asked);
    const copy = Float64Array.from([...heard.map((m) => m.share), 0]);
    const V = this.vocab.length;
    const extra = copy.map((share, k) => (share === 0 ? 0 : (this.C[V]! + this.C[k]!) * share));
    const chosen: number[] = [];
    for (;;) {
      const mask = this.criterionMask(chosen);
      const choice: Choice = {
        block: 1,
        x,
        rows: this.vocab.length + 1,
        mask,
        logps: maskedLogSoftmax(this.W, this.dim, x, mask, extra),
        chosen: -1,
        copy,
      };
      choice.chosen = pick(choice.logps, tokens.length, 1);
      visit?.(choice, tokens.length);
      tokens.push(this.criterionToken(choice.chosen));
      if (choice.chosen === this.vocab.length) return tokens;
      const k = choice.chosen;
      const context = heard[k]!.context;
      const logits = this.U.slice(k * WEIGHT_BINS.length, (k + 1) * WEIGHT_BINS.length);
      for (let b = 0; b < WEIGHT_BINS.length; b++)
        for (let j = 0; j < context.indices.length; j++)
          logits[b]! += this.E[b * this.dim + context.indices[j]!]! * context.values[j]!;
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
      tokens.push(this.weightToken(weight.chosen + 1));
      chosen.push(k);
    }
  }

  /** The choice index a token stands for, at position t of a sequence (checked against the grammar). */
  #choiceOf(tokens: readonly number[], t: number, logps: Float64Array, block: 0 | 1 | 2): number {
    const token = tokens[t];
    if (token === undefined) throw new PolicySequenceError(`sequence ended at token ${t} before "stop"`);
    const index = block === 0 ? token : block === 1 ? token - this.questions.length - 1 : token - this.stop - 1;
    if (!(index >= 0 && index < logps.length) || logps[index] === Number.NEGATIVE_INFINITY)
      throw new PolicySequenceError(`token ${t} (${token}) is not a valid choice there`);
    return index;
  }

  /** Exact per-token log-probabilities of a sequence. @throws PolicySequenceError when it breaks the grammar. */
  tokenLogProbs(prompt: PolicyPrompt, tokens: readonly number[]): number[] {
    const out: number[] = [];
    this.#walk(
      prompt,
      (logps, t, block) => this.#choiceOf(tokens, t, logps, block),
      (c) => out.push(c.logps[c.chosen]!),
    );
    return out;
  }

  /**
   * Samples a sequence (questions, done, criteria with weights, stop); `temperature` scales the
   * logits. With `questions`, the dialogue is fixed to those (e.g. `[]`: write the rubric without
   * asking anything) and only the rubric is sampled.
   */
  sample(
    prompt: PolicyPrompt,
    rng: Rng,
    temperature = 1,
    options: { readonly questions?: readonly number[] } = {},
  ): number[] {
    return this.sampleWithLogProbs(prompt, rng, temperature, options).tokens;
  }

  /** {@link sample}, with each token's log-probability under the policy (at temperature 1) read off the same walk. */
  sampleWithLogProbs(
    prompt: PolicyPrompt,
    rng: Rng,
    temperature = 1,
    options: { readonly questions?: readonly number[] } = {},
  ): { tokens: number[]; logprobs: number[] } {
    const forced = options.questions;
    const logprobs: number[] = [];
    const tokens = this.#walk(
      prompt,
      (logps, t, block) =>
        block === 0 && forced ? (forced[t] ?? this.done) : sampleCategorical(logps, rng, temperature),
      (c) => logprobs.push(c.logps[c.chosen]!),
    );
    return { tokens, logprobs };
  }

  /**
   * Adds coef_t · ∂ log π(token_t)/∂θ for every token into `grads` (one buffer per parameter
   * block): for a softmax choice of a, ∂ log p(a)/∂logit_k = [k = a] − p_k.
   */
  accumulateGradient(
    prompt: PolicyPrompt,
    tokens: readonly number[],
    coefs: readonly number[],
    grads: readonly Float64Array[],
  ): void {
    this.accumulateTrace(this.trace(prompt, tokens), coefs, grads);
  }

  /**
   * One walk of a sequence, kept: its per-token log-probabilities now, and what
   * {@link accumulateTrace} needs to add its gradient later without walking it again (a clipped
   * objective needs every log-prob of a group before any token's coefficient is known).
   * Valid until the parameters change.
   */
  trace(prompt: PolicyPrompt, tokens: readonly number[]): PolicyTrace {
    const choices: Choice[] = [];
    this.#walk(
      prompt,
      (logps, t, block) => this.#choiceOf(tokens, t, logps, block),
      (c) => choices.push(c),
    );
    return { logprobs: choices.map((c) => c.logps[c.chosen]!), choices };
  }

  /** Adds coef_t · ∂ log π(token_t)/∂θ for a traced sequence into `grads`. */
  accumulateTrace(trace: PolicyTrace, coefs: readonly number[], grads: readonly Float64Array[]): void {
    (trace.choices as Choice[]).forEach((c, t) => {
      const coef = coefs[t]!;
      if (coef === 0) return;
      const g = grads[c.block]!;
      if (c.block === 2) {
        // Weight bins: U's row of the criterion, and E on the words that mentioned it (c.x).
        const gE = grads[4]!;
        for (let b = 0; b < c.rows; b++) {
          const d = coef * ((b === c.chosen ? 1 : 0) - Math.exp(c.logps[b]!));
          g[c.row! * c.rows + b]! += d;
          for (let j = 0; j < c.x.indices.length; j++) gE[b * this.dim + c.x.indices[j]!]! += d * c.x.values[j]!;
        }
        return;
      }
      const gC = grads[3]!;
      const shared = this.vocab.length;
      for (let k = 0; k < c.rows; k++) {
        if (!c.mask[k]) continue;
        const d = coef * ((k === c.chosen ? 1 : 0) - Math.exp(c.logps[k]!));
        const row = k * this.dim;
        for (let j = 0; j < c.x.indices.length; j++) g[row + c.x.indices[j]!]! += d * c.x.values[j]!;
        const share = c.copy?.[k] ?? 0;
        if (share !== 0) {
          gC[k]! += d * share;
          gC[shared]! += d * share;
        }
      }
    });
  }

  /** A copy with the same parameters (for π_old snapshots and KL references). */
  clone(): this {
    const copy = new RubricPolicy({
      dim: this.dim,
      maxCriteria: this.maxCriteria,
      vocab: this.vocab,
      questions: this.questions,
    });
    this.parameters.forEach((p, b) => copy.parameters[b]!.set(p));
    return copy as this;
  }

  /** Shape and vocabulary, as checkpoints record them: a checkpoint loads only into a policy with the same signature. */
  signature(): string {
    let h = 2166136261;
    for (const ch of [...this.vocab.map((c) => c.id), ...this.questions, String(this.maxCriteria)].join("\n"))
      h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
    return `RubricPolicy(copy heads, dim ${this.dim}, ${this.vocab.length} criteria, ${this.questions.length} questions, max ${this.maxCriteria}; vocabulary ${(h >>> 0).toString(16)})`;
  }
}

/** A walked sequence: its per-token log-probabilities, and the choices behind them (opaque). */
export interface PolicyTrace {
  readonly logprobs: readonly number[];
  readonly choices: readonly unknown[];
}

/** A token sequence that the policy's grammar cannot produce. */
export class PolicySequenceError extends TrainingError {
  override readonly name = "PolicySequenceError";
  readonly code = "policy.sequence";
}

interface Choice {
  readonly block: 0 | 1 | 2;
  readonly x: Features;
  readonly rows: number;
  readonly mask: readonly boolean[];
  readonly logps: Float64Array;
  chosen: number;
  readonly row?: number;
  /** Criterion choices: each criterion's share of words heard (0 for "stop"). */
  readonly copy?: Float64Array;
}

/** What `make` computes from the replies to the questions `asked`, once per prompt and question list. */
function cachedFor<T>(
  caches: WeakMap<PolicyPrompt, Map<string, T>>,
  prompt: PolicyPrompt,
  asked: readonly number[],
  make: (replies: string[]) => T,
): T {
  let cache = caches.get(prompt);
  if (!cache) caches.set(prompt, (cache = new Map()));
  const key = asked.join(",");
  let value = cache.get(key);
  if (value === undefined) {
    value = make(asked.map((q) => prompt.replies[q] ?? ""));
    cache.set(key, value);
  }
  return value;
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
