import type { Trainable } from "@rubric/core";
import type { Objective } from "./objective.js";

/**
 * What a trainer needs from a policy, whatever holds its parameters: the in-process rubric policy
 * (TypeScript, CPU, seconds) or the Python sidecar (torch, an LLM on a GPU). Sequences are token ids
 * in the backend's own vocabulary; `Prompt` is whatever the backend conditions on (a gym task and its
 * dialogue for the in-process policy, prompt token ids for the sidecar's causal LM).
 *
 * `setReference`, `resetOptimizer`, `save` and `load` are the contract every trainable policy shares (core's
 * `Trainable`; ARCO's `TrainablePolicy` has the same), so both trainers' run directories hold
 * what `save` writes.
 *
 * Rewards, rubrics and rollouts never enter a backend: the trainer computes advantages with
 * @rubric/core and hands the backend sequences, old log-probs and advantages.
 */
export interface TrainerBackend<Prompt> extends Trainable {
  /** A short name for logs: "in-process", "sidecar". */
  readonly kind: string;
  /** `n` sequences for one prompt, each with its exact per-token log-probabilities under the current policy. */
  sample(
    prompt: Prompt,
    n: number,
    options: { readonly seed: number; readonly temperature?: number },
  ): Promise<SampledSequence[]>;
  /** Per-token log-probabilities of given sequences under the current policy. */
  logprobs(prompt: Prompt, sequences: readonly (readonly number[])[]): Promise<number[][]>;
  /** One gradient step of the clipped policy-gradient objective on rollout groups. */
  step(groups: readonly RolloutGroup<Prompt>[], options: StepOptions): Promise<StepMetrics>;
  /** One supervised step (per-token cross-entropy) on reference sequences; returns the batch's mean NLL per token. */
  sftStep(
    examples: readonly { readonly prompt: Prompt; readonly tokens: readonly number[] }[],
    options: { readonly learningRate: number },
  ): Promise<number>;
  /** Releases what the backend holds (processes, files). Safe to call twice. */
  close(): Promise<void>;
}

export interface SampledSequence {
  readonly tokens: readonly number[];
  readonly logprobs: readonly number[];
}

/** K sequences for one prompt from π_old, with their old log-probs and (group-normalised) advantages. */
export interface RolloutGroup<Prompt> {
  readonly prompt: Prompt;
  readonly sequences: readonly {
    readonly tokens: readonly number[];
    readonly logpOld: readonly number[];
    readonly advantage: number;
  }[];
}

export interface StepOptions {
  readonly objective: Objective;
  readonly epsLow: number;
  readonly epsHigh: number;
  readonly learningRate: number;
  /** β of the k3 KL penalty to the reference policy; 0 turns it off. */
  readonly klCoef: number;
}

export interface StepMetrics {
  /** The clipped objective's loss (to minimise), plus β·KL when the penalty is on. */
  readonly loss: number;
  readonly clippedFraction: number;
  /** Mean per-token k3 estimate of KL(π ‖ π_ref); 0 without a reference. */
  readonly kl: number;
}
