import { createRng, type FlatRubric, type Rng } from "@rubric/core";
import type { Features, Mention } from "./features.js";
import { accumulateTrace, traceSequence, type PolicyTrace } from "./gradients.js";
import { type CopyCandidate, type PolicyPrompt, PromptReader, SLOT_DIM } from "./prompt.js";
import { sampleWalk } from "./walk.js";
import {
  encodeRubric,
  PolicyVocabulary,
  spelledRubric,
  type VocabularyOptions,
  vocabularyHash,
  WEIGHT_BINS,
} from "./vocabulary.js";

/**
 * An in-process manager policy small enough to train on a CPU in seconds: log-linear and
 * autoregressive. It first asks questions (a softmax over the not-yet-asked questions of the
 * repertoire and "done", conditioned on the task and the replies so far), then writes the rubric:
 * a softmax over the phrases it may write next and "stop", where a phrase is either one of the
 * bank's criteria or a template with a slot (`WRITTEN_TEMPLATES`); a template is followed by a
 * pointer over the terms it may copy (the task's salient words and the terms quoted in the
 * replies heard, {@link terms}), and every criterion by a softmax over 5 weight bins. Every
 * choice is a token; log-probabilities and their gradients are exact. The rubric it spells is
 * text: each criterion's verifier is what `writtenCriterionVerifier` reads in it.
 *
 * Besides the hashed words of the task and the replies, two heads read what the replies say of
 * each phrase (`mentions`: the share of its words in one reply sentence): a copy term
 * (C[P] + C[k]) · share_k in phrase k's logit, so that a criterion heard can be written whatever
 * the task, and the weight bins read the words of the sentence that mentioned the written
 * criterion (E), so a weight follows how it was said. The slot head (S) scores a term by where it
 * came from (its rank among the task's words, quoted in a reply) and whether it was heard with
 * the template's words. All start at 0.
 *
 * Its parts live beside it, one concern each: what it may say and the token ids (`vocabulary.ts`,
 * which it extends), what it reads off a prompt (`prompt.ts`), the walk that scores and samples
 * (`walk.ts`) and the gradients (`gradients.ts`). The class keeps the parameters and is the one
 * face that trainers and checkpoints see.
 */
export class RubricPolicy extends PolicyVocabulary {
  readonly dim: number;
  /** (Q + 1) × dim question weights; row Q is "done asking". */
  readonly Q: Float64Array;
  /** (P + 1) × dim phrase weights; row P is "stop". */
  readonly W: Float64Array;
  /** P × 5 weight-bin logits. */
  readonly U: Float64Array;
  /** Copy coefficients: C[k] for phrase k's share of words heard, C[P] shared by all. */
  readonly C: Float64Array;
  /** 5 × dim: the weight bins' weights on the words of the sentence that mentioned the criterion. */
  readonly E: Float64Array;
  /** The slot head: weights on a candidate term's features. */
  readonly S: Float64Array;
  readonly #reader: PromptReader;

  constructor(options: VocabularyOptions & { dim?: number; seed?: number } = {}) {
    super(options);
    this.dim = options.dim ?? 256;
    const phrases = this.phrases;
    this.Q = new Float64Array((this.questions.length + 1) * this.dim);
    this.W = new Float64Array((phrases + 1) * this.dim);
    this.U = new Float64Array(phrases * WEIGHT_BINS.length);
    this.C = new Float64Array(phrases + 1);
    this.E = new Float64Array(WEIGHT_BINS.length * this.dim);
    this.S = new Float64Array(SLOT_DIM);
    if (options.seed !== undefined) {
      const rng = createRng(options.seed).fork("init");
      for (const block of [this.W, this.Q]) for (let i = 0; i < block.length; i++) block[i] = 0.01 * rng.normal();
    }
    this.#reader = new PromptReader(this, this.dim);
  }

  /** The parameter blocks, in a fixed order (for optimisers and checkpoints). */
  get parameters(): readonly Float64Array[] {
    return [this.Q, this.W, this.U, this.C, this.E, this.S];
  }

  /**
   * The sequence a rubric spells after asking `questions`: a criterion is a bank criterion's text
   * or a template's with a term the policy could copy there; others are dropped, weights rounded
   * into 1–5. @throws PolicySequenceError when no criterion is left (the grammar wants at least one).
   */
  encode(
    prompt: PolicyPrompt,
    questions: readonly number[],
    rubric: { readonly id: string; readonly criteria: readonly { readonly text: string; readonly weight: number }[] },
  ): number[] {
    return encodeRubric(this, this.terms(prompt, questions), questions, rubric);
  }

  /**
   * The rubric a sequence spells for a prompt (whose task and replies supply the copied terms):
   * each criterion's text, and the verifier `writtenCriterionVerifier` reads in it.
   * @throws PolicySequenceError when a written criterion reads as no rule (the gym has no judge).
   */
  toRubric(prompt: PolicyPrompt, tokens: readonly number[], id: string): FlatRubric {
    const decoded = this.decode(tokens);
    return spelledRubric(this, decoded, this.terms(prompt, decoded.questions), id, prompt.task.id);
  }

  /** Features of the task and the replies to the questions asked so far (plus how many), cached per prompt. */
  features(prompt: PolicyPrompt, asked: readonly number[]): Features {
    return this.#reader.features(prompt, asked);
  }

  /** What the replies to the questions asked say of each phrase (see `mentions`; a template's words without its slot), cached per prompt. */
  mentions(prompt: PolicyPrompt, asked: readonly number[]): Mention[] {
    return this.#reader.mentions(prompt, asked);
  }

  /**
   * The terms a template's slot may copy after `asked`: the task's salient words (`briefTerms`,
   * most frequent first), then the terms quoted in the replies heard that the task did not
   * offer. Each with its features for the slot head; cached per prompt.
   */
  terms(prompt: PolicyPrompt, asked: readonly number[]): CopyCandidate[] {
    return this.#reader.terms(prompt, asked);
  }

  /** Exact per-token log-probabilities of a sequence. @throws PolicySequenceError when it breaks the grammar. */
  tokenLogProbs(prompt: PolicyPrompt, tokens: readonly number[]): number[] {
    return [...this.trace(prompt, tokens).logprobs];
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
    return sampleWalk(this, this.#reader, prompt, rng, temperature, options.questions);
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
    return traceSequence(this, this.#reader, prompt, tokens);
  }

  /** Adds coef_t · ∂ log π(token_t)/∂θ for a traced sequence into `grads`. */
  accumulateTrace(trace: PolicyTrace, coefs: readonly number[], grads: readonly Float64Array[]): void {
    accumulateTrace(this, trace, coefs, grads);
  }

  /** A copy with the same parameters (for π_old snapshots and KL references). */
  clone(): this {
    const copy = new RubricPolicy({
      dim: this.dim,
      maxCriteria: this.maxCriteria,
      vocab: this.vocab,
      templates: this.templates,
      maxPerTemplate: this.maxPerTemplate,
      questions: this.questions,
    });
    this.parameters.forEach((p, b) => copy.parameters[b]!.set(p));
    return copy as this;
  }

  /** Shape and vocabulary, as checkpoints record them: a checkpoint loads only into a policy with the same signature. */
  signature(): string {
    return `RubricPolicy(writes criteria, dim ${this.dim}, ${this.vocab.length} criteria, ${this.templates.length} templates, ${this.questions.length} questions, max ${this.maxCriteria}; vocabulary ${vocabularyHash(this)})`;
  }
}
