import { resolve } from "node:path";
import type { ChatMessage } from "@rubric/core";
import type { CallOptions, SidecarClient } from "../client/client.js";
import type { ResultOf } from "../wire/methods.js";
import { modelText } from "./model-text.js";
import type { PolicyInitParams, PolicySummary } from "../wire/policy.js";

/** One sequence a policy step trains on: its tokens, their log-probs when sampled (π_old), its advantage. */
export interface RemoteSequence {
  readonly tokens: readonly number[];
  readonly logpOld: readonly number[];
  readonly advantage: number;
}

/** What `policy.step` measured (its full metrics also stream to the client's `onMetrics`). */
export interface RemoteStepMetrics {
  readonly loss: number;
  readonly clippedFraction: number;
  readonly kl: number;
  readonly tokens: number;
  readonly gradNorm: number;
  readonly step: number;
  readonly computeMs: number;
}

export interface RemoteStepOptions {
  readonly objective?: "gspo" | "grpo" | "dr-grpo";
  readonly epsLow?: number;
  readonly epsHigh?: number;
  readonly learningRate: number;
  /** The per-token k3 KL to the reference; > 0 requires {@link RemotePolicy.setReference} first. */
  readonly klCoef?: number;
  /** The objective's constant length normaliser (Dr.GRPO). */
  readonly maxTokens?: number;
  readonly maxGradNorm?: number;
}

/**
 * The sidecar's policy as one typed handle: every `policy.*`, `checkpoint.*` and `export.onnx`
 * call goes through here, so a trainer (`@rubric/gspo`'s `SidecarBackend`, `@rubric/rlxar`'s
 * sidecar and served policies) adapts this handle to its own interface instead of speaking the
 * wire itself. Directories are made absolute (the sidecar may run elsewhere than this process's
 * cwd); `summary` follows the policy through loads and references.
 *
 * @example
 * const client = await SidecarClient.start({ threads: 1 });
 * const policy = await RemotePolicy.init(client, { model: { kind: "tiny", vocab_size: 12 }, seed: 1, eos_token_id: 1 });
 * const [sequence] = await policy.sample([0], 1, { seed: 3 });
 * await client.close();
 */
export class RemotePolicy {
  #summary: PolicySummary;

  private constructor(
    readonly client: SidecarClient,
    summary: PolicySummary,
    readonly call: CallOptions,
  ) {
    this.#summary = summary;
  }

  /** Builds the sidecar's policy (`policy.init`), replacing any it held. */
  static async init(client: SidecarClient, params: PolicyInitParams, call: CallOptions = {}): Promise<RemotePolicy> {
    return new RemotePolicy(client, await client.request("policy.init", params, call), call);
  }

  /** The policy's size, device, tokenizer, steps taken and whether a KL reference is set. */
  get summary(): PolicySummary {
    return this.#summary;
  }

  /** Completions of `prompt`; `maxNewTokens` caps this call below the policy's own limit. */
  async sample(
    prompt: readonly number[],
    n: number,
    options: {
      readonly seed: number;
      readonly temperature?: number;
      readonly maxNewTokens?: number;
      readonly eosTokenId?: number;
    },
  ): Promise<ResultOf<"policy.sample">["sequences"]> {
    const { sequences } = await this.client.request(
      "policy.sample",
      {
        prompt: [...prompt],
        n,
        seed: options.seed,
        temperature: options.temperature,
        max_new_tokens: options.maxNewTokens,
        eos_token_id: options.eosTokenId,
      },
      this.call,
    );
    return sequences;
  }

  /** Each sequence's per-token log-probs after `prompt`, at temperature 1. */
  async logprobs(prompt: readonly number[], sequences: readonly (readonly number[])[]): Promise<number[][]> {
    const { logprobs } = await this.client.request(
      "policy.logprobs",
      { prompt: [...prompt], sequences: sequences.map((s) => [...s]) },
      this.call,
    );
    return logprobs;
  }

  /** Each text's ids under a transformers model's own tokenizer, no special token added. */
  tokenize(texts: readonly string[]): Promise<number[][]> {
    return modelText(this.client, "policy", this.call).tokenize(texts);
  }

