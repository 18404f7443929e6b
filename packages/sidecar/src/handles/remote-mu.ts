import { resolve } from "node:path";
import type { ChatMessage } from "@rubric/core";
import type { CallOptions, SidecarClient } from "../client/client.js";
import type { ParamsOf, ResultOf } from "../wire/methods.js";
import type { GgufVocabulary, MuObjective, MuSummary } from "../wire/mu.js";
import { modelText } from "./model-text.js";

/** One step as μ reads it: the step prompt's ids and its criteria's ids (empty for the "no rubric" ablation). */
export interface RemoteMuStep {
  readonly prompt: readonly number[];
  readonly criteria: readonly number[];
}

/** What one `mu.sft` batch measured. */
export interface RemoteMuSftMetrics {
  readonly loss: number;
  /** Cross-entropy per criteria token. */
  readonly ce: number;
  /** Mean squared error of d against the teacher's scores (the loss holds 10 × it). */
  readonly mse: number;
  readonly tokens: number;
  readonly gradNorm: number;
  readonly step: number;
  readonly computeMs: number;
}

/** What one language-model pretraining batch (`mu.pretrain`) measured. */
export interface RemoteMuPretrainMetrics {
  /** Cross-entropy per predicted token. */
  readonly ce: number;
  readonly tokens: number;
  readonly gradNorm: number;
  readonly step: number;
  readonly computeMs: number;
}

/** What one decomposition step (`mu.step`) measured. */
export interface RemoteMuStepMetrics {
  readonly loss: number;
  /** (1/N) Σ_τ w_τ (Σ_t s_t − R_τ)². */
  readonly scoreLoss: number;
  /** (1/N) Σ_τ Σ_t KL(μ_ref ‖ μ) over criteria tokens (0 before a reference is set). */
  readonly kl: number;
  /** Each trajectory's class-balancing weight. */
  readonly weights: readonly number[];
  /** Σ_t s_t of each trajectory, before the step. */
  readonly sums: readonly number[];
  readonly gradNorm: number;
  readonly step: number;
  readonly computeMs: number;
}

/**
 * μ's LoRA adapter, camelCase (ARCO's defaults: r 8, loraAlpha 32, loraDropout 0.05, targetModules
 * ["q_proj", "v_proj"], which on a tiny μ name the q and v slices of its fused qkv). With it the
 * backbone's own weights stay frozen: `sft` and `step` train the adapter at `learningRate` and the
 * score head at `headLearningRate`, `setReference` freezes a copy of the adapter, and `export`
 * writes the merged weights.
 */
export interface RemoteMuLora {
  readonly r?: number;
  readonly loraAlpha?: number;
  readonly loraDropout?: number;
  readonly targetModules?: readonly string[];
}

/**
 * `mu.init`'s params, with `lora` in camelCase; `device` (`"cpu"` by default, `"cuda"`, `"cuda:1"`,
 * `"auto"`) and `dtype` (a transformers backbone's weights: float32, bfloat16 or float16) go as
 * they are.
 */
export type RemoteMuInitOptions = Omit<ParamsOf<"mu.init">, "lora"> & { readonly lora?: RemoteMuLora };

const wireLora = (lora: RemoteMuLora) => ({
  r: lora.r,
  lora_alpha: lora.loraAlpha,
  lora_dropout: lora.loraDropout,
  target_modules: lora.targetModules === undefined ? undefined : [...lora.targetModules],
});

const clone = (step: RemoteMuStep) => ({ prompt: [...step.prompt], criteria: [...step.criteria] });

/**
 * ARCO's rubric model μ in the sidecar as one typed handle: every `mu.*` call goes through here
 * (`@rubric/rlxar`'s μ critic and warm-up, the CLI's `mu` commands). Checkpoint directories are
 * made absolute; `summary` follows μ through loads and references.
 *
 * @example
 * const client = await SidecarClient.start({ threads: 1 });
 * const mu = await RemoteMu.init(client, { model: { kind: "tiny", vocab_size: 64 }, k: 3, seed: 1 });
 * const { s } = await mu.scores([{ prompt: [1, 2, 3], criteria: [4, 5] }]);
 * await client.close();
 */
export class RemoteMu {
  #summary: MuSummary;

