import type { FlatRubric } from "@rubric/core";
import {
  CRITERIA_BANK,
  DEFAULT_POLICY,
  briefCriterion,
  writtenCriterionVerifier,
  type BankCriterion,
} from "@rubric/autointeract";
import { PolicySequenceError, PolicyTemplateError } from "../errors.js";

export const WEIGHT_BINS = [1, 2, 3, 4, 5] as const;

/**
 * The criteria the policy writes rather than picks: `{term}` is a slot filled with a term copied
 * from the task or the replies. Each reads back to a rule through `writtenCriterionVerifier`.
 */
export const WRITTEN_TEMPLATES: readonly string[] = [briefCriterion("{term}").text];

/**
 * The gym's question repertoire: the default manager's five family questions, and one broad
 * question that a well-informed stakeholder answers about everything at once.
 */
export const QUESTION_REPERTOIRE: readonly string[] = [
  ...DEFAULT_POLICY.questions,
  "What matters most to you in this document?",
];

/**
 * A decoded sequence: the questions asked (repertoire indices, in order) and the rubric's
 * criteria with weight bins 1–5; a written criterion (a template) carries the index of the term
 * copied into its slot, among the policy's copy candidates (`RubricPolicy.terms`).
 */
export interface DecodedSequence {
  readonly questions: readonly number[];
  readonly criteria: readonly { readonly criterion: number; readonly weight: number; readonly term?: number }[];
}

/** A criterion written so far: its phrase, and for a template the candidate term in its slot. */
export interface WrittenCriterion {
  readonly criterion: number;
  readonly term?: number;
}

/** The candidate terms of a template's slot, as far as the vocabulary needs them: their text. */
type Terms = readonly { readonly text: string }[];

export interface VocabularyOptions {
  readonly maxCriteria?: number;
  readonly vocab?: readonly BankCriterion[];
  /** Default `WRITTEN_TEMPLATES`; `[]` gives a policy that only picks from the bank. */
  readonly templates?: readonly string[];
  readonly maxPerTemplate?: number;
  readonly questions?: readonly string[];
}

/**
 * What the policy may say and the token ids that spell it, with the grammar that orders them.
 * It knows nothing of parameters or prompts (the candidate terms are handed in), so that the
 * walk, encoding and decoding all read one layout. `RubricPolicy` extends it, so the layout
 * stays the policy's own API (`policy.stop`, `policy.criterionMask`) without a forwarder each.
 *
 * Token ids (P = bank criteria + templates): questions 0…Q−1, done Q, phrases Q+1…Q+P, stop
 * Q+P+1, weight bins Q+P+2…Q+P+6, then term i of the slot at Q+P+7+i.
 */
export class PolicyVocabulary {
  readonly vocab: readonly BankCriterion[];
  /** Templates with a `{term}` slot, phrases P−T…P−1 after the bank's. */
  readonly templates: readonly string[];
  readonly questions: readonly string[];
  readonly maxCriteria: number;
  /** How many criteria one template may write in a rubric. */
  readonly maxPerTemplate: number;

