import type { Trainable } from "@rubric/core";
import type { AgentView } from "../environment/environment.js";

/** How a policy chooses: `temperature` 0 is greedy; row i of a batch samples from `createRng(seeds[i])`. */
export interface ActOptions {
  readonly temperature: number;
  /** One seed per view: the rollout derives it from its own seed, the episode and the step, so a batch's order or size changes no draw. */
  readonly seeds: readonly string[];
}

/** What a policy chose for one view. */
export interface PolicyDecision {
  /** The raw output the environment parses. */
  readonly text: string;
  /** log π(text | view) under the weights that chose it, when the policy can say. */
  readonly logProb?: number;
  /**
   * What the policy needs to learn from this decision later (token ids, a candidate index):
   * opaque to the trainer, JSON-serialisable so a batch can be logged and resumed.
   */
  readonly trace?: unknown;
}

/** Anything that acts: an LLM over a `LanguageModel`, an in-process trainable policy, a served model. */
export interface Policy {
  readonly name: string;
  /** One decision per view, in order. */
  act(views: readonly AgentView[], options: ActOptions): Promise<PolicyDecision[]>;
  /**
   * Releases what the policy holds outside this process (a served policy's adapter in the
   * server's memory), once it is done with; optional, and a policy without it holds nothing.
   */
  close?(): Promise<void>;
}

/** One decision with the advantage the trainer gave it. */
export interface PolicySample {
  readonly view: AgentView;
  readonly decision: PolicyDecision;
  readonly advantage: number;
}

export interface PolicyUpdateOptions {
  readonly learningRate: number;
  /** Weight of the per-token KL(π_ref ‖ π) to the reference (ARCO: 0 sparse, 0.05 dense). */
  readonly klCoef: number;
  /** Gradient-norm clip (ARCO: 1). */
  readonly maxGradNorm?: number;
}

export interface PolicyUpdateMetrics {
  /** −(1/N) Σ A·log π(decision | view), before the step. */
  readonly policyLoss: number;
  /** The KL term's value before the step (0 when `klCoef` is 0 and it was not computed). */
  readonly kl: number;
  readonly gradNorm: number;
  readonly samples: number;
}

/** A supervised example: the view and the output to imitate. */
export interface PolicySftExample {
  readonly view: AgentView;
  readonly text: string;
}

/**
 * A policy the co-evolution trainer can train: REINFORCE steps on (view, decision, advantage)
 * samples with a KL leash to a frozen reference, and SFT for the warm-up. `setReference` (ARCO:
 * the SFT policy), `save` and `load` (weights, optimiser and reference) are core's `Trainable`,
 * the contract GSPO's backends share, so both trainers' run directories hold what `save` writes.
 */
export interface TrainablePolicy extends Policy, Trainable {
  /** One optimiser step on −(1/N) Σ A·log π + klCoef·KL(π_ref ‖ π). */
  update(samples: readonly PolicySample[], options: PolicyUpdateOptions): Promise<PolicyUpdateMetrics>;
  /**
   * Whether `sft` can learn an example, for a policy that cannot express every text (the
   * extractive policy chooses among candidates). Absent: it can learn any. Filter a data set with
   * it before batching, so that no batch is left with nothing to learn.
   */
  learnable?(example: PolicySftExample): boolean;
  /** One optimiser step of cross-entropy on the examples; returns the mean loss before it. */
  sft(
    examples: readonly PolicySftExample[],
    options: { readonly learningRate: number },
  ): Promise<{ readonly loss: number }>;
}
