import { Adam, createRng, decompositionLoss, shuffle, valueDifferences, valueLoss } from "@rubric/core";
import { RlxarInputError } from "../errors.js";
import type { Episode } from "../rollout/rollout.js";
import type { CriticUpdate, StepCritic, StepRating } from "./step-critic.js";

/**
 * What a feature critic learns from outcomes: `decomposition`, ARCO's (step scores
 * s_t = tanh(θ·φ_t + b) made to sum to R), or `value-difference` (ours: a state value
 * V(h_t) = θ·ψ_t + b regressed on R, the step's credit its change s_t = V(h_{t+1}) − V(h_t), the
 * last step's R − V(h_{T−1}); the one-step advantage of actor-critic methods).
 */
export type FeatureObjective = "decomposition" | "value-difference";

/** What a {@link featureCritic} is built from. */
export interface FeatureCriticOptions {
  /**
   * One row per step, `names.length` values each: φ of the action each step took
   * (`decomposition`), or ψ of the state each step started from, h_t (`value-difference`).
   */
  readonly features: (episode: Episode) => readonly (readonly number[])[];
  /** Default `decomposition`. */
  readonly objective?: FeatureObjective;
  /** The features' names, in row order (the criterion text and the weights' keys). */
  readonly names: readonly string[];
  /** Whether `update` trains it on every batch (ARCO's co-evolution); default true. */
  readonly coEvolves?: boolean;
  /** Adam's step size for `fit` and `update` (default 0.05). */
  readonly learningRate?: number;
  /**
   * Pull toward the reference weights, β·‖θ − θ_ref‖² (default 0.05, ARCO's β): the place of
   * μ's KL(μ_ref ‖ μ) for a scorer that writes no text.
   */
  readonly beta?: number;
}

/** What {@link FeatureCritic.fit} reports per epoch. */
export interface FeatureFitEpoch {
  readonly epoch: number;
  readonly loss: number;
  /** decomposition: mean |Σ_t s_t − R| over episodes; value-difference: mean |V(h_t) − R| over steps. */
  readonly meanAbsoluteGap: number;
}

const CRITERIA: Readonly<Record<FeatureObjective, string>> = {
  decomposition: "decomposition score over hand-made step features (ours: a labelled variant of μ, no text)",
  "value-difference":
    "change of a state value fitted to outcomes, V(h_t+1) − V(h_t) (ours: a labelled variant, no text)",
};

/** A batch's loss and its gradient with respect to each row's linear score z = θ·row + b. */
interface LossAndGradient {
  readonly loss: number;
  readonly meanAbsoluteGap: number;
  readonly dz: number[][];
}

/**
 * A critic that learns step credit from outcomes alone, with the representation taken out of
 * the question: s_t = tanh(θ·φ_t + b) over hand-made step features φ (the policy's own, in the
 * gym), trained by ARCO's decomposition loss (`decompositionLoss`: class-balanced
 * (Σ_t s_t − R)², no step label) — by `fit` on logged episodes, then, when it co-evolves, one
 * Adam step per batch with a pull β·‖θ − θ_ref‖² to the weights `freezeReference` keeps. It
 * answers whether Σ_t s_t = R alone can identify credit when the scorer can read what matters;
 * ARCO's μ must also learn to read it from text. K = 1: its one "criterion" names what it is.
 * With `objective: "value-difference"` it learns a state value instead and credits each step
 * with the value's change (ours; see {@link FeatureObjective}): the same data, the same features'
 * reach, another identification of credit.
 *
 * @example
 * const critic = featureCritic({ features: gymStepFeatures, names: GYM_FEATURE_NAMES });
 * critic.fit(teacherEpisodes, { epochs: 200 });
 * await trainCoEvolution({ environment: arcoGym(), train, policy, critic, settings });
 */
export class FeatureCritic implements StepCritic {
  readonly coEvolves: boolean;
  #version = 0;
  readonly #options: FeatureCriticOptions;
  /** θ (one per feature) then b. */
  readonly #weights: Float64Array;
  #reference: Float64Array;
  readonly #adam: Adam;
  readonly #cache = new WeakMap<Episode, readonly (readonly number[])[]>();
  readonly #objective: FeatureObjective;

  constructor(options: FeatureCriticOptions) {
    if (options.names.length === 0) throw new RlxarInputError("names", "a feature critic needs at least one feature");
    this.#options = options;
    this.#objective = options.objective ?? "decomposition";
    this.coEvolves = options.coEvolves ?? true;
    this.#weights = new Float64Array(options.names.length + 1);
    this.#reference = this.#weights.slice();
    this.#adam = new Adam([this.#weights], options.learningRate ?? 0.05);
  }

  get version(): number {
    return this.#version;
  }