  private constructor(
    readonly client: SidecarClient,
    summary: MuSummary,
    readonly call: CallOptions,
    /**
     * A llama μ's vocabulary, read from its GGUF file by `init` (μ's text is tokenized with it:
     * `@rubric/arco-heads`' `sentencePieceFileOfGguf`); absent for other μ and after `load`.
     */
    readonly vocabulary?: GgufVocabulary,
  ) {
    this.#summary = summary;
  }

  /**
   * Builds a new μ in the sidecar (`mu.init`), replacing any it held.
   *
   * @example
   * // ARCO's μ: the backbone trained through LoRA (r 8, α 32, dropout 0.05 on q and v).
   * const mu = await RemoteMu.init(client, { model: { kind: "tiny", vocab_size: 64 }, lora: { r: 8 } });
   * // ARCO's setting: a pretrained backbone in bfloat16 on the GPU, the score head in float32.
   * const big = await RemoteMu.init(client, {
   *   model: { kind: "transformers", name: "Qwen/Qwen3-4B-Instruct-2507" },
   *   lora: {},
   *   device: "cuda",
   *   dtype: "bfloat16",
   * });
   * // A small pretrained llama from its GGUF file, served on the CPU; `mu.vocabulary` tokenizes its text.
   * const small = await RemoteMu.init(client, { model: { kind: "llama", gguf: "models/stories260K.gguf" } });
   */
  static async init(client: SidecarClient, options: RemoteMuInitOptions, call: CallOptions = {}): Promise<RemoteMu> {
    const { lora, ...rest } = options;
    const params: ParamsOf<"mu.init"> = lora === undefined ? rest : { ...rest, lora: wireLora(lora) };
    const { vocabulary, ...summary } = await client.request("mu.init", params, call);
    return new RemoteMu(client, summary, call, vocabulary);
  }

  /**
   * μ read from a checkpoint directory (`dir/mu.pt`), replacing any the sidecar held; on the
   * checkpoint's own device, or on `device` (a μ trained on a GPU, read where there is none).
   */
  static async load(
    client: SidecarClient,
    dir: string,
    options: CallOptions & { readonly device?: string } = {},
  ): Promise<RemoteMu> {
    const { device, ...call } = options;
    const params = device === undefined ? { dir: resolve(dir) } : { dir: resolve(dir), device };
    return new RemoteMu(client, await client.request("mu.load", params, call), call);
  }

  get summary(): MuSummary {
    return this.#summary;
  }

  /** One warm-up batch: CE on the criteria + 10 × MSE of d against the teacher's scores. */
  async sft(
    examples: readonly (RemoteMuStep & { readonly scores: readonly number[] })[],
    options: { readonly learningRate: number; readonly headLearningRate?: number },
  ): Promise<RemoteMuSftMetrics> {
    const m = await this.client.request(
      "mu.sft",
      {
        examples: examples.map((e) => ({ ...clone(e), scores: [...e.scores] })),
        learning_rate: options.learningRate,
        head_learning_rate: options.headLearningRate,
      },
      this.call,
    );
    this.#summary = { ...this.#summary, steps: m.step };
    return {
      loss: m.loss,
      ce: m.ce,
      mse: m.mse,
      tokens: m.tokens,
      gradNorm: m.grad_norm,
      step: m.step,
      computeMs: m.compute_ms,
    };
  }

  /**
   * One batch of language-model pretraining (ours, not ARCO's): next-token CE over whole texts of
   * token ids, the score head untouched. ARCO's μ starts from a pretrained LM; this gives a μ
   * built from scratch some of that reading, on its environment's own text, before its warm-up.
   */
  async pretrain(
    texts: readonly (readonly number[])[],
    options: { readonly learningRate: number },
  ): Promise<RemoteMuPretrainMetrics> {
    const m = await this.client.request(
      "mu.pretrain",
      { texts: texts.map((text) => [...text]), learning_rate: options.learningRate },
      this.call,
    );
    this.#summary = { ...this.#summary, steps: m.step };
    return { ce: m.ce, tokens: m.tokens, gradNorm: m.grad_norm, step: m.step, computeMs: m.compute_ms };
  }

