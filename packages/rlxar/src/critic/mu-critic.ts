import { type MuTokenizer, readModel, type RubricModel, type Step, type StepPromptOptions } from "@rubric/arco-heads";
import { valueDifferences } from "@rubric/core";
import type { MuObjective, RemoteMu } from "@rubric/sidecar";
import { RlxarInputError } from "../errors.js";
import { type Episode, episodeSteps } from "../rollout/rollout.js";
import { exportMu } from "../mu/sidecar-mu.js";
import { SidecarMuModel } from "../mu/sidecar-mu-model.js";
import type { CriticUpdate, StepCritic, StepRating } from "./step-critic.js";

/**
 * Where a step's criteria come from: μ writes them (ARCO), one fixed list serves every step (the
 * "w/o adaptive" ablation), or there are none and the score head reads the step alone (K = 1, a
 * scalar process reward: "w/o rubric").
 */
export type CriteriaSource =
  | { readonly kind: "generated" }
  | { readonly kind: "fixed"; readonly criteria: readonly string[] }
  | { readonly kind: "none" };

/** How μ's sidecar side is trained on each batch (ARCO's RL-phase values by default). */
export interface MuUpdateSettings {
  /** The backbone's learning rate (ARCO's LoRA μ: 1e-5; a small μ from scratch wants more). */
  readonly learningRate: number;
  /** The score head's (ARCO: 5e-4). */
  readonly headLearningRate: number;
  /** β of KL(μ_ref ‖ μ) on the criteria tokens (ARCO: 0.05). */
  readonly beta: number;
  /**
   * What `mu.step` fits: ARCO's `decomposition` of R over the steps, or ours, `value`: every
   * step's score regressed on its episode's R (core's `valueLoss`). Default: the one the critic's
   * `credit` reads (`value` for `value-difference`); a mismatch is refused.
   */
  readonly objective?: MuObjective;
}

/**
 * What a step's credit `s` is: μ's score itself (ARCO), or ours, the change of μ's value that the
 * step brought, for a μ trained as a value (`objective: "value"`). μ scores a step before its
 * observation, so its score is the value of the prefix with the action, Q(h_t, a_t), which in a
 * deterministic environment is the value of the next state: the credits are `valueDifferences`
 * over [V₀, Q₀, …, Q_{T−2}] with the outcome R at the end, where V₀ is the batch's mean outcome.
 * Σ_t s_t = R − V₀, the outcome's advantage over the batch.
 */
export type MuCredit = "scores" | "value-difference";

export interface MuCriticOptions {
  /**
   * μ for inference: an ONNX export in onnxruntime-node (`RubricModel`, reloaded after each
   * update), or the sidecar's μ itself (`SidecarMuModel`: a transformers μ, or the small one
   * served the same way), which a `mu.step` changes in place and each update saves as a version.
   */
  readonly model: RubricModel | SidecarMuModel;
  /**
   * The sidecar's μ with the same weights and its optimiser: present when μ co-evolves, absent
   * when frozen. For a `SidecarMuModel`, its own handle (`model.mu`).
   */
  readonly mu?: RemoteMu;
  /** The model root that updates export into (`model`'s own root; a `SidecarMuModel` has its own). */
  readonly root?: string;
  readonly criteria?: CriteriaSource;
  /** Show μ the trajectory so far (ARCO); false is the "w/o prefix" ablation: question and action only. */
  readonly prefix?: boolean;
  readonly update?: MuUpdateSettings;
  /** New tokens per step's criteria (default: the model's `maxLengths.criteria`). */
  readonly maxNewTokens?: number;
  /** μ's step prompt options (the environment description, observation cut). */
  readonly prompt?: StepPromptOptions;
  /** Each step's credit: μ's score (default, ARCO's) or the change of μ's value (ours; μ then trains as a value). */
  readonly credit?: MuCredit;
}

/** What one μ update did (a `CriticUpdate` whose metrics are the sidecar's `mu.step`'s). */
export type MuUpdate = CriticUpdate;