  /** Each row's text under a transformers model's own tokenizer, special tokens left out. */
  detokenize(ids: readonly (readonly number[])[]): Promise<string[]> {
    return modelText(this.client, "policy", this.call).detokenize(ids);
  }

  /**
   * Each conversation's ids through a transformers model's chat template, with the assistant's
   * turn opened: the prompt a chat model answers. The template places its own special tokens.
   * A model whose tokenizer has no template (`summary.tokenizer.chat_template`) refuses, "unavailable".
   */
  chat(conversations: readonly (readonly ChatMessage[])[]): Promise<number[][]> {
    return modelText(this.client, "policy", this.call).chat(conversations);
  }

  /** One optimiser step on groups of sequences that share a prompt. */
  async step(
    groups: readonly { readonly prompt: readonly number[]; readonly sequences: readonly RemoteSequence[] }[],
    options: RemoteStepOptions,
  ): Promise<RemoteStepMetrics> {
    const m = await this.client.request(
      "policy.step",
      {
        objective: options.objective,
        eps_low: options.epsLow,
        eps_high: options.epsHigh,
        learning_rate: options.learningRate,
        kl_coef: options.klCoef,
        max_tokens: options.maxTokens,
        max_grad_norm: options.maxGradNorm,
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
    this.#summary = { ...this.#summary, steps: m.step };
    return {
      loss: m.loss,
      clippedFraction: m.clipped_fraction,
      kl: m.kl,
      tokens: m.tokens,
      gradNorm: m.grad_norm,
      step: m.step,
      computeMs: m.compute_ms,
    };
  }

  /** One SFT step (next-token cross-entropy on `tokens` after `prompt`); returns the mean NLL per token. */
  async sftStep(
    examples: readonly { readonly prompt: readonly number[]; readonly tokens: readonly number[] }[],
    options: { readonly learningRate: number; readonly maxGradNorm?: number },
  ): Promise<{ readonly nll: number; readonly tokens: number; readonly gradNorm: number; readonly step: number }> {
    const m = await this.client.request(
      "policy.sft_step",
      {
        examples: examples.map((e) => ({ prompt: [...e.prompt], tokens: [...e.tokens] })),
        learning_rate: options.learningRate,
        max_grad_norm: options.maxGradNorm,
      },
      this.call,
    );
    this.#summary = { ...this.#summary, steps: m.step };
    return { nll: m.nll, tokens: m.tokens, gradNorm: m.grad_norm, step: m.step };
  }

  /** Freezes the current weights as the KL reference. */
  async setReference(): Promise<void> {
    await this.client.request("policy.set_reference", {}, this.call);
    this.#summary = { ...this.#summary, reference: true };
  }

  /** Forgets the optimiser's moments (a new stage starts from fresh Adam state). */
  async resetOptimizer(): Promise<void> {
    await this.client.request("policy.reset_optimizer", {}, this.call);
  }

  /** The parameters' fingerprint on every rank (equal fingerprints: replicas in sync). */
  fingerprint(): Promise<ResultOf<"policy.fingerprint">> {
    return this.client.request("policy.fingerprint", {}, this.call);
  }

  /** Writes `dir/policy.pt` (weights, optimiser, reference); the client restores it after a crash. */
  async save(dir: string): Promise<ResultOf<"checkpoint.save">> {
    return this.client.request("checkpoint.save", { dir: resolve(dir) }, this.call);
  }

  /** Reads `dir/policy.pt` back. */
  async load(dir: string): Promise<PolicySummary> {
    this.#summary = await this.client.request("checkpoint.load", { dir: resolve(dir) }, this.call);
    return this.#summary;
  }

  /**
   * Exports the policy as ONNX (`input_ids` int64 [batch, sequence] → `logits`), opset 17 by
   * default; with `probe` token ids, the result carries torch's logits for them as `probe_logits`.
   */
  exportOnnx(
    path: string,
    options: { readonly opset?: number; readonly probe?: readonly (readonly number[])[] } = {},
  ): Promise<ResultOf<"export.onnx">> {
    return this.client.request(
      "export.onnx",
      { path: resolve(path), opset: options.opset, probe: options.probe?.map((row) => [...row]) },
      this.call,
    );
  }
}