  /** One decomposition step: Σ_τ w_τ (Σ_t s_t − R_τ)² + β·KL(μ_ref‖μ) on criteria tokens. */
  async step(
    trajectories: readonly { readonly steps: readonly RemoteMuStep[]; readonly reward: number }[],
    options: {
      readonly learningRate: number;
      readonly headLearningRate?: number;
      readonly beta?: number;
      /** ARCO's `decomposition` (default) or ours, `value`. */
      readonly objective?: MuObjective;
    },
  ): Promise<RemoteMuStepMetrics> {
    const m = await this.client.request(
      "mu.step",
      {
        trajectories: trajectories.map((t) => ({ steps: t.steps.map(clone), reward: t.reward })),
        learning_rate: options.learningRate,
        head_learning_rate: options.headLearningRate,
        beta: options.beta,
        objective: options.objective,
      },
      this.call,
    );
    this.#summary = { ...this.#summary, steps: m.step };
    return {
      loss: m.loss,
      scoreLoss: m.score_loss,
      kl: m.kl,
      weights: m.weights,
      sums: m.sums,
      gradNorm: m.grad_norm,
      step: m.step,
      computeMs: m.compute_ms,
    };
  }

  /** Each step's criterion scores d ∈ [−1, 1]^K and their mean s. */
  scores(steps: readonly RemoteMuStep[]): Promise<ResultOf<"mu.scores">> {
    return this.client.request("mu.scores", { steps: steps.map(clone) }, this.call);
  }

  /** The LM head's logits for each row of ids. */
  async logits(ids: readonly (readonly number[])[]): Promise<number[][][]> {
    return (await this.client.request("mu.logits", { ids: ids.map((row) => [...row]) }, this.call)).logits;
  }

  /** New tokens after each prompt, greedy or sampled (the loop python/rubric-trainer/README.md specifies). */
  generate(params: ParamsOf<"mu.generate">): Promise<ResultOf<"mu.generate">> {
    return this.client.request("mu.generate", params, this.call);
  }

  /**
   * Sets the token embeddings of `ids` to `rows` (d_model values each), before μ trains: how a
   * small μ gets pretrained word vectors. A weight change like a training step: a sidecar that
   * crashes after it restores μ from its last checkpoint, not from `mu.init`.
   */
  async embed(ids: readonly number[], rows: readonly (readonly number[])[]): Promise<number> {
    const result = await this.client.request(
      "mu.embed",
      { ids: [...ids], rows: rows.map((row) => [...row]) },
      this.call,
    );
    return result.rows;
  }

  /**
   * Each text's ids under a transformers μ's own tokenizer (`summary.tokenizer`), no special token
   * added: the criteria text μ is scored and trained on. The tiny μ refuses, "unavailable".
   */
  tokenize(texts: readonly string[]): Promise<number[][]> {
    return modelText(this.client, "mu", this.call).tokenize(texts);
  }

  /** Each row's text under a transformers μ's own tokenizer, special tokens left out: μ's criteria as written. */
  detokenize(ids: readonly (readonly number[])[]): Promise<string[]> {
    return modelText(this.client, "mu", this.call).detokenize(ids);
  }

  /**
   * Each step prompt's ids through a transformers μ's chat template with the assistant's turn
   * opened, as ARCO's μ reads its prompt. A tokenizer without a template refuses, "unavailable".
   */
  chat(conversations: readonly (readonly ChatMessage[])[]): Promise<number[][]> {
    return modelText(this.client, "mu", this.call).chat(conversations);
  }

  /** Freezes the current μ as the KL reference of later decomposition steps. */
  async setReference(): Promise<void> {
    await this.client.request("mu.set_reference", {}, this.call);
    this.#summary = { ...this.#summary, reference: true };
  }

  /** SHA-256 of μ's parameters (`fingerprint`) and of its backbone alone (`base`: no score head, no adapter). */
  fingerprint(): Promise<ResultOf<"mu.fingerprint">> {
    return this.client.request("mu.fingerprint", {}, this.call);
  }

  /** Writes `dir/mu.pt`; the client restores μ from it after a crash. */
  save(dir: string): Promise<ResultOf<"mu.save">> {
    return this.client.request("mu.save", { dir: resolve(dir) }, this.call);
  }

  /** Reads `dir/mu.pt` back into this μ. */
  async load(dir: string): Promise<MuSummary> {
    this.#summary = await this.client.request("mu.load", { dir: resolve(dir) }, this.call);
    return this.#summary;
  }

  /**
   * Writes the next version under `root` (ONNX graphs, manifest, tokenizer, checkpoint) in one
   * atomic rename. `root` goes as given: the result's `dir` names the version the way the caller
   * named its root (the CLI prints it).
   */
  export(root: string, options: Omit<ParamsOf<"mu.export">, "dir">): Promise<ResultOf<"mu.export">> {
    return this.client.request("mu.export", { ...options, dir: root }, this.call);
  }
}
