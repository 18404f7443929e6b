/**
 * A worker policy for the rubric gym, small enough to train with GSPO on a CPU in seconds. It
 * writes a document by a fixed sequence of choices — which sections, how many paragraphs, plain
 * or technical sentences, bullets, tables, citations, links, figures, a recommendation, hedges,
 * informal words, which of the brief's terms to address — and two choices an honest writer never
 * makes: pad the text (its sentences said again) and stuff the rubric's terms in as a bare list.
 * Each choice is one token, drawn from a softmax whose logits are linear in features of the
 * prompt (log-linear, like @rubric/gspo's RubricPolicy), so log-probabilities and their gradients
 * are exact. The initial policy is the gym's unguided simulated worker: every document choice
 * starts at the probabilities that worker draws its plans with; the two exploits start at
 * `exploitPrior`. Nothing forces an exploit: it is one token among the rest.
 */
import { SECTION_NAMES, briefTerms, renderDocument, type DocumentPlan } from "@rubric/autointeract";
import { createRng, logSoftmax, sampleCategorical, type FlatRubric, type Rng, type VerifierSpec } from "@rubric/core";
import { InProcessBackend, PolicySequenceError, type GymPrompt } from "@rubric/gspo";
import { regexLiterals } from "@rubric/hackbench";

/** A gym task as the worker sees it: the rubric it is optimised against, and the features it reads off that rubric. */
export interface WorkerPrompt extends GymPrompt {
  readonly proxy: FlatRubric;
  /** Names of the prompt's active features (each of value 1; "bias" is always on). */
  readonly features: readonly string[];
}

/** One choice of the writer: its options, and the probability the gym's worker picks each with. */
export interface Decision {
  readonly id: string;
  readonly options: readonly string[];
  readonly prior: readonly number[];
}

const yesNo = (id: string, yes: number): Decision => ({ id, options: ["no", "yes"], prior: [1 - yes, yes] });
const counts = (id: string, prior: readonly number[]): Decision => ({
  id,
  options: prior.map((_, n) => String(n)),
  prior,
});

/** How many of the brief's salient terms the writer may address (as the gym's worker does). */
export const BRIEF_TERMS = 6;

/**
 * The writer's choices, in the order it makes them, with the gym's simulated worker's own plan
 * probabilities (`randomPlan` in @rubric/autointeract), and the two exploits at `exploitPrior`.
 */
export function documentDecisions(exploitPrior: number): Decision[] {
  if (!(exploitPrior > 0 && exploitPrior < 1))
    throw new RangeError(`exploitPrior must be in (0, 1), got ${exploitPrior}`);
  return [
    ...SECTION_NAMES.map((name) => yesNo(`section:${name}`, 0.45)),
    { id: "paragraphs", options: ["1", "2", "3"], prior: [1 / 3, 1 / 3, 1 / 3] },
    { id: "style", options: ["plain", "technical"], prior: [0.5, 0.5] },
    counts("bullets", [0.5, ...Array<number>(6).fill(0.5 / 6)]),
    counts("tables", [0.6, 0.2, 0.2]),
    counts("citations", [0.25, 0.25, 0.25, 0.25]),
    counts("urls", [0.7, 0.15, 0.15]),
    yesNo("percent", 0.5),
    yesNo("currency", 0.4),
    yesNo("year", 0.5),
    yesNo("recommendation", 0.4),
    yesNo("hedging", 0.4),
    yesNo("informal", 0.2),
    ...Array.from({ length: BRIEF_TERMS }, (_, i) => yesNo(`brief-term:${i + 1}`, 0.4)),
    yesNo("pad", exploitPrior),
    yesNo("stuff-keywords", exploitPrior),
  ];
}

/** What a sequence of choices writes: the document plan and the two exploits. */
export interface WritingChoices {
  readonly plan: DocumentPlan;
  readonly pad: boolean;
  readonly stuff: boolean;
}

/**
 * The log-linear writer. Token ids: decision d's options are `offset(d) … offset(d) + options − 1`;
 * a sequence is one token per decision, in order. Parameters: one row of `features.length`
 * weights per token.
 */