  constructor(options: VocabularyOptions = {}) {
    this.vocab = options.vocab ?? CRITERIA_BANK;
    this.templates = options.templates ?? WRITTEN_TEMPLATES;
    this.templates.forEach((t, i) => {
      if (t.split("{term}").length !== 2)
        throw new PolicyTemplateError(
          `options.templates[${i}] needs exactly one {term} slot, got ${JSON.stringify(t)}`,
        );
    });
    this.questions = options.questions ?? QUESTION_REPERTOIRE;
    this.maxCriteria = options.maxCriteria ?? 14;
    this.maxPerTemplate = options.maxPerTemplate ?? 3;
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
   * Which phrases may come next, given the criteria already written, then "stop": no bank
   * criterion twice, one per exclusive group, a template while it is under `maxPerTemplate`
   * and has a term left to copy (of `terms` candidates).
   */
  criterionMask(chosen: readonly WrittenCriterion[], terms: number): boolean[] {
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
}

/**
 * The sequence a rubric spells after asking `questions`, copying from `terms`: see
 * `RubricPolicy.encode`. @throws PolicySequenceError when no criterion is left.
 */
export function encodeRubric(
  vocabulary: PolicyVocabulary,
  terms: Terms,
  questions: readonly number[],
  rubric: { readonly id: string; readonly criteria: readonly { readonly text: string; readonly weight: number }[] },
): number[] {
  const tokens = [...questions, vocabulary.done];
  const chosen: WrittenCriterion[] = [];
  for (const c of rubric.criteria) {
    const bin = vocabulary.weightToken(Math.min(5, Math.max(1, Math.round(c.weight))));
    const k = vocabulary.vocab.findIndex((v) => v.text === c.text);
    if (k >= 0) {
      if (!vocabulary.criterionMask(chosen, terms.length)[k]) continue;
      tokens.push(vocabulary.criterionToken(k), bin);
      chosen.push({ criterion: k });
      continue;
    }
    const written = readTemplate(vocabulary, c.text, terms, chosen);
    if (written === undefined || !vocabulary.criterionMask(chosen, terms.length)[written.criterion]) continue;
    tokens.push(vocabulary.criterionToken(written.criterion), vocabulary.termToken(written.term), bin);
    chosen.push(written);
  }
  if (chosen.length === 0) throw new PolicySequenceError(`rubric ${rubric.id} has no criterion the policy can write`);
  tokens.push(vocabulary.stop);
  return tokens;
}

/** The template and candidate term a criterion's text reads as, if one does (and the term is not written there yet). */
function readTemplate(
  vocabulary: PolicyVocabulary,
  text: string,
  terms: Terms,
  chosen: readonly WrittenCriterion[],
): { criterion: number; term: number } | undefined {
  for (let t = 0; t < vocabulary.templates.length; t++) {
    const [before, after] = vocabulary.templates[t]!.split("{term}") as [string, string];
    const clean = text.trim().replace(/\.$/, "");
    if (!clean.toLowerCase().startsWith(before.toLowerCase()) || !clean.toLowerCase().endsWith(after.toLowerCase()))
      continue;
    const term = clean.slice(before.length, clean.length - after.length).toLowerCase();
    const criterion = vocabulary.vocab.length + t;
    const i = terms.findIndex(
      (c, j) => c.text === term && !chosen.some((w) => w.criterion === criterion && w.term === j),
    );
    if (i >= 0) return { criterion, term: i };
  }
  return undefined;
}

/**
 * The rubric a decoded sequence spells, its written criteria copying from `terms` (those of
 * the task `taskId` after the sequence's questions): see `RubricPolicy.toRubric`.
 * @throws PolicySequenceError when a written criterion reads as no rule (the gym has no judge).
 */
export function spelledRubric(
  vocabulary: PolicyVocabulary,
  decoded: DecodedSequence,
  terms: Terms,
  id: string,
  taskId: string,
): FlatRubric {
  return {
    id,
    criteria: decoded.criteria.map(({ criterion, weight, term }) => {
      if (!vocabulary.isTemplate(criterion)) {
        const c = vocabulary.vocab[criterion]!;
        return { id: c.id, text: c.text, weight, polarity: "reward" as const, verifier: c.verifier };
      }
      const copied = terms[term!]?.text;
      if (copied === undefined) throw new PolicySequenceError(`term ${term} is not a candidate of ${taskId}`);
      const text = vocabulary.phraseText(criterion).replace("{term}", copied);
      const read = writtenCriterionVerifier(text);
      if (read.kind !== "rule")
        throw new PolicySequenceError(`the written criterion ${JSON.stringify(text)} reads as no rule`);
      const slug = copied.toLowerCase().replace(/[^a-z0-9]+/g, "-");
      return {
        id: `w${criterion - vocabulary.vocab.length}-${slug}`,
        text,
        weight,
        polarity: "reward" as const,
        verifier: read.verifier,
      };
    }),
  };
}

/** A hash of everything that fixes what a token means, for the policy's signature. */
export function vocabularyHash(vocabulary: PolicyVocabulary): string {
  let h = 2166136261;
  const shape = [
    ...vocabulary.vocab.map((c) => c.id),
    ...vocabulary.templates,
    ...vocabulary.questions,
    String(vocabulary.maxCriteria),
    String(vocabulary.maxPerTemplate),
  ];
  for (const ch of shape.join("\n")) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  return (h >>> 0).toString(16);
}