/**
 * μ as the trainer uses it: it rates every step of a batch of episodes on the export in service
 * (criteria, then scores), and — when it co-evolves — takes one `mu.step` on the same on-policy
 * batch (the class-balanced decomposition loss Σ_τ w_τ(Σ_t s_t − R)² + β·KL(μ_ref‖μ) on the
 * criteria μ wrote), exports the result as the next version and hot-reloads it, as ARCO's trainer
 * re-saves μ's adapter into vLLM every batch.
 */
export class MuCritic implements StepCritic {
  readonly #options: MuCriticOptions;
  /** The ONNX export's tokenizer, which every next export carries; none for a sidecar-served μ. */
  readonly #tokenizer: MuTokenizer | undefined;
  readonly #criteria: CriteriaSource;

  private constructor(options: MuCriticOptions, tokenizer: MuTokenizer | undefined) {
    this.#options = options;
    this.#tokenizer = tokenizer;
    this.#criteria = options.criteria ?? { kind: "generated" };
  }

  static async open(options: MuCriticOptions): Promise<MuCritic> {
    const criteria = options.criteria ?? { kind: "generated" };
    const k = options.model.k;
    if (criteria.kind === "fixed" && criteria.criteria.length !== k) {
      throw new RlxarInputError(
        "criteria.criteria",
        `expected ${k} fixed criteria (K of this μ), got ${criteria.criteria.length}`,
      );
    }
    if (criteria.kind === "none" && k !== 1) {
      throw new RlxarInputError(
        "criteria",
        `a scalar process reward (no criteria) needs a μ with K = 1, this one has K = ${k}`,
      );
    }
    const served = options.model instanceof SidecarMuModel;
    if (options.mu !== undefined && (options.update === undefined || (options.root === undefined && !served))) {
      throw new RlxarInputError(
        "update",
        "a co-evolving μ (with the sidecar's μ) needs `update` settings and a `root` to export to",
      );
    }
    if (served && options.mu !== undefined && options.mu !== (options.model as SidecarMuModel).mu)
      throw new RlxarInputError(
        "mu",
        "a sidecar-served μ trains the μ it serves: pass its own handle (model.mu), or none for a frozen μ",
      );
    // A value's differences need a μ trained as a value, and a value is no decomposition of R.
    const objective: MuObjective = options.credit === "value-difference" ? "value" : "decomposition";
    if (options.update?.objective !== undefined && options.update.objective !== objective)
      throw new RlxarInputError(
        "update.objective",
        `is ${JSON.stringify(options.update.objective)}, but credit ${JSON.stringify(options.credit ?? "scores")} reads a μ trained by ${JSON.stringify(objective)}`,
      );
    const tokenizer = served ? undefined : (await readModel(options.model.directory)).tokenizer;
    return new MuCritic(
      options.update === undefined ? options : { ...options, update: { ...options.update, objective } },
      tokenizer,
    );
  }

  /** The export in service. */
  get version(): number {
    return this.#options.model.version;
  }

  get coEvolves(): boolean {
    return this.#options.mu !== undefined;
  }

  /** μ's steps of an episode, as this critic shows them (without the prefix for that ablation). */
  steps(episode: Episode): Step[] {
    const steps = episodeSteps(episode);
    return this.#options.prefix === false ? steps.map((step) => ({ ...step, history: [] })) : steps;
  }

  /**
   * Freezes the sidecar's μ as μ_ref for the KL term (ARCO: the warm-up SFT adapter); a frozen μ
   * has nothing to do.
   */
  async freezeReference(): Promise<void> {
    await this.#options.mu?.setReference();
  }

  /**
   * Puts the export in service back into the sidecar (weights, optimiser and reference travel in
   * its `mu.pt`), so a resumed run trains on from where it stopped.
   */
  async resume(): Promise<void> {
    await this.#options.mu?.load(this.#options.model.directory);
  }

