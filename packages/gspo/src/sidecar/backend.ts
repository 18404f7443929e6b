import { resolve } from "node:path";
import type { RolloutGroup, SampledSequence, StepMetrics, StepOptions, TrainerBackend } from "../trainer/backend.js";
import { SidecarClient, type CallOptions, type SidecarOptions } from "./client.js";
import type { PolicyInitParams, ResultOf } from "./protocol.js";

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
 * one, several under torchrun). Sequences are completions of a prompt in the model's vocabulary;
 * their log-probs are the policy's own at temperature 1, whatever temperature sampled them.
 *
 * @example
 * const backend = await SidecarBackend.start({ policy: { model: { kind: "tiny", vocab_size: 12 }, seed: 1, eos_token_id: 1 }, threads: 1 });
 * const [sequence] = await backend.sample([0], 1, { seed: 3 });
 * await backend.close();
 */
export class SidecarBackend implements TrainerBackend<TokenPrompt> {
  readonly kind = "sidecar";

  private constructor(
    readonly client: SidecarClient,
    readonly summary: ResultOf<"policy.init">,
    readonly call: CallOptions,
  ) {}

  /** Starts a sidecar and initialises its policy. */
  static async start(options: SidecarBackendOptions): Promise<SidecarBackend> {
    const client = await SidecarClient.start(options, options.call?.signal);
    try {
      const summary = await client.request("policy.init", options.policy, options.call);
      return new SidecarBackend(client, summary, options.call ?? {});
    } catch (error) {
      await client.close();
      throw error;
    }
  }

  /** `maxNewTokens` caps this call's completions below the policy's own `max_new_tokens`. */
  async sample(
    prompt: TokenPrompt,
    n: number,
    options: { readonly seed: number; readonly temperature?: number; readonly maxNewTokens?: number },
  ): Promise<SampledSequence[]> {
    const { sequences } = await this.client.request(
      "policy.sample",
      {
        prompt: [...prompt],
        n,
        seed: options.seed,
        temperature: options.temperature,
        ...(options.maxNewTokens === undefined ? {} : { max_new_tokens: options.maxNewTokens }),
      },
      this.call,
    );
    return sequences;
  }

  async logprobs(prompt: TokenPrompt, sequences: readonly (readonly number[])[]): Promise<number[][]> {
    const { logprobs } = await this.client.request(
      "policy.logprobs",
      { prompt: [...prompt], sequences: sequences.map((s) => [...s]) },
      this.call,
    );
    return logprobs;
  }

  /**
   * Each text's ids under the model's own tokenizer, with no special token added: a transformers
   * model only (the small transformer reads the ids its client's tokenizer made; the sidecar
   * fails with a `SidecarError` whose fault is "unavailable"). `summary.tokenizer` has its start and end tokens.
   */
  async tokenize(texts: readonly string[]): Promise<number[][]> {
    if (texts.length === 0) return [];
    return (await this.client.request("policy.tokenize", { texts: [...texts] }, this.call)).ids;
  }

  /** Each row's text under the model's own tokenizer, special tokens left out (a transformers model only). */
  async detokenize(ids: readonly (readonly number[])[]): Promise<string[]> {
    if (ids.length === 0) return [];
    return (await this.client.request("policy.detokenize", { ids: ids.map((row) => [...row]) }, this.call)).texts;
  }

  /** One Adam step in the sidecar; its full metrics (gradient norm, tokens) also go to `onMetrics`. */
  async step(groups: readonly RolloutGroup<TokenPrompt>[], options: StepOptions): Promise<StepMetrics> {
    const metrics = await this.client.request(
      "policy.step",
      {
        objective: options.objective,
        eps_low: options.epsLow,
        eps_high: options.epsHigh,
        learning_rate: options.learningRate,
        kl_coef: options.klCoef,
        groups: groups.map((group) => ({
          prompt: [...group.prompt],
          sequences: group.sequences.map((s) => ({
            tokens: [...s.tokens],
            logp_old: [...s.logpOld],
            advantage: s.advantage,
          })),
        })),
      },
      this.call,
    );
    return { loss: metrics.loss, clippedFraction: metrics.clipped_fraction, kl: metrics.kl };
  }

  async sftStep(
    examples: readonly { readonly prompt: TokenPrompt; readonly tokens: readonly number[] }[],
    options: { readonly learningRate: number },
  ): Promise<number> {
    const { nll } = await this.client.request(
      "policy.sft_step",
      {
        examples: examples.map((e) => ({ prompt: [...e.prompt], tokens: [...e.tokens] })),
        learning_rate: options.learningRate,
      },
      this.call,
    );
    return nll;
  }

  async setReference(): Promise<void> {
    await this.client.request("policy.set_reference", {}, this.call);
  }

  async resetOptimizer(): Promise<void> {
    await this.client.request("policy.reset_optimizer", {}, this.call);
  }

  /** The sidecar writes `dir/policy.pt`; the path is made absolute, since the sidecar may run elsewhere than this process's cwd. */
  async save(dir: string): Promise<void> {
    await this.client.request("checkpoint.save", { dir: resolve(dir) }, this.call);
  }

  async load(dir: string): Promise<void> {
    await this.client.request("checkpoint.load", { dir: resolve(dir) }, this.call);
  }

  /**
   * Exports the current policy as ONNX (`input_ids` int64 [batch, sequence] → `logits`), opset 17
   * by default; with `probe` token ids, the result carries torch's logits for them as `probe_logits`.
   */
  async exportOnnx(
    path: string,
    options: { readonly opset?: number; readonly probe?: readonly (readonly number[])[] } = {},
  ): Promise<ResultOf<"export.onnx">> {
    return this.client.request(
      "export.onnx",
      {
        path: resolve(path),
        opset: options.opset,
        ...(options.probe === undefined ? {} : { probe: options.probe.map((row) => [...row]) }),
      },
      this.call,
    );
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