  /**
   * A critic in this one's state — its weights, reference and optimiser moments — that goes on
   * on its own: one fit shared by several runs (frozen or co-evolving) without fitting again.
   */
  copy(options: { readonly coEvolves?: boolean } = {}): FeatureCritic {
    const copy = new FeatureCritic({ ...this.#options, coEvolves: options.coEvolves ?? this.coEvolves });
    copy.#weights.set(this.#weights);
    copy.#reference = this.#reference.slice();
    copy.#adam.restore(this.#adam.state());
    return copy;
  }

  /** θ by feature name, and the bias. */
  weights(): { readonly byFeature: Readonly<Record<string, number>>; readonly bias: number } {
    const { names } = this.#options;
    return {
      byFeature: Object.fromEntries(names.map((name, i) => [name, this.#weights[i]!])),
      bias: this.#weights[names.length]!,
    };
  }

  async rate(episodes: readonly Episode[]): Promise<StepRating[][]> {
    const criterion = CRITERIA[this.#objective];
    return this.#scores(episodes).map((row) => row.map((s) => ({ criteria: [criterion], scores: [s], s })));
  }

  async freezeReference(): Promise<void> {
    this.#reference = this.#weights.slice();
  }

  async resume(): Promise<void> {}

  async update(episodes: readonly Episode[]): Promise<CriticUpdate> {
    if (!this.coEvolves) throw new RlxarInputError("critic", "this feature critic is frozen: it cannot be updated");
    const started = performance.now();
    const step = this.#step(episodes);
    this.#version++;
    return { metrics: step, version: this.#version, trainMs: performance.now() - started, exportMs: 0 };
  }

  /**
   * The warm-up: `epochs` passes of the objective's loss over `episodes` (outcomes only, no
   * step label), in shuffled mini-batches of `batchSize` (seeded), with no pull to a reference.
   * Returns each epoch's loss over all episodes after it.
   */
  fit(
    episodes: readonly Episode[],
    options: { readonly epochs: number; readonly batchSize?: number; readonly seed?: number | string },
  ): FeatureFitEpoch[] {
    if (episodes.length === 0) throw new RlxarInputError("episodes", "nothing to fit: no episodes");
    const batchSize = options.batchSize ?? 32;
    const rng = createRng(options.seed ?? "feature-critic/fit");
    const epochs: FeatureFitEpoch[] = [];
    for (let epoch = 1; epoch <= options.epochs; epoch++) {
      const order = shuffle(
        episodes.map((_, i) => i),
        rng,
      );
      for (let start = 0; start < order.length; start += batchSize)
        this.#step(
          order.slice(start, start + batchSize).map((i) => episodes[i]!),
          0,
        );
      const { loss, meanAbsoluteGap } = this.#loss(episodes);
      epochs.push({ epoch, loss, meanAbsoluteGap });
    }
    return epochs;
  }

  #features(episode: Episode): readonly (readonly number[])[] {
    // An episode is immutable once rolled out, and `fit` reads each one every epoch.
    const cached = this.#cache.get(episode);
    if (cached !== undefined) return cached;
    const rows = this.#options.features(episode);
    const width = this.#options.names.length;
    if (rows.length !== episode.steps.length)
      throw new RlxarInputError(
        "features",
        `episode ${episode.taskId}#${episode.replica}: ${rows.length} feature rows for ${episode.steps.length} steps`,
      );
    rows.forEach((row, t) => {
      if (row.length !== width)
        throw new RlxarInputError(
          "features",
          `episode ${episode.taskId}#${episode.replica} step ${t}: ${row.length} features, expected ${width}`,
        );
    });
    this.#cache.set(episode, rows);
    return rows;
  }

  /** z = θ·row + b for every row of every episode. */
  #linear(episodes: readonly Episode[]): number[][] {
    const w = this.#weights;
    const bias = w.length - 1;
    return episodes.map((episode) =>
      this.#features(episode).map((row) => row.reduce((z, x, i) => z + x * w[i]!, w[bias]!)),
    );
  }

  #scores(episodes: readonly Episode[]): number[][] {
    const z = this.#linear(episodes);
    if (this.#objective === "decomposition") return z.map((row) => row.map(Math.tanh));
    // s_t = V(h_{t+1}) − V(h_t); after the last step the episode's outcome is its value.
    return z.map((values, e) => valueDifferences(values, episodes[e]!.reward));
  }

  #loss(episodes: readonly Episode[]): LossAndGradient {
    const outcomes = episodes.map((e) => e.reward);
    const z = this.#linear(episodes);
    if (this.#objective === "decomposition") {
      const scores = z.map((row) => row.map(Math.tanh));
      const { loss, gradients, meanAbsoluteGap } = decompositionLoss(scores, outcomes);
      return { loss, meanAbsoluteGap, dz: scores.map((row, e) => row.map((s) => gradients[e]! * (1 - s * s))) };
    }
    // (1/N) Σ_τ w_τ (1/T_τ) Σ_t (V(h_t) − R_τ)², class-balanced as the decomposition loss is.
    const { loss, gradients, meanAbsoluteGap } = valueLoss(z, outcomes);
    return { loss, meanAbsoluteGap, dz: gradients };
  }

  /** One Adam step on the objective's loss (+ β‖θ − θ_ref‖²) of `episodes`. */
  #step(episodes: readonly Episode[], beta = this.#options.beta ?? 0.05): Record<string, number> {
    const rows = episodes.map((episode) => this.#features(episode));
    const { loss, meanAbsoluteGap, dz } = this.#loss(episodes);
    const w = this.#weights;
    const bias = w.length - 1;
    const grad = new Float64Array(w.length);
    let pull = 0;
    rows.forEach((steps, e) =>
      steps.forEach((row, t) => {
        const d = dz[e]![t]!;
        row.forEach((x, i) => {
          grad[i]! += d * x;
        });
        grad[bias]! += d;
      }),
    );
    for (let i = 0; i < w.length; i++) {
      const d = w[i]! - this.#reference[i]!;
      pull += beta * d * d;
      grad[i]! += 2 * beta * d;
      // Adam ascends; the loss is minimised.
      grad[i] = -grad[i]!;
    }
    this.#adam.ascend([grad]);
    return { loss, pull, meanAbsoluteGap };
  }
}

/**
 * A {@link FeatureCritic}: step credit learned by ARCO's decomposition loss over hand-made step
 * features (a labelled variant of μ).
 */
export function featureCritic(options: FeatureCriticOptions): FeatureCritic {
  return new FeatureCritic(options);
}
