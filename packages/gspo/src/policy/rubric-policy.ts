import { createRng, logSoftmax, sampleCategorical, type FlatRubric, type Rng } from "@rubric/core";
import {
  CRITERIA_BANK,
  DEFAULT_POLICY,
  briefCriterion,
  briefTerms,
  writtenCriterionVerifier,
  type BankCriterion,
  type TaskBrief,
} from "@rubric/autointeract";
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

/**
 * A decoded sequence: the questions asked (repertoire indices, in order) and the rubric's
 * criteria with weight bins 1–5; a written criterion (a template) carries the index of the term
 * copied into its slot, among {@link RubricPolicy.terms}.
 */
export interface DecodedSequence {
  readonly questions: readonly number[];
  readonly criteria: readonly { readonly criterion: number; readonly weight: number; readonly term?: number }[];
}

export const WEIGHT_BINS = [1, 2, 3, 4, 5] as const;

/**
 * The criteria the policy writes rather than picks: `{term}` is a slot filled with a term copied
 * from the task or the replies. Each reads back to a rule through `writtenCriterionVerifier`.
 */
export const WRITTEN_TEMPLATES: readonly string[] = [briefCriterion("{term}").text];

/** A term the policy may copy into a template's slot, with what it knows of it. */
export interface CopyCandidate {
  readonly text: string;
  /** Features of the candidate for the slot head (S): where it came from and whether it was heard. */
  readonly features: Features;
}

/** The task's salient words offered for copying: more than the worker's six, so a guess can miss. */
const TASK_TERMS = 8;
/** Slot features: bias, task rank 0…7, heard in a reply, template words heard with it, quoted in a reply, from the replies only. */
const SLOT_DIM = 5 + TASK_TERMS;
const SLOT = { bias: 0, rank: 1, heard: 1 + TASK_TERMS, said: 2 + TASK_TERMS, quoted: 3 + TASK_TERMS } as const;
const SLOT_REPLY_ONLY = SLOT_DIM - 1;

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
 * Token ids (P = bank criteria + templates): questions 0…Q−1, done Q, phrases Q+1…Q+P, stop
 * Q+P+1, weight bins Q+P+2…Q+P+6, then term i of the slot at Q+P+7+i.
 */
export class RubricPolicy {
  readonly vocab: readonly BankCriterion[];
  /** Templates with a `{term}` slot, phrases P−T…P−1 after the bank's. */
  readonly templates: readonly string[];
  readonly questions: readonly string[];
  readonly dim: number;
  readonly maxCriteria: number;
  /** How many criteria one template may write in a rubric. */
  readonly maxPerTemplate: number;
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
  readonly #features = new WeakMap<PolicyPrompt, Map<string, Features>>();
  readonly #mentions = new WeakMap<PolicyPrompt, Map<string, Mention[]>>();
  readonly #terms = new WeakMap<PolicyPrompt, Map<string, CopyCandidate[]>>();
  readonly #written = new WeakMap<PolicyPrompt, Map<string, Map<string, Mention>>>();

  constructor(
    options: {
      dim?: number;
      maxCriteria?: number;
      vocab?: readonly BankCriterion[];
      /** Default `WRITTEN_TEMPLATES`; `[]` gives a policy that only picks from the bank. */
      templates?: readonly string[];
      maxPerTemplate?: number;
      questions?: readonly string[];
      seed?: number;
    } = {},
  ) {
    this.vocab = options.vocab ?? CRITERIA_BANK;
    this.templates = options.templates ?? WRITTEN_TEMPLATES;
    for (const t of this.templates)
      if (t.split("{term}").length !== 2)
        throw new RangeError(`a template needs exactly one {term} slot, got ${JSON.stringify(t)}`);
    this.questions = options.questions ?? QUESTION_REPERTOIRE;
    this.dim = options.dim ?? 256;
    this.maxCriteria = options.maxCriteria ?? 14;
    this.maxPerTemplate = options.maxPerTemplate ?? 3;
    const phrases = this.vocab.length + this.templates.length;
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
  }

  /** The parameter blocks, in a fixed order (for optimisers and checkpoints). */
  get parameters(): readonly Float64Array[] {
    return [this.Q, this.W, this.U, this.C, this.E, this.S];
  }