  /**
   * Every step of every episode, rated on one export. With `credit: "value-difference"` each
   * rating's `s` is the change of μ's value the step brought (its `scores` stay μ's d).
   */
  async rate(episodes: readonly Episode[]): Promise<StepRating[][]> {
    const flat = await this.rateSteps(episodes.flatMap((episode) => this.steps(episode)));
    let next = 0;
    const rated = episodes.map((episode) => episode.steps.map(() => flat[next++]!));
    if (this.#options.credit !== "value-difference" || episodes.length === 0) return rated;
    const start = episodes.reduce((sum, episode) => sum + episode.reward, 0) / episodes.length;
    return rated.map((ratings, e) => {
      const q = ratings.map((rating) => rating.s);
      const credits = valueDifferences([start, ...q.slice(0, -1)], episodes[e]!.reward);
      return ratings.map((rating, t) => ({ ...rating, s: credits[t]! }));
    });
  }

  /**
   * Steps of any origin (a diagnostic's contrast pairs), rated on one export as this critic rates.
   * A lone step has no predecessor, so with `credit: "value-difference"` its `s` is μ's value
   * Q(h, a) itself: two actions at one prefix differ by exactly what their credits would.
   */
  async rateSteps(steps: readonly Step[]): Promise<StepRating[]> {
    const { model } = this.#options;
    const prompt = this.#options.prompt ?? {};
    const shown = this.#options.prefix === false ? steps.map((step) => ({ ...step, history: [] })) : steps;
    if (this.#criteria.kind === "generated") {
      return model.rateSteps(shown, {
        ...prompt,
        maxNewTokens: this.#options.maxNewTokens,
      });
    }
    const list = this.#criteria.kind === "fixed" ? [...this.#criteria.criteria] : [];
    const scored = await model.scoreSteps(
      shown,
      shown.map(() => list),
      prompt,
    );
    return scored.map((score) => ({ criteria: list, ...score }));
  }

  /**
   * One co-evolution step of μ on the batch it rated: `mu.step` over each episode's steps (the
   * prompt and criteria ids each rating carries: what the score head read) with the episode's
   * reward, then the next export, then a reload of the inference model.
   */
  async update(episodes: readonly Episode[], ratings: readonly (readonly StepRating[])[]): Promise<MuUpdate> {
    const { mu, update, root, model } = this.#options;
    if (mu === undefined || update === undefined || (root === undefined && !(model instanceof SidecarMuModel))) {
      throw new RlxarInputError("update", "this μ is frozen (no sidecar μ): it cannot be updated");
    }
    if (ratings.length !== episodes.length) {
      throw new RlxarInputError("ratings", `expected one list per episode (${episodes.length}), got ${ratings.length}`);
    }
    // μ is trained on the very rows it scored: the ids travel with each rating, so nothing is
    // tokenized or fitted a second time (and cannot drift from what inference read).
    const trajectories = episodes.map((episode, e) => {
      if (ratings[e]!.length !== episode.steps.length)
        throw new RlxarInputError(
          `ratings[${e}]`,
          `expected one rating per step (${episode.steps.length}), got ${ratings[e]!.length}`,
        );
      return {
        steps: ratings[e]!.map((rating, t) => {
          if (rating.ids === undefined)
            throw new RlxarInputError(
              `ratings[${e}][${t}]`,
              "carries no token ids: μ updates only on ratings it made itself (rate or rateSteps)",
            );
          return rating.ids;
        }),
        reward: episode.reward,
      };
    });
    const trainStart = performance.now();
    const m = await mu.step(trajectories, update);
    // The run's log keeps the sidecar's own field names (its format predates the handle).
    const metrics = {
      loss: m.loss,
      score_loss: m.scoreLoss,
      kl: m.kl,
      weights: m.weights,
      sums: m.sums,
      grad_norm: m.gradNorm,
      step: m.step,
      compute_ms: m.computeMs,
    };
    const exportStart = performance.now();
    if (model instanceof SidecarMuModel) {
      // The sidecar already serves the new weights: the version is a checkpoint, for a resume.
      await model.save();
    } else {
      // The next version reads steps as this one does: the prompt settings travel with every export.
      await exportMu(mu, root!, this.#tokenizer!, model.manifest.maxLengths.criteria, model.manifest.prompt);
      await model.reload();
    }
    const done = performance.now();
    return { metrics, version: model.version, trainMs: exportStart - trainStart, exportMs: done - exportStart };
  }
}
