import type { Rng } from "@rubric/core";

/**
 * What the in-process backend needs of a policy: parameter blocks, exact per-token log-probs and
 * their gradients, sampling, a copy, and a signature naming its shape and vocabulary (a checkpoint
 * loads only into a policy with the same signature). `RubricPolicy` is one; any small token
 * policy written against this interface trains with `trainGspo` / `trainSftStage` the same way.
 */
export interface TokenPolicy<Prompt> {
  readonly parameters: readonly Float64Array[];
  tokenLogProbs(prompt: Prompt, tokens: readonly number[]): number[];
  sample(prompt: Prompt, rng: Rng, temperature?: number): number[];
  /**
   * Optional: walk a sequence once for its log-probs and keep what adding its gradient needs
   * (`accumulateTrace`), so a training step walks each sequence once instead of twice.
   */
  trace?(prompt: Prompt, tokens: readonly number[]): { readonly logprobs: readonly number[] };
  accumulateTrace?(
    trace: { readonly logprobs: readonly number[] },
    coefs: readonly number[],
    grads: readonly Float64Array[],
  ): void;
  /** Optional: a sample with its log-probabilities (at temperature 1) from one pass, saving a second. */
  sampleWithLogProbs?(prompt: Prompt, rng: Rng, temperature?: number): { tokens: number[]; logprobs: number[] };
  /** Adds Σ_t coefs[t] · ∂ log π(token_t)/∂θ into `grads` (one buffer per parameter block). */
  accumulateGradient(
    prompt: Prompt,
    tokens: readonly number[],
    coefs: readonly number[],
    grads: readonly Float64Array[],
  ): void;
  clone(): this;
  signature(): string;
}