  /** Bank criteria and templates: the phrases a criterion choice ranges over. */
  get phrases(): number {
    return this.vocab.length + this.templates.length;
  }
  get done(): number {
    return this.questions.length;
  }
  get stop(): number {
    return this.questions.length + 1 + this.phrases;
  }
  criterionToken(k: number): number {
    return this.questions.length + 1 + k;
  }
  weightToken(bin: number): number {
    return this.stop + bin;
  }
  termToken(i: number): number {
    return this.stop + WEIGHT_BINS.length + 1 + i;
  }
  /** Whether phrase k is a template (written with a copied term) rather than a bank criterion. */
  isTemplate(k: number): boolean {
    return k >= this.vocab.length && k < this.phrases;
  }
  /** Phrase k's text; a template's with its slot left as `{term}`. */
  phraseText(k: number): string {
    return this.isTemplate(k) ? this.templates[k - this.vocab.length]! : this.vocab[k]!.text;
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
    const tokens = [...questions, this.done];
    const candidates = this.terms(prompt, questions);
    const chosen: { criterion: number; term?: number }[] = [];
    for (const c of rubric.criteria) {
      const bin = this.weightToken(Math.min(5, Math.max(1, Math.round(c.weight))));
      const k = this.vocab.findIndex((v) => v.text === c.text);
      if (k >= 0) {
        if (!this.criterionMask(chosen, candidates.length)[k]) continue;
        tokens.push(this.criterionToken(k), bin);
        chosen.push({ criterion: k });
        continue;
      }
      const written = this.#readTemplate(c.text, candidates, chosen);
      if (written === undefined || !this.criterionMask(chosen, candidates.length)[written.criterion]) continue;
      tokens.push(this.criterionToken(written.criterion), this.termToken(written.term), bin);
      chosen.push(written);
    }
    if (chosen.length === 0) throw new PolicySequenceError(`rubric ${rubric.id} has no criterion the policy can write`);
    tokens.push(this.stop);
    return tokens;
  }

