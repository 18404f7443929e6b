import type { Step } from "@rubric/arco-heads";
import type { Episode } from "../rollout/rollout.js";

/** A critic's verdict on one step. */
export interface StepRating {
  readonly criteria: readonly string[];
  /** d_t ∈ [−1, 1]^K. */
  readonly scores: readonly number[];
  /** s_t = mean_k d_t,k. */
  readonly s: number;
  /** Set when μ's text was not exactly K criteria (see arco-heads' `GeneratedCriteria`). */
  readonly adjusted?: "padded" | "truncated" | "unparsed";
  /** The token ids a learned critic scored (μ: fitted prompt and criteria), which its update trains on. */
  readonly ids?: { readonly prompt: readonly number[]; readonly criteria: readonly number[] };
}

/** What one critic update did. */
export interface CriticUpdate {
  /** The trainer's own metrics (μ: the sidecar's `mu.step` loss, score loss, KL, …). */
  readonly metrics: Readonly<Record<string, unknown>>;
  /** The version now in service. */
  readonly version: number;
  readonly trainMs: number;
  readonly exportMs: number;
}

/**
 * What the co-evolution trainer asks of whatever rates a policy's steps: μ (`MuCritic`, ARCO's
 * rubric model), or a stand-in such as the gold teacher's hindsight scores (`teacherCritic`, a
 * control that shows what perfectly informed step scores would do) or a user's own judge.
 * A critic that co-evolves is trained by `update` on every batch it rated; a frozen one is not.
 */
export interface StepCritic {
  /** Whether `update` trains it on each batch. */
  readonly coEvolves: boolean;
  /** The version in service (μ's export number; a critic without versions says 0). */
  readonly version: number;
  /** Every step of every episode: one rating per step, K scores and their mean s_t. */
  rate(episodes: readonly Episode[]): Promise<StepRating[][]>;
  /**
   * Steps of any origin (a diagnostic's contrast pairs), rated as `rate` would rate them; absent
   * for a critic that needs an episode's outcome to rate its steps.
   */
  rateSteps?(steps: readonly Step[]): Promise<StepRating[]>;
  /** Freezes the critic's KL reference before training starts (μ: its warm-up weights). */
  freezeReference(): Promise<void>;
  /** Puts the version in service back into training after an interrupted run. */
  resume(): Promise<void>;
  /** One training step on the batch it rated (only called when `coEvolves`). */
  update(episodes: readonly Episode[], ratings: readonly (readonly StepRating[])[]): Promise<CriticUpdate>;
}