export class DocumentPolicy {
  readonly decisions: readonly Decision[];
  readonly features: readonly string[];
  /** (Σ options) × features weights; row = token id. */
  readonly weights: Float64Array;
  readonly #offsets: number[];
  readonly #active = new WeakMap<WorkerPrompt, Int32Array>();

  constructor(options: { readonly decisions: readonly Decision[]; readonly features: readonly string[] }) {
    this.decisions = options.decisions;
    this.features = options.features[0] === "bias" ? options.features : ["bias", ...options.features];
    this.#offsets = [];
    let offset = 0;
    for (const d of this.decisions) {
      this.#offsets.push(offset);
      offset += d.options.length;
    }
    this.weights = new Float64Array(offset * this.features.length);
    // The bias row starts at the log of the prior: with no other feature on, the policy is the gym's worker.
    this.decisions.forEach((d, i) =>
      d.prior.forEach((p, o) => (this.weights[(this.#offsets[i]! + o) * this.features.length] = Math.log(p))),
    );
  }

  get parameters(): readonly Float64Array[] {
    return [this.weights];
  }

  token(decision: number, option: number): number {
    return this.#offsets[decision]! + option;
  }

  /** Indices of the prompt's active features (bias first), cached per prompt. */
  activeFeatures(prompt: WorkerPrompt): Int32Array {
    let active = this.#active.get(prompt);
    if (!active) {
      const indices = prompt.features.map((name) => {
        const i = this.features.indexOf(name);
        if (i < 0)
          throw new RangeError(
            `prompt ${prompt.task.id} has feature ${JSON.stringify(name)}, which the policy does not know`,
          );
        return i;
      });
      active = Int32Array.from(new Set([0, ...indices]));
      this.#active.set(prompt, active);
    }
    return active;
  }

  /** Log-softmax over decision d's options. */
  logProbs(prompt: WorkerPrompt, d: number): Float64Array {
    const active = this.activeFeatures(prompt);
    const F = this.features.length;
    const logits = Float64Array.from(this.decisions[d]!.options, (_, o) => {
      const row = (this.#offsets[d]! + o) * F;
      let z = 0;
      for (const f of active) z += this.weights[row + f]!;
      return z;
    });
    return logSoftmax(logits);
  }

  /** The option a token picks at position d. @throws PolicySequenceError when the sequence breaks the grammar. */
  #optionAt(tokens: readonly number[], d: number): number {
    if (tokens.length !== this.decisions.length)
      throw new PolicySequenceError(`a sequence has ${this.decisions.length} tokens, got ${tokens.length}`);
    const option = tokens[d]! - this.#offsets[d]!;
    if (!(Number.isInteger(option) && option >= 0 && option < this.decisions[d]!.options.length))
      throw new PolicySequenceError(`token ${d} (${tokens[d]}) is not an option of "${this.decisions[d]!.id}"`);
    return option;
  }

  /** Exact per-token log-probabilities of a sequence. */
  tokenLogProbs(prompt: WorkerPrompt, tokens: readonly number[]): number[] {
    return this.decisions.map((_, d) => this.logProbs(prompt, d)[this.#optionAt(tokens, d)]!);
  }

  /** One sequence; `temperature` scales the logits. */
  sample(prompt: WorkerPrompt, rng: Rng, temperature = 1): number[] {
    return this.decisions.map((_, d) => {
      return this.token(d, sampleCategorical(this.logProbs(prompt, d), rng, temperature));
    });
  }

  /** Adds coef_d · ∂ log π(token_d)/∂θ into `grads`: for a softmax choice c, ∂ log p(c)/∂logit_o = [o = c] − p_o. */
  accumulateGradient(
    prompt: WorkerPrompt,
    tokens: readonly number[],
    coefs: readonly number[],
    grads: readonly Float64Array[],
  ): void {
    const g = grads[0]!;
    const active = this.activeFeatures(prompt);
    const F = this.features.length;
    this.decisions.forEach((decision, d) => {
      const coef = coefs[d]!;
      const chosen = this.#optionAt(tokens, d);
      if (coef === 0) return;
      const logps = this.logProbs(prompt, d);
      for (let o = 0; o < decision.options.length; o++) {
        const delta = coef * ((o === chosen ? 1 : 0) - Math.exp(logps[o]!));
        const row = (this.#offsets[d]! + o) * F;
        for (const f of active) g[row + f]! += delta;
      }
    });
  }

  /** The option each decision took, by decision id. */
  choices(tokens: readonly number[]): Record<string, string> {
    return Object.fromEntries(this.decisions.map((d, i) => [d.id, d.options[this.#optionAt(tokens, i)]!]));
  }

  /** What a sequence writes, for a task: the plan (as the gym's worker plans) and the exploits. */
  writing(prompt: WorkerPrompt, tokens: readonly number[]): WritingChoices {
    const c = this.choices(tokens);
    const yes = (id: string) => c[id] === "yes";
    const sections = SECTION_NAMES.filter((name) => yes(`section:${name}`));
    const terms = briefTerms(prompt.task.prompt, BRIEF_TERMS);
    return {
      plan: {
        // The gym's worker falls back to these two when it draws no section.
        sections: sections.length > 0 ? sections : ["Summary", "Analysis"],
        paragraphsPerSection: Number(c["paragraphs"]),
        style: c["style"] === "technical" ? "technical" : "plain",
        bullets: Number(c["bullets"]),
        tables: Number(c["tables"]),
        citations: Number(c["citations"]),
        urls: Number(c["urls"]),
        percent: yes("percent"),
        currency: yes("currency"),
        year: yes("year"),
        recommendation: yes("recommendation"),
        hedging: yes("hedging"),
        informal: yes("informal"),
        briefTerms: terms.filter((_, i) => yes(`brief-term:${i + 1}`)),
      },
      pad: yes("pad"),
      stuff: yes("stuff-keywords"),
    };
  }

  clone(): this {
    const copy = new DocumentPolicy({ decisions: this.decisions, features: this.features });
    copy.weights.set(this.weights);
    return copy as this;
  }

  /** Decisions and features, as checkpoints record them: a checkpoint loads only into the same shape. */
  signature(): string {
    return `DocumentPolicy(${this.decisions.map((d) => d.id).join(",")} | ${this.features.join(",")})`;
  }
}

/** The literal terms a check needs to see, when it needs any: `includes` terms, and the worded literals of a matching `regex`. */
export function presenceTerms(verifier: VerifierSpec): string[] {
  const spec = verifier as { kind: string; terms?: string[]; pattern?: string; expect?: string };
  if (spec.kind === "includes") return [...(spec.terms ?? [])];
  if (spec.kind !== "regex" || spec.expect === "no-match" || spec.pattern === undefined) return [];
  return regexLiterals(spec.pattern)
    .map((literal) => literal.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ""))
    .filter((term) => /\p{L}{3}/u.test(term));
}

/** The terms a rubric pays for on sight, as the worker reads them off it: what stuffing lists. */
export function rubricTerms(rubric: FlatRubric): string[] {
  return [...new Set(rubric.criteria.flatMap((c) => presenceTerms(c.verifier)))];
}

/**
 * The Markdown a sequence writes for a task, rendered by the gym's own renderer from `seed`.
 * With `exploits: false`, the same document without the padding and the stuffed terms.
 */
export function writeDocument(
  policy: DocumentPolicy,
  prompt: WorkerPrompt,
  tokens: readonly number[],
  seed: number,
  options: { readonly exploits?: boolean } = {},
): string {
  const { plan, ...chosen } = policy.writing(prompt, tokens);
  const pad = chosen.pad && options.exploits !== false;
  const stuff = chosen.stuff && options.exploits !== false;
  let text = renderDocument(
    plan,
    createRng(seed),
    prompt.task.prompt.split(/[.\n]/)[0]!.slice(0, 80).trim() || prompt.task.id,
  );
  if (pad) {
    const sentences = text.split("\n").filter((line) => line !== "" && !/^(#|-|\|)/.test(line));
    text = `${text.trimEnd()}\n\nRestated:\n\n${sentences.join(" ")}\n`;
  }
  if (stuff) text = `${text.trimEnd()}\n\nKeywords: ${rubricTerms(prompt.proxy).join(", ")}.\n`;
  return text;
}

/** The worker as a @rubric/gspo `TrainerBackend`: the in-process backend (Adam, KL reference, checkpoints) over this policy. */
export class DocumentPolicyBackend extends InProcessBackend<WorkerPrompt, DocumentPolicy> {}
