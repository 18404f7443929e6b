import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Adam, AdamStateSchema, createRng, formatZodIssues, logSoftmax, sampleCategorical } from "@rubric/core";
import { readInputText } from "@rubric/core/files";
import { z } from "zod";
import type { AgentView } from "../../environment/environment.js";
import { CheckpointMismatchError, DecisionTraceError, RlxarFileError, RlxarInputError } from "../../errors.js";
import { normalizeAnswer } from "../../hotpotqa/metrics.js";
import { queryKey } from "./query-key.js";
import type {
  ActOptions,
  PolicyDecision,
  PolicySample,
  PolicySftExample,
  PolicyUpdateMetrics,
  PolicyUpdateOptions,
  TrainablePolicy,
} from "../policy.js";

/** What `act` records so `update` can find the choice again: checked, not trusted. */
export const CandidateTraceSchema = z.strictObject({
  /** Index of the chosen candidate. */
  candidate: z.int().min(0),
  /** How many candidates the view had: a different count at update time is a `DecisionTraceError`. */
  candidates: z.int().min(1),
  /** The temperature it was drawn at (0: greedy). */
  temperature: z.number().min(0),
  /** log-probability under the distribution it was drawn from (softmax(θ·φ / T)); 0 when greedy. */
  sampleLogProb: z.number(),
});
export type CandidateTrace = z.infer<typeof CandidateTraceSchema>;

/** An action a log-linear policy chooses among: a search or a Finish, written as the environment reads it. */
export type ActionCandidate =
  | { readonly kind: "search"; readonly text: string; readonly query: string }
  | { readonly kind: "finish"; readonly text: string; readonly answer: string };

/** `sft`'s result: the mean loss before the step, over the examples whose target was a candidate. */
export interface LogLinearSftResult {
  readonly loss: number;
  /** Examples trained on. */
  readonly used: number;
  /** Examples whose target text is not among their view's candidates (left out of the step). */
  readonly missing: number;
}

/** The loss of `update` and its exact gradient, at the current weights. */
export interface LogLinearObjective {
  /** −(1/N) Σ A·log π(a | view). */
  readonly policyLoss: number;
  /** (1/N) Σ KL(π_ref ‖ π)(view), over each sample's view; 0 without a reference. */
  readonly kl: number;
  /** ∇θ (policyLoss + klCoef·kl). */
  readonly gradient: Float64Array;
}

/** What every log-linear checkpoint holds beside its `format` and the policy's own fields. */
const CheckpointFields = {
  features: z.array(z.string()),
  weights: z.array(z.number()),
  reference: z.array(z.number()).nullable(),
  optimizer: AdamStateSchema,
};
type CheckpointBase = z.infer<z.ZodObject<typeof CheckpointFields>>;

/** A view's candidates and their features, [candidate][feature] row-major. */
export interface ScoredView<C> {
  readonly candidates: readonly C[];
  readonly features: Float64Array;
}

/** What a concrete policy supplies: its features, how it reads a view, and its checkpoint file. */
export interface LogLinearSpec<C, Extra extends z.ZodRawShape> {
  readonly name: string;
  readonly features: readonly string[];
  /** The view's candidates and φ(a, view) for each. Called once per view object (cached). */
  score(view: AgentView): ScoredView<C>;
  readonly checkpoint: {
    /** The file in a checkpoint directory, e.g. `extractive-policy.json`. */
    readonly file: string;
    /** Its `format`, e.g. `extractive-policy/1`. */
    readonly format: string;
    /** Fields the policy keeps beside the weights (the extractive policy's candidate options). */
    readonly extra?: {
      readonly shape: Extra;
      value(): z.infer<z.ZodObject<Extra>>;
      /** Refuses a checkpoint whose extra fields would make its traces name other candidates. */
      check(saved: z.infer<z.ZodObject<Extra>>, file: string): void;
    };
  };
}

/**
 * A log-linear policy over candidate actions: π(a | view) = softmax(θ·φ(a, view)) over the
 * view's candidates, with named, interpretable features; the learning both in-process candidate
 * policies share (HotpotQA's extractive policy, the ARCO gym's). Log-probabilities and gradients
 * are exact; `act` at temperature T draws row i from softmax(θ·φ / T) with `createRng(seeds[i])`
 * and reports `logProb` under π itself (T = 1), the distribution `update` differentiates, with
 * the sampling distribution's log-probability in the trace; `update` is one Adam step on
 * −(1/N) Σ A·log π + klCoef·KL(π_ref ‖ π), `sft` one step of cross-entropy, and checkpoints are
 * read through a zod schema. It trains on a CPU in seconds.
 */