  /** The template and candidate term a criterion's text reads as, if one does (and the term is not written there yet). */
  #readTemplate(
    text: string,
    candidates: readonly CopyCandidate[],
    chosen: readonly { criterion: number; term?: number }[],
  ): { criterion: number; term: number } | undefined {
    for (let t = 0; t < this.templates.length; t++) {
      const [before, after] = this.templates[t]!.split("{term}") as [string, string];
      const clean = text.trim().replace(/\.$/, "");
      if (!clean.toLowerCase().startsWith(before.toLowerCase()) || !clean.toLowerCase().endsWith(after.toLowerCase()))
        continue;
      const term = clean.slice(before.length, clean.length - after.length).toLowerCase();
      const criterion = this.vocab.length + t;
      const i = candidates.findIndex(
        (c, j) => c.text === term && !chosen.some((w) => w.criterion === criterion && w.term === j),
      );
      if (i >= 0) return { criterion, term: i };
    }
    return undefined;
  }

  decode(tokens: readonly number[]): DecodedSequence {
    const questions: number[] = [];
    const criteria: { criterion: number; weight: number; term?: number }[] = [];
    let t = 0;
    for (; t < tokens.length && tokens[t] !== this.done; t++) questions.push(tokens[t]!);
    for (t++; t < tokens.length && tokens[t] !== this.stop; ) {
      const criterion = tokens[t++]! - this.questions.length - 1;
      const term = this.isTemplate(criterion) ? tokens[t++]! - this.termToken(0) : undefined;
      criteria.push({ criterion, weight: tokens[t++]! - this.stop, ...(term === undefined ? {} : { term }) });
    }
    return { questions, criteria };
  }

  /**
   * The rubric a sequence spells for a prompt (whose task and replies supply the copied terms):
   * each criterion's text, and the verifier `writtenCriterionVerifier` reads in it.
   * @throws PolicySequenceError when a written criterion reads as no rule (the gym has no judge).
   */
  toRubric(prompt: PolicyPrompt, tokens: readonly number[], id: string): FlatRubric {
    const { questions, criteria } = this.decode(tokens);
    const candidates = this.terms(prompt, questions);
    return {
      id,
      criteria: criteria.map(({ criterion, weight, term }) => {
        if (!this.isTemplate(criterion)) {
          const c = this.vocab[criterion]!;
          return { id: c.id, text: c.text, weight, polarity: "reward" as const, verifier: c.verifier };
        }
        const copied = candidates[term!]?.text;
        if (copied === undefined) throw new PolicySequenceError(`term ${term} is not a candidate of ${prompt.task.id}`);
        const text = this.phraseText(criterion).replace("{term}", copied);
        const read = writtenCriterionVerifier(text);
        if (read.kind !== "rule")
          throw new PolicySequenceError(`the written criterion ${JSON.stringify(text)} reads as no rule`);
        const slug = copied.toLowerCase().replace(/[^a-z0-9]+/g, "-");
        return {
          id: `w${criterion - this.vocab.length}-${slug}`,
          text,
          weight,
          polarity: "reward" as const,
          verifier: read.verifier,
        };
      }),
    };
  }

  /** Features of the task and the replies to the questions asked so far (plus how many), cached per prompt. */
  features(prompt: PolicyPrompt, asked: readonly number[]): Features {
    return cachedFor(this.#features, prompt, asked, (replies) =>
      featurize(prompt.task, replies, this.dim, [`asked-${asked.length}`]),
    );
  }

  /** What the replies to the questions asked say of each phrase (see `mentions`; a template's words without its slot), cached per prompt. */
  mentions(prompt: PolicyPrompt, asked: readonly number[]): Mention[] {
    return cachedFor(this.#mentions, prompt, asked, (replies) =>
      mentions(
        Array.from({ length: this.phrases }, (_, k) => this.phraseText(k).replace("{term}", "")),
        replies,
        this.dim,
      ),
    );
  }

  /**
   * The terms a template's slot may copy after `asked`: the task's salient words (`briefTerms`,
   * most frequent first), then the terms quoted in the replies heard that the task did not
   * offer. Each with its features for the slot head; cached per prompt.
   */
  terms(prompt: PolicyPrompt, asked: readonly number[]): CopyCandidate[] {
    return cachedFor(this.#terms, prompt, asked, (replies) => {
      const fromTask = briefTerms(prompt.task.prompt, TASK_TERMS);
      const quoted = new Set(
        replies.flatMap((r) => [...r.matchAll(/"([^"\n]{2,40})"/g)].map((m) => m[1]!.toLowerCase())),
      );
      const texts = [...fromTask, ...[...quoted].filter((q) => !fromTask.includes(q))];
      const heard = replies.join(" ").toLowerCase();
      return texts.map((text, rank) => {
        const said = Math.max(
          0,
          ...this.templates.map(
            (template) => mentions([template.replace("{term}", text)], replies, this.dim)[0]!.share,
          ),
        );
        const dense = new Map<number, number>([[SLOT.bias, 1]]);
        if (rank < fromTask.length) dense.set(SLOT.rank + rank, 1);
        else dense.set(SLOT_REPLY_ONLY, 1);
        if (new RegExp(`\\b${escapeRegex(text)}\\b`).test(heard)) dense.set(SLOT.heard, 1);
        if (said > 0) dense.set(SLOT.said, said);
        if (quoted.has(text)) dense.set(SLOT.quoted, 1);
        const indices = Int32Array.from([...dense.keys()].sort((a, b) => a - b));
        return { text, features: { indices, values: Float64Array.from(indices, (i) => dense.get(i)!) } };
      });
    });
  }

  /** What the replies say of one written criterion (its mention), cached per prompt. */
  #writtenMention(prompt: PolicyPrompt, asked: readonly number[], text: string): Mention {
    const byText = cachedFor(this.#written, prompt, asked, () => new Map<string, Mention>());
    let mention = byText.get(text);
    if (mention === undefined) {
      mention = mentions(
        [text],
        asked.map((q) => prompt.replies[q] ?? ""),
        this.dim,
      )[0]!;
      byText.set(text, mention);
    }
    return mention;
  }

  /**
   * Which phrases may come next, given the criteria already written, then "stop": no bank
   * criterion twice, one per exclusive group, a template while it is under `maxPerTemplate`
   * and has a term left to copy (of `terms` candidates).
   */
  criterionMask(chosen: readonly { criterion: number; term?: number }[], terms: number): boolean[] {
    const groups = new Set(
      chosen
        .filter((c) => !this.isTemplate(c.criterion))
        .map((c) => this.vocab[c.criterion]!.group)
        .filter((g): g is string => g !== undefined),
    );
    const full = chosen.length >= this.maxCriteria;
    const picked = (k: number) => chosen.filter((c) => c.criterion === k).length;
    return [
      ...this.vocab.map((c, i) => !full && picked(i) === 0 && (c.group === undefined || !groups.has(c.group))),
      ...this.templates.map((_, t) => {
        const n = picked(this.vocab.length + t);
        return !full && n < this.maxPerTemplate && n < terms;
      }),
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
    pick: (logps: Float64Array, t: number, block: Block) => number,
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
    const candidates = this.terms(prompt, asked);
    const copy = Float64Array.from([...heard.map((m) => m.share), 0]);
    const P = this.phrases;
    const extra = copy.map((share, k) => (share === 0 ? 0 : (this.C[P]! + this.C[k]!) * share));
    const chosen: { criterion: number; term?: number }[] = [];
    for (;;) {
      const mask = this.criterionMask(chosen, candidates.length);
      const choice: Choice = {
        block: 1,
        x,
        rows: P + 1,
        mask,
        logps: maskedLogSoftmax(this.W, this.dim, x, mask, extra),
        chosen: -1,
        copy,
      };
      choice.chosen = pick(choice.logps, tokens.length, 1);
      visit?.(choice, tokens.length);
      tokens.push(this.criterionToken(choice.chosen));
      if (choice.chosen === P) return tokens;
      const k = choice.chosen;
      let context = heard[k]!.context;
      let term: number | undefined;
      if (this.isTemplate(k)) {
        const used = chosen.filter((c) => c.criterion === k).map((c) => c.term);
        const slotMask = candidates.map((_, i) => !used.includes(i));
        const logits = new Float64Array(candidates.length).fill(Number.NEGATIVE_INFINITY);
        candidates.forEach((c, i) => {
          if (!slotMask[i]) return;
          let z = 0;
          for (let j = 0; j < c.features.indices.length; j++)
            z += this.S[c.features.indices[j]!]! * c.features.values[j]!;
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
        tokens.push(this.termToken(slot.chosen));
        term = slot.chosen;
        // The weight reads the sentence that mentioned this criterion, term and all.
        context = this.#writtenMention(
          prompt,
          asked,
          this.phraseText(k).replace("{term}", candidates[term]!.text),
        ).context;
      }
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
      chosen.push(term === undefined ? { criterion: k } : { criterion: k, term });
    }
  }

  /** The choice index a token stands for, at position t of a sequence (checked against the grammar). */
  #choiceOf(tokens: readonly number[], t: number, logps: Float64Array, block: Block): number {
    const token = tokens[t];
    if (token === undefined) throw new PolicySequenceError(`sequence ended at token ${t} before "stop"`);
    const index =
      block === 0
        ? token
        : block === 1
          ? token - this.questions.length - 1
          : block === 2
            ? token - this.stop - 1
            : token - this.termToken(0);
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
          for (let j = 0; j < c.x.indices.length; j++) gE[b * this.dim + c.x.indices[j]!]! += d * c.x.values[j]!;
        }
        return;
      }
      const gC = grads[3]!;
      const shared = this.phrases;
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
      templates: this.templates,
      maxPerTemplate: this.maxPerTemplate,
      questions: this.questions,
    });
    this.parameters.forEach((p, b) => copy.parameters[b]!.set(p));
    return copy as this;
  }

  /** Shape and vocabulary, as checkpoints record them: a checkpoint loads only into a policy with the same signature. */
  signature(): string {
    let h = 2166136261;
    const shape = [
      ...this.vocab.map((c) => c.id),
      ...this.templates,
      ...this.questions,
      String(this.maxCriteria),
      String(this.maxPerTemplate),
    ];
    for (const ch of shape.join("\n")) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
    return `RubricPolicy(writes criteria, dim ${this.dim}, ${this.vocab.length} criteria, ${this.templates.length} templates, ${this.questions.length} questions, max ${this.maxCriteria}; vocabulary ${(h >>> 0).toString(16)})`;
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

/** Which head made a choice: questions, phrases, weight bins, or a template's slot. */
type Block = 0 | 1 | 2 | 3;

interface Choice {
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

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

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
