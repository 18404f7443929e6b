import {
  type CallOptions,
  type PolicyInitParams,
  RemotePolicy,
  SidecarClient,
  type SidecarOptions,
} from "@rubric/sidecar";
import type { RolloutGroup, SampledSequence, StepMetrics, StepOptions, TrainerBackend } from "../trainer/backend.js";

/** A prompt for the sidecar's causal LM: its token ids (non-empty: the first token is what generation conditions on). */
export type TokenPrompt = readonly number[];

export interface SidecarBackendOptions extends SidecarOptions {
  /** policy.init's params: the model (the sidecar's small transformer, or a transformers model by name), seed, dtype, device, generation defaults. */
  readonly policy: PolicyInitParams;
  /** Time limit and cancellation for every call of the backend. */
  readonly call?: CallOptions;
}

/**
 * The {@link TrainerBackend} whose policy lives in the Python sidecar (torch; a GPU when there is
 * one, several under torchrun): `@rubric/sidecar`'s `RemotePolicy` seen as a trainer backend.
 * Sequences are completions of a prompt in the model's vocabulary; their log-probs are the
 * policy's own at temperature 1, whatever temperature sampled them.
 *
 * @example
 * const backend = await SidecarBackend.start({ policy: { model: { kind: "tiny", vocab_size: 12 }, seed: 1, eos_token_id: 1 }, threads: 1 });
 * const [sequence] = await backend.sample([0], 1, { seed: 3 });
 * await backend.close();
 */
export class SidecarBackend implements TrainerBackend<TokenPrompt> {
  readonly kind = "sidecar";

  private constructor(readonly policy: RemotePolicy) {}

  /** Starts a sidecar and initialises its policy. */
  static async start(options: SidecarBackendOptions): Promise<SidecarBackend> {
    const client = await SidecarClient.start(options, options.call?.signal);
    try {
      return new SidecarBackend(await RemotePolicy.init(client, options.policy, options.call));
    } catch (error) {
      await client.close();
      throw error;
    }
  }

  get client(): SidecarClient {
    return this.policy.client;
  }

  /** The policy as built (its tokenizer's start and end tokens, its positions, its device). */
  get summary(): RemotePolicy["summary"] {
    return this.policy.summary;
  }

  /** `maxNewTokens` caps this call's completions below the policy's own `max_new_tokens`. */
  sample(
    prompt: TokenPrompt,
    n: number,
    options: { readonly seed: number; readonly temperature?: number; readonly maxNewTokens?: number },
  ): Promise<SampledSequence[]> {
    return this.policy.sample(prompt, n, options);
  }

  logprobs(prompt: TokenPrompt, sequences: readonly (readonly number[])[]): Promise<number[][]> {
    return this.policy.logprobs(prompt, sequences);
  }

  /**
   * Each text's ids under the model's own tokenizer, with no special token added: a transformers
   * model only (the small transformer reads the ids its client's tokenizer made; the sidecar
   * fails with a `SidecarError` whose fault is "unavailable"). `summary.tokenizer` has its start and end tokens.
   */
  tokenize(texts: readonly string[]): Promise<number[][]> {
    return this.policy.tokenize(texts);
  }

  /** Each row's text under the model's own tokenizer, special tokens left out (a transformers model only). */
  detokenize(ids: readonly (readonly number[])[]): Promise<string[]> {
    return this.policy.detokenize(ids);
  }

  /** One Adam step in the sidecar; its full metrics (gradient norm, tokens) also go to `onMetrics`. */
  async step(groups: readonly RolloutGroup<TokenPrompt>[], options: StepOptions): Promise<StepMetrics> {
    const metrics = await this.policy.step(groups, options);
    return { loss: metrics.loss, clippedFraction: metrics.clippedFraction, kl: metrics.kl };
  }

  async sftStep(
    examples: readonly { readonly prompt: TokenPrompt; readonly tokens: readonly number[] }[],
    options: { readonly learningRate: number },
  ): Promise<number> {
    return (await this.policy.sftStep(examples, options)).nll;
  }

  setReference(): Promise<void> {
    return this.policy.setReference();
  }

  resetOptimizer(): Promise<void> {
    return this.policy.resetOptimizer();
  }

  /** The sidecar writes `dir/policy.pt`. */
  async save(dir: string): Promise<void> {
    await this.policy.save(dir);
  }

  async load(dir: string): Promise<void> {
    await this.policy.load(dir);
  }

  close(): Promise<void> {
    return this.policy.client.close();
  }
}