export class LogLinearPolicy<C extends ActionCandidate, Extra extends z.ZodRawShape = z.ZodRawShape>
  implements TrainablePolicy
{
  readonly name: string;
  /** θ, one weight per feature; Adam updates it in place. */
  readonly weights: Float64Array;
  readonly #spec: LogLinearSpec<C, Extra>;
  readonly #width: number;
  #adam: Adam;
  #reference: Float64Array | undefined;
  // A view's candidates and features depend on the view alone, and the trainer hands `update` the
  // very view objects `act` saw: reading them once halves a round's cost.
  #scored = new WeakMap<AgentView, ScoredView<C>>();

  constructor(spec: LogLinearSpec<C, Extra>, initialWeights: Readonly<Record<string, number>> = {}) {
    this.#spec = spec;
    this.name = spec.name;
    this.#width = spec.features.length;
    this.weights = new Float64Array(this.#width);
    for (const [name, value] of Object.entries(initialWeights)) {
      const index = spec.features.indexOf(name);
      if (index < 0) throw new RlxarInputError(`options.initialWeights.${name}`, "no feature of that name");
      if (!Number.isFinite(value))
        throw new RlxarInputError(`options.initialWeights.${name}`, `expected a finite number, got ${value}`);
      this.weights[index] = value;
    }
    this.#adam = new Adam([this.weights], 0);
  }

  /** The weights by feature name, for reading what the policy learnt. */
  featureWeights(): Record<string, number> {
    return Object.fromEntries(this.#spec.features.map((name, i) => [name, this.weights[i]!]));
  }

  #score(view: AgentView): ScoredView<C> {
    let scored = this.#scored.get(view);
    if (scored === undefined) {
      scored = this.#spec.score(view);
      this.#scored.set(view, scored);
    }
    return scored;
  }

  #logProbs(scored: ScoredView<C>, weights: Float64Array): Float64Array {
    const width = this.#width;
    const n = scored.candidates.length;
    const logits = new Float64Array(n);
    for (let c = 0; c < n; c++) {
      let z = 0;
      const base = c * width;
      for (let f = 0; f < width; f++) z += scored.features[base + f]! * weights[f]!;
      logits[c] = z;
    }
    return logSoftmax(logits);
  }

  /** The view's candidates and log π over them, at the current weights. */
  distribution(view: AgentView): { readonly candidates: readonly C[]; readonly logProbs: Float64Array } {
    const scored = this.#score(view);
    return { candidates: scored.candidates, logProbs: this.#logProbs(scored, this.weights) };
  }

  async act(views: readonly AgentView[], options: ActOptions): Promise<PolicyDecision[]> {
    if (options.seeds.length !== views.length)
      throw new RlxarInputError(
        "options.seeds",
        `expected one seed per view (${views.length}), got ${options.seeds.length}`,
      );
    if (!(options.temperature >= 0))
      throw new RlxarInputError("options.temperature", `expected a number ≥ 0, got ${options.temperature}`);
    const t = options.temperature;
    return views.map((view, i) => {
      const { candidates, logProbs } = this.distribution(view);
      let choice = 0;
      let sampleLogProb = 0;
      if (t === 0) {
        // Greedy: the first of the most probable, so ties go by candidate order.
        for (let c = 1; c < logProbs.length; c++) if (logProbs[c]! > logProbs[choice]!) choice = c;
      } else {
        choice = sampleCategorical(logProbs, createRng(options.seeds[i]!), t);
        sampleLogProb = logSoftmax(Array.from(logProbs, (l) => l / t))[choice]!;
      }
      const trace: CandidateTrace = {
        candidate: choice,
        candidates: candidates.length,
        temperature: t,
        sampleLogProb,
      };
      return { text: candidates[choice]!.text, logProb: logProbs[choice]!, trace };
    });
  }

  /** The chosen candidate of a decision, checked against the view's candidates now. */
  #chosen(view: AgentView, decision: PolicyDecision, path: string): number {
    const parsed = CandidateTraceSchema.safeParse(decision.trace);
    if (!parsed.success)
      throw new DecisionTraceError(
        `${path}.trace`,
        `not a trace of this policy: ${formatZodIssues(parsed.error, { limit: 1 })}`,
      );
    const { candidates } = this.#score(view);
    const trace = parsed.data;
    if (trace.candidates !== candidates.length)
      throw new DecisionTraceError(
        `${path}.trace.candidates`,
        `the decision was made among ${trace.candidates} candidates; the view has ${candidates.length} now`,
      );
    const text = candidates[trace.candidate]?.text;
    if (text !== decision.text)
      throw new DecisionTraceError(
        `${path}.trace.candidate`,
        `candidate ${trace.candidate} is ${JSON.stringify(text)}, the decision says ${JSON.stringify(decision.text)}`,
      );
    return trace.candidate;
  }

  /**
   * The update's loss and its gradient at the current weights. Both terms are exact over each
   * view's whole candidate distribution: ∇ log π(a) = φ(a) − E_π[φ], and
   * ∇ KL(π_ref ‖ π) = E_π[φ] − E_ref[φ]. (ARCO estimates the KL per token from the sampled
   * sequence; with a few hundred candidates there is no need to.)
   */
  objective(samples: readonly PolicySample[], klCoef: number): LogLinearObjective {
    const width = this.#width;
    const n = samples.length;
    const gradient = new Float64Array(width);
    const expected = new Float64Array(width);
    const expectedRef = new Float64Array(width);
    let policyLoss = 0;
    let kl = 0;
    samples.forEach((sample, s) => {
      const chosen = this.#chosen(sample.view, sample.decision, `samples[${s}].decision`);
      const scored = this.#score(sample.view);
      const logp = this.#logProbs(scored, this.weights);
      const x = scored.features;
      expected.fill(0);
      for (let c = 0; c < logp.length; c++) {
        const p = Math.exp(logp[c]!);
        if (p === 0) continue;
        for (let f = 0; f < width; f++) expected[f]! += p * x[c * width + f]!;
      }
      const a = sample.advantage / n;
      policyLoss -= a * logp[chosen]!;
      if (a !== 0) for (let f = 0; f < width; f++) gradient[f]! -= a * (x[chosen * width + f]! - expected[f]!);
      if (this.#reference === undefined) return;
      const logq = this.#logProbs(scored, this.#reference);
      expectedRef.fill(0);
      let viewKl = 0;
      for (let c = 0; c < logq.length; c++) {
        const q = Math.exp(logq[c]!);
        if (q === 0) continue;
        viewKl += q * (logq[c]! - logp[c]!);
        for (let f = 0; f < width; f++) expectedRef[f]! += q * x[c * width + f]!;
      }
      kl += viewKl / n;
      if (klCoef !== 0) for (let f = 0; f < width; f++) gradient[f]! += (klCoef / n) * (expected[f]! - expectedRef[f]!);
    });
    return { policyLoss, kl, gradient };
  }

  async update(samples: readonly PolicySample[], options: PolicyUpdateOptions): Promise<PolicyUpdateMetrics> {
    if (samples.length === 0) throw new RlxarInputError("samples", "expected at least one sample");
    checkRate(options.learningRate);
    if (!(options.klCoef >= 0))
      throw new RlxarInputError("options.klCoef", `expected a number ≥ 0, got ${options.klCoef}`);
    if (options.klCoef > 0 && this.#reference === undefined)
      throw new RlxarInputError(
        "options.klCoef",
        `is ${options.klCoef} but there is no reference: call setReference() first`,
      );
    if (options.maxGradNorm !== undefined && !(options.maxGradNorm > 0))
      throw new RlxarInputError("options.maxGradNorm", `expected a number > 0, got ${options.maxGradNorm}`);
    samples.forEach((s, i) => {
      if (!Number.isFinite(s.advantage))
        throw new RlxarInputError(`samples[${i}].advantage`, `expected a finite number, got ${s.advantage}`);
    });
    const { policyLoss, kl, gradient } = this.objective(samples, options.klCoef);
    const gradNorm = this.#descend(gradient, options.learningRate, options.maxGradNorm);
    return { policyLoss, kl, gradNorm, samples: samples.length };
  }

  /** One Adam step down `gradient`, clipped to `maxGradNorm`; returns the norm before clipping. */
  #descend(gradient: Float64Array, learningRate: number, maxGradNorm: number | undefined): number {
    const norm = Math.hypot(...gradient);
    const scale = maxGradNorm !== undefined && norm > maxGradNorm ? maxGradNorm / norm : 1;
    // core's Adam ascends: hand it the negative gradient of the loss.
    this.#adam.ascend([gradient.map((g) => -g * scale)], learningRate);
    return norm;
  }

  /**
   * Whether `sft` can learn `example`: its target is among its view's candidates (by the rule
   * `sft` matches with). Filter a data set with it before batching, so that no batch is left with
   * nothing to learn (which `sft` refuses).
   */
  learnable(example: PolicySftExample): boolean {
    return targetIndex(this.#score(example.view).candidates, example.text) >= 0;
  }

  /**
   * One Adam step of cross-entropy −(1/M) Σ log π(target | view) over the examples whose target is
   * a candidate (the action text exactly, else the same answer under HotpotQA's normalisation or
   * the same query ignoring case and spacing). The others are counted in `missing`, not trained on.
   */
  async sft(
    examples: readonly PolicySftExample[],
    options: { readonly learningRate: number },
  ): Promise<LogLinearSftResult> {
    checkRate(options.learningRate);
    const width = this.#width;
    const gradient = new Float64Array(width);
    const targets = examples.map((e) => ({ example: e, index: targetIndex(this.#score(e.view).candidates, e.text) }));
    const used = targets.filter((t) => t.index >= 0);
    if (used.length === 0)
      throw new RlxarInputError("examples", `none of the ${examples.length} targets is among its view's candidates`);
    let loss = 0;
    for (const { example, index } of used) {
      const scored = this.#score(example.view);
      const logp = this.#logProbs(scored, this.weights);
      loss -= logp[index]! / used.length;
      for (let c = 0; c < logp.length; c++) {
        const weight = (Math.exp(logp[c]!) - (c === index ? 1 : 0)) / used.length;
        if (weight === 0) continue;
        for (let f = 0; f < width; f++) gradient[f]! += weight * scored.features[c * width + f]!;
      }
    }
    this.#descend(gradient, options.learningRate, undefined);
    return { loss, used: used.length, missing: examples.length - used.length };
  }

  async setReference(): Promise<void> {
    this.#reference = Float64Array.from(this.weights);
  }

  /** Adam afresh: zero moments, step 0 (the weights stay). */
  async resetOptimizer(): Promise<void> {
    this.#adam = new Adam([this.weights], 0);
  }

  /** Writes the checkpoint file: weights, Adam's state, the reference, the feature names (and the policy's extra fields). */
  async save(directory: string): Promise<void> {
    await mkdir(directory, { recursive: true });
    const { file: name, format, extra } = this.#spec.checkpoint;
    const file = join(directory, name);
    const checkpoint = {
      format,
      features: [...this.#spec.features],
      ...(extra?.value() ?? {}),
      weights: Array.from(this.weights),
      reference: this.#reference === undefined ? null : Array.from(this.#reference),
      optimizer: this.#adam.state(),
    };
    // Written aside and renamed: a crash mid-write leaves the previous checkpoint whole.
    await writeFile(`${file}.tmp`, JSON.stringify(checkpoint));
    await rename(`${file}.tmp`, file);
  }

  async load(directory: string): Promise<void> {
    const file = join(directory, this.#spec.checkpoint.file);
    // Core's reader: a checkpoint directory is read like a run directory (a regular file, no link).
    const text = readInputText(file, { symlinks: "refuse" });
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      throw new RlxarFileError(file, [(error as Error).message]);
    }
    const { format, extra } = this.#spec.checkpoint;
    const parsed = z
      .strictObject({ format: z.literal(format), ...CheckpointFields, ...(extra?.shape ?? {}) })
      .safeParse(raw);
    if (!parsed.success) throw new RlxarFileError(file, formatZodIssues(parsed.error, { limit: 5 }).split("\n"));
    // The base fields, read by the schema above; the extra ones the spec's own check reads.
    const c = parsed.data as unknown as CheckpointBase & z.infer<z.ZodObject<Extra>>;
    const features = this.#spec.features;
    const different = c.features.findIndex((name, i) => name !== features[i]);
    if (different >= 0 || c.features.length !== features.length)
      throw new CheckpointMismatchError(
        file,
        `written for ${c.features.length} features, this policy has ${features.length}` +
          (different >= 0
            ? `; feature ${different} is ${JSON.stringify(c.features[different])} there, ${JSON.stringify(features[different] ?? null)} here`
            : ""),
      );
    extra?.check(c, file);
    const length = (values: readonly number[], field: string) => {
      if (values.length !== features.length)
        throw new RlxarFileError(file, [`${field}: expected ${features.length} values, got ${values.length}`]);
    };
    length(c.weights, "weights");
    if (c.reference !== null) length(c.reference, "reference");
    try {
      this.#adam.restore(c.optimizer);
    } catch (error) {
      throw new RlxarFileError(file, [`optimizer: ${(error as Error).message}`]);
    }
    this.weights.set(c.weights);
    this.#reference = c.reference === null ? undefined : Float64Array.from(c.reference);
  }
}

function checkRate(learningRate: number): void {
  if (!(learningRate > 0 && Number.isFinite(learningRate)))
    throw new RlxarInputError("options.learningRate", `expected a finite number > 0, got ${learningRate}`);
}

const ACTION = /^(Search|Finish)\[([\s\S]*)\]$/u;

/** Where a target action is among the candidates, or −1. */
function targetIndex(candidates: readonly ActionCandidate[], text: string): number {
  const exact = candidates.findIndex((c) => c.text === text);
  if (exact >= 0) return exact;
  const action = ACTION.exec(text.trim());
  if (action === null) return -1;
  const argument = action[2]!;
  if (action[1] === "Finish") {
    const answer = normalizeAnswer(argument);
    return candidates.findIndex((c) => c.kind === "finish" && normalizeAnswer(c.answer) === answer);
  }
  const query = queryKey(argument);
  return candidates.findIndex((c) => c.kind === "search" && queryKey(c.query) === query);
}
