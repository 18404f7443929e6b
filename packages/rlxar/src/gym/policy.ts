import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Adam, AdamStateSchema, createRng, formatZodIssues, logSoftmax, sampleCategorical } from "@rubric/core";
import { z } from "zod";
import type { AgentView } from "../environment/environment.js";
import { CheckpointMismatchError, DecisionTraceError, RlxarFileError, RlxarInputError } from "../errors.js";
import { normalizeAnswer } from "../hotpotqa/metrics.js";
import type {
  ActOptions,
  PolicyDecision,
  PolicySample,
  PolicySftExample,
  PolicyUpdateMetrics,
  PolicyUpdateOptions,
  TrainablePolicy,
} from "../policy/policy.js";
import { type GymCandidate, gymCandidates, queryKey } from "./candidates.js";
import { GYM_FEATURE_NAMES, gymFeatureIndex, gymFeatureMatrix } from "./features.js";

export interface GymPolicyOptions {
  /** Default `"gym"`. */
  readonly name?: string;
  /** Starting weights by feature name (`GYM_FEATURE_NAMES`); the rest start at 0, the uniform policy. */
  readonly initialWeights?: Readonly<Record<string, number>>;
}

/** What `act` records so `update` finds the choice again: checked, not trusted. */
export const GymTraceSchema = z.strictObject({
  candidate: z.int().min(0),
  candidates: z.int().min(1),
  temperature: z.number().min(0),
  /** log-probability under the distribution it was drawn from (softmax(θ·φ / T)); 0 when greedy. */
  sampleLogProb: z.number(),
});
export type GymTrace = z.infer<typeof GymTraceSchema>;

const CHECKPOINT_FILE = "gym-policy.json";

const CheckpointSchema = z.strictObject({
  format: z.literal("gym-policy/1"),
  features: z.array(z.string()),
  weights: z.array(z.number()),
  reference: z.array(z.number()).nullable(),
  optimizer: AdamStateSchema,
});

interface Scored {
  readonly candidates: readonly GymCandidate[];
  readonly features: Float64Array;
}

const WIDTH = GYM_FEATURE_NAMES.length;

/**
 * The ARCO gym's trainable policy: π(a | view) = softmax(θ·φ(a, view)) over the view's candidates
 * (`gymCandidates`: searches for every name in view, whole or one word alone, and Finishes with
 * them) with the named features of `GYM_FEATURE_NAMES`. Its features can express the optimal
 * policy, so imitation of the oracle can reach it, and the careless habits of a noisy teacher
 * equally. It is the extractive policy's log-linear machinery over the gym's candidates: exact
 * log-probabilities and gradients, `act` at temperature T drawing row i from
 * `createRng(seeds[i])`, `update` one Adam step on −(1/N) Σ A·log π + klCoef·KL(π_ref ‖ π),
 * `sft` one step of cross-entropy, checkpoints read through a zod schema.
 *
 * @example
 * const policy = gymPolicy();
 * const episodes = await rollout(arcoGym(), tasks, policy, { temperature: 1, seed: 1 }); // a random policy
 */
export class GymPolicy implements TrainablePolicy {
  readonly name: string;
  /** θ, one weight per `GYM_FEATURE_NAMES` entry; Adam updates it in place. */
  readonly weights = new Float64Array(WIDTH);
  #adam: Adam;
  #reference: Float64Array | undefined;
  // The trainer hands `update` the very view objects `act` saw: read each once.
  #scored = new WeakMap<AgentView, Scored>();

  constructor(options: GymPolicyOptions = {}) {
    this.name = options.name ?? "gym";
    for (const [name, value] of Object.entries(options.initialWeights ?? {})) {
      const index = gymFeatureIndex(name);
      if (index < 0) throw new RlxarInputError(`options.initialWeights.${name}`, "no feature of that name");
      if (!Number.isFinite(value))
        throw new RlxarInputError(`options.initialWeights.${name}`, `expected a finite number, got ${value}`);
      this.weights[index] = value;
    }
    this.#adam = new Adam([this.weights], 0);
  }

  /** The weights by feature name. */
  featureWeights(): Record<string, number> {
    return Object.fromEntries(GYM_FEATURE_NAMES.map((name, i) => [name, this.weights[i]!]));
  }

  #score(view: AgentView): Scored {
    let scored = this.#scored.get(view);
    if (scored === undefined) {
      const { reading, candidates } = gymCandidates(view);
      scored = { candidates, features: gymFeatureMatrix(candidates, reading) };
      this.#scored.set(view, scored);
    }
    return scored;
  }

  #logProbs(scored: Scored, weights: Float64Array): Float64Array {
    const logits = new Float64Array(scored.candidates.length);
    for (let c = 0; c < logits.length; c++) {
      let z = 0;
      for (let f = 0; f < WIDTH; f++) z += scored.features[c * WIDTH + f]! * weights[f]!;
      logits[c] = z;
    }
    return logSoftmax(logits);
  }

  /** The view's candidates and log π over them, at the current weights. */
  distribution(view: AgentView): { readonly candidates: readonly GymCandidate[]; readonly logProbs: Float64Array } {
    const scored = this.#score(view);
    return { candidates: scored.candidates, logProbs: this.#logProbs(scored, this.weights) };
  }

  async act(views: readonly AgentView[], options: ActOptions): Promise<PolicyDecision[]> {
    if (options.seeds.length !== views.length)
      throw new RlxarInputError(
        "options.seeds",
        `expected one seed per view (${views.length}), got ${options.seeds.length}`,
      );
    const t = options.temperature;
    if (!(t >= 0)) throw new RlxarInputError("options.temperature", `expected a number ≥ 0, got ${t}`);
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
      const trace: GymTrace = { candidate: choice, candidates: candidates.length, temperature: t, sampleLogProb };
      return { text: candidates[choice]!.text, logProb: logProbs[choice]!, trace };
    });
  }

  #chosen(view: AgentView, decision: PolicyDecision, path: string): number {
    const parsed = GymTraceSchema.safeParse(decision.trace);
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

  /** E_π[φ] over one view's candidates, into `out`. */
  #expected(scored: Scored, logp: Float64Array, out: Float64Array): void {
    out.fill(0);
    for (let c = 0; c < logp.length; c++) {
      const p = Math.exp(logp[c]!);
      if (p !== 0) for (let f = 0; f < WIDTH; f++) out[f]! += p * scored.features[c * WIDTH + f]!;
    }
  }

  /**
   * One Adam step on −(1/N) Σ A·log π(a | view) + klCoef·KL(π_ref ‖ π), both exact over each view's
   * candidates: ∇ log π(a) = φ(a) − E_π[φ], ∇ KL(π_ref ‖ π) = E_π[φ] − E_ref[φ].
   */
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
    const n = samples.length;
    const gradient = new Float64Array(WIDTH);
    const expected = new Float64Array(WIDTH);
    const expectedRef = new Float64Array(WIDTH);
    let policyLoss = 0;
    let kl = 0;
    samples.forEach((sample, s) => {
      if (!Number.isFinite(sample.advantage))
        throw new RlxarInputError(`samples[${s}].advantage`, `expected a finite number, got ${sample.advantage}`);
      const chosen = this.#chosen(sample.view, sample.decision, `samples[${s}].decision`);
      const scored = this.#score(sample.view);
      const logp = this.#logProbs(scored, this.weights);
      this.#expected(scored, logp, expected);
      const a = sample.advantage / n;
      policyLoss -= a * logp[chosen]!;
      for (let f = 0; f < WIDTH; f++) gradient[f]! -= a * (scored.features[chosen * WIDTH + f]! - expected[f]!);
      if (this.#reference === undefined) return;
      const logq = this.#logProbs(scored, this.#reference);
      this.#expected(scored, logq, expectedRef);
      for (let c = 0; c < logq.length; c++) {
        const q = Math.exp(logq[c]!);
        if (q !== 0) kl += (q * (logq[c]! - logp[c]!)) / n;
      }
      for (let f = 0; f < WIDTH; f++) gradient[f]! += (options.klCoef / n) * (expected[f]! - expectedRef[f]!);
    });
    const gradNorm = this.#descend(gradient, options.learningRate, options.maxGradNorm);
    return { policyLoss, kl, gradNorm, samples: n };
  }

  #descend(gradient: Float64Array, learningRate: number, maxGradNorm: number | undefined): number {
    const norm = Math.hypot(...gradient);
    const scale = maxGradNorm !== undefined && norm > maxGradNorm ? maxGradNorm / norm : 1;
    // core's Adam ascends: hand it the negative gradient of the loss.
    this.#adam.ascend([gradient.map((g) => -g * scale)], learningRate);
    return norm;
  }

  /** Whether `sft` can learn the example: its target is among its view's candidates. */
  learnable(example: PolicySftExample): boolean {
    return targetIndex(this.#score(example.view).candidates, example.text) >= 0;
  }

  /**
   * One Adam step of cross-entropy −(1/M) Σ log π(target | view) over the examples whose target is
   * a candidate (the text exactly, else the same query ignoring case and spacing, or the same
   * answer under HotpotQA's normalisation); the others are counted in `missing`.
   */
  async sft(
    examples: readonly PolicySftExample[],
    options: { readonly learningRate: number },
  ): Promise<{ readonly loss: number; readonly used: number; readonly missing: number }> {
    checkRate(options.learningRate);
    const used = examples
      .map((example) => ({ example, index: targetIndex(this.#score(example.view).candidates, example.text) }))
      .filter((t) => t.index >= 0);
    if (used.length === 0)
      throw new RlxarInputError("examples", `none of the ${examples.length} targets is among its view's candidates`);
    const gradient = new Float64Array(WIDTH);
    let loss = 0;
    for (const { example, index } of used) {
      const scored = this.#score(example.view);
      const logp = this.#logProbs(scored, this.weights);
      loss -= logp[index]! / used.length;
      for (let c = 0; c < logp.length; c++) {
        const weight = (Math.exp(logp[c]!) - (c === index ? 1 : 0)) / used.length;
        if (weight !== 0) for (let f = 0; f < WIDTH; f++) gradient[f]! += weight * scored.features[c * WIDTH + f]!;
      }
    }
    this.#descend(gradient, options.learningRate, undefined);
    return { loss, used: used.length, missing: examples.length - used.length };
  }

  async setReference(): Promise<void> {
    this.#reference = Float64Array.from(this.weights);
  }

  async resetOptimizer(): Promise<void> {
    this.#adam = new Adam([this.weights], 0);
  }

  /** Writes `directory/gym-policy.json`: weights, Adam's state, the reference and the feature names. */
  async save(directory: string): Promise<void> {
    await mkdir(directory, { recursive: true });
    const file = join(directory, CHECKPOINT_FILE);
    const checkpoint: z.infer<typeof CheckpointSchema> = {
      format: "gym-policy/1",
      features: [...GYM_FEATURE_NAMES],
      weights: Array.from(this.weights),
      reference: this.#reference === undefined ? null : Array.from(this.#reference),
      optimizer: this.#adam.state(),
    };
    // Written aside and renamed: a crash mid-write leaves the previous checkpoint whole.
    await writeFile(`${file}.tmp`, JSON.stringify(checkpoint));
    await rename(`${file}.tmp`, file);
  }

  async load(directory: string): Promise<void> {
    const file = join(directory, CHECKPOINT_FILE);
    let raw: unknown;
    try {
      raw = JSON.parse(await readFile(file, "utf8"));
    } catch (error) {
      throw new RlxarFileError(file, [(error as Error).message]);
    }
    const parsed = CheckpointSchema.safeParse(raw);
    if (!parsed.success) throw new RlxarFileError(file, formatZodIssues(parsed.error, { limit: 5 }).split("\n"));
    const c = parsed.data;
    if (c.features.length !== WIDTH || c.features.some((name, i) => name !== GYM_FEATURE_NAMES[i]))
      throw new CheckpointMismatchError(
        file,
        `written for features [${c.features.join(", ")}], this policy has [${GYM_FEATURE_NAMES.join(", ")}]`,
      );
    const wrongLength = (field: string, values: readonly number[] | null) => {
      if (values !== null && values.length !== WIDTH)
        throw new RlxarFileError(file, [`${field}: expected ${WIDTH} values, got ${values.length}`]);
    };
    wrongLength("weights", c.weights);
    wrongLength("reference", c.reference);
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
function targetIndex(candidates: readonly GymCandidate[], text: string): number {
  const exact = candidates.findIndex((c) => c.text === text);
  if (exact >= 0) return exact;
  const action = ACTION.exec(text.trim());
  if (action === null) return -1;
  if (action[1] === "Finish") {
    const answer = normalizeAnswer(action[2]!);
    return candidates.findIndex((c) => c.kind === "finish" && normalizeAnswer(c.answer) === answer);
  }
  const query = queryKey(action[2]!);
  return candidates.findIndex((c) => c.kind === "search" && queryKey(c.query) === query);
}

/**
 * A new gym policy: all weights 0 unless given, the uniform (random) policy over each view's candidates.
 *
 * @example
 * const random = gymPolicy();
 * const [decision] = await random.act([view], { temperature: 1, seeds: ["run/t0/0/0"] });
 */
export function gymPolicy(options: GymPolicyOptions = {}): GymPolicy {
  return new GymPolicy(options);
}
