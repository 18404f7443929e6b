import { z } from "zod";
import {
  LoraSettingsSchema,
  type MethodSchemas,
  ModelTokenizerSchema,
  Ok,
  Positive,
  RngStateSchema,
  TextMethods,
  Tokens,
} from "./values.js";

/**
 * ARCO's rubric model μ on the wire (`mu.*`): init, SFT, the decomposition step, scores, logits,
 * generation, checkpoints and the versioned ONNX export.
 */

/** What `mu.step` trains the score head for: ARCO's decomposition of R, or (ours) a value of each step. */
export const MuObjectiveSchema = z.enum(["decomposition", "value"]);
export type MuObjective = z.infer<typeof MuObjectiveSchema>;

/** What a transformers μ's backbone may be loaded in (a tiny μ is float32 only). */
const MU_DTYPES = ["float32", "bfloat16", "float16"] as const;
/** What μ's score head reads (the sidecar's `mu_steps.POOLINGS`; arco-heads' `MU_POOLINGS` says what each is). */
const MU_POOLINGS = ["prompt+criteria", "criteria", "last"] as const;

export const MuSftMetricsSchema = z.object({
  loss: z.number(),
  /** Cross-entropy per criteria token. */
  ce: z.number(),
  /** Mean squared error of d against the teacher's scores (the loss holds 10 × it). */
  mse: z.number(),
  tokens: z.number().int(),
  grad_norm: z.number(),
  step: z.number().int(),
  compute_ms: z.number(),
});

/** What one language-model pretraining batch (`mu.pretrain`, ours) measured. */
export const MuPretrainMetricsSchema = z.object({
  /** Cross-entropy per predicted token (every position of a text but its first). */
  ce: z.number(),
  tokens: z.number().int(),
  grad_norm: z.number(),
  step: z.number().int(),
  compute_ms: z.number(),
});

export const MuStepMetricsSchema = z.object({
  loss: z.number(),
  /** (1/N) Σ_τ w_τ (Σ_t s_t − R_τ)². */
  score_loss: z.number(),
  /** (1/N) Σ_τ Σ_t KL(μ_ref ‖ μ) over criteria tokens (0 before mu.set_reference); the loss holds β × it. */
  kl: z.number(),
  /** The class-balancing weight of each trajectory. */
  weights: z.array(z.number()),
  /** Σ_t s_t of each trajectory, before the step. */
  sums: z.array(z.number()),
  grad_norm: z.number(),
  step: z.number().int(),
  compute_ms: z.number(),
});

export const MuSummarySchema = z.object({
  parameters: z.number().int(),
  head_parameters: z.number().int(),
  k: z.number().int(),
  vocab_size: z.number().int(),
  max_seq_len: z.number().int(),
  pooling: z.enum(MU_POOLINGS),
  steps: z.number().int(),
  reference: z.boolean(),
  /** The LoRA adapter μ trains through, its defaults filled in; null when μ trains whole. */
  lora: z
    .object({
      r: z.number().int(),
      lora_alpha: z.number(),
      lora_dropout: z.number(),
      target_modules: z.array(z.string()),
    })
    .nullable()
    .optional(),
  /** The parameters a step may change: with LoRA the adapter and the score head only. */
  trainable_parameters: z.number().int().optional(),
  /** Where μ runs (`"cpu"`, `"cuda"`, …), as torch names it. */
  device: z.string().optional(),
  /** The backbone's weights' dtype; the score head is float32 whatever it is. */
  dtype: z.enum(MU_DTYPES).optional(),
  /**
   * A transformers μ's own tokenizer (`mu.tokenize` and `mu.chat` read text with it; its end
   * token closes μ's criteria); null for the tiny μ, whose client makes its ids. Absent from a
   * sidecar older than these methods.
   */
  tokenizer: ModelTokenizerSchema.optional(),
});

/**
 * A llama GGUF file's SentencePiece vocabulary, as `mu.init` returns it for a llama μ: the client
 * tokenizes μ's text with it (`@rubric/arco-heads`' `sentencePieceFileOfGguf`). `types` are GGUF's
 * token types (1 normal, 2 unknown, 3 control, 6 byte).
 */
export const GgufVocabularySchema = z
  .object({
    tokens: z.array(z.string()).min(1),
    scores: z.array(z.number()),
    types: z.array(z.number().int()),
    bos: z.number().int().nonnegative(),
    eos: z.number().int().nonnegative(),
    unknown: z.number().int().nonnegative(),
    add_space_prefix: z.boolean(),
  })
  .refine((v) => v.scores.length === v.tokens.length && v.types.length === v.tokens.length, {
    message: "expected one score and one token type per token",
  });
export type GgufVocabulary = z.infer<typeof GgufVocabularySchema>;

/** `mu.init`'s reply: μ's summary, and for a llama μ the vocabulary of its GGUF file. */
export const MuInitResultSchema = MuSummarySchema.extend({ vocabulary: GgufVocabularySchema.optional() });

/**
 * μ's backbone: the sidecar's small causal transformer (with an attention mask and a key/value
 * cache), a small pretrained llama read from its GGUF file (F32 or F16 tensors; its shape and
 * vocabulary come from the file, it trains whole and exports like the tiny μ), or a Hugging Face
 * causal LM by name (needs transformers, and peft with `lora`, in the sidecar's Python; it
 * generates through `mu.generate` with its own key/value cache, but does not export).
 */
export const MuModelSpecSchema = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("tiny"),
    vocab_size: z.number().int().min(2),
    d_model: z.number().int().positive().optional(),
    n_heads: z.number().int().positive().optional(),
    n_layers: z.number().int().positive().optional(),
    d_ff: z.number().int().positive().optional(),
    max_seq_len: z.number().int().min(2).optional(),
  }),
  z.strictObject({ kind: z.literal("transformers"), name: z.string().min(1) }),
  z.strictObject({
    kind: z.literal("llama"),
    /** The GGUF file, as the sidecar's file system names it. */
    gguf: z.string().min(1),
    /** A cap on μ's sequence below the file's context length (rotary positions have no table). */
    max_seq_len: z.number().int().min(2).optional(),
  }),
]);

/** The names a tiny μ's LoRA may target: the q and v slices of its fused `qkv` projection. */
const TINY_LORA_TARGETS = ["q_proj", "v_proj"];

/**
 * μ's LoRA adapter (ARCO's: r 8, α 32, dropout 0.05 on q_proj and v_proj, the defaults here): the
 * base weights stay frozen and `mu.sft`/`mu.step` train the adapter (at `learning_rate`) and the
 * score head (at `head_learning_rate`).
 */
export const MuLoraSchema = LoraSettingsSchema.extend({
  r: LoraSettingsSchema.shape.r.optional(),
  lora_dropout: z.number().nonnegative().lt(1).optional(),
});

/** One step as μ reads it: the step prompt's ids and the criteria's ids (empty for the "no rubric" ablation). */
const MuStepSchema = z.strictObject({ prompt: Tokens, criteria: z.array(z.number().int().nonnegative()) });

// The files `mu.export` writes itself; a tokenizer file may not take one of these names, in any case
// (on a case-insensitive file system `Score.onnx` is `score.onnx`).
const EXPORT_FILES = ["manifest.json", "score.onnx", "prefill.onnx", "decode.onnx"];

/** The tokenizer `mu.export` writes into the version directory: its kind and its files' text by file name. */
const MuTokenizerSchema = z.strictObject({
  kind: z.string().min(1),
  files: z
    .record(
      z
        .string()
        .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "a tokenizer file needs a simple name (no directory)")
        .max(255)
        .refine((name) => !EXPORT_FILES.includes(name.toLowerCase()), {
          message: `may not be one of the export's own files (${EXPORT_FILES.join(", ")})`,
        }),
      z.string(),
    )
    .refine((files) => Object.keys(files).length > 0, { message: "expected at least one tokenizer file" }),
});

/** ARCO's rubric model μ: init, SFT, the decomposition step, scores, logits, checkpoints and the versioned ONNX export. */
export const MU_METHODS = {
  "mu.init": {
    params: z
      .strictObject({
        model: MuModelSpecSchema,
        /** Criteria per step (default 3; 1 for the "no rubric" ablation). */
        k: z.number().int().min(1).max(64).optional(),
        seed: z.number().int().nonnegative().optional(),
        /** What the score head reads: the mean over prompt + criteria (the paper's, default), over the criteria only, or the last position alone (`MU_POOLINGS`). */
        pooling: z.enum(MU_POOLINGS).optional(),
        /** Train the backbone through a LoRA adapter; absent: μ trains whole. */
        lora: MuLoraSchema.optional(),
        /**
         * Where μ runs: `"cpu"` (default), `"cuda"`, `"cuda:1"`, … or `"auto"` (the rank's GPU when
         * torch sees one, as the policy's default). A CUDA device torch lacks is refused, naming `device`.
         */
        device: z.string().min(1).optional(),
        /**
         * A transformers backbone's weights: float32 (default), bfloat16 or float16. The score head
         * stays float32 (its input cast), and so does peft's adapter. A tiny μ is float32 only.
         */
        dtype: z.enum(MU_DTYPES).optional(),
      })
      .superRefine((params, context) => {
        const { kind } = params.model;
        if (kind === "transformers") return;
        if (params.dtype !== undefined && params.dtype !== "float32")
          context.addIssue({
            code: "custom",
            path: ["dtype"],
            message: `a ${kind} μ is float32 only (dtype is for a transformers backbone's weights), got ${JSON.stringify(params.dtype)}`,
          });
        if (kind === "llama") {
          if (params.lora !== undefined)
            context.addIssue({
              code: "custom",
              path: ["lora"],
              message: "a llama μ trains whole (its attention has no LoRA targets yet); leave lora out",
            });
          return;
        }
        params.lora?.target_modules?.forEach((name, i) => {
          if (!TINY_LORA_TARGETS.includes(name))
            context.addIssue({
              code: "custom",
              path: ["lora", "target_modules", i],
              message: `a tiny μ's LoRA targets "q_proj" or "v_proj" (the q and v slices of its fused qkv), got ${JSON.stringify(name)}`,
            });
        });
      }),
    result: MuInitResultSchema,
  },
  "mu.sft": {
    params: z.strictObject({
      examples: z
        .array(
          z.strictObject({
            prompt: Tokens,
            criteria: z.array(z.number().int().nonnegative()),
            scores: z.array(z.number().min(-1).max(1)).min(1),
          }),
        )
        .min(1),
      learning_rate: Positive,
      /** The score head's learning rate; default `learning_rate`. */
      head_learning_rate: Positive.optional(),
    }),
    result: MuSftMetricsSchema,
  },
  /**
   * Ours, not ARCO's: one AdamW step of next-token CE over whole texts (token ids, ≥ 2 each, within
   * the model's positions), the score head untouched — language-model pretraining of a μ built
   * from scratch, on its environment's own text.
   */
  "mu.pretrain": {
    // A text of one token predicts nothing: the sidecar refuses it, and so does the client.
    params: z.strictObject({ texts: z.array(Tokens.min(2)).min(1), learning_rate: Positive }),
    result: MuPretrainMetricsSchema,
  },
  "mu.step": {
    params: z.strictObject({
      trajectories: z.array(z.strictObject({ steps: z.array(MuStepSchema).min(1), reward: z.number() })).min(1),
      learning_rate: Positive,
      head_learning_rate: Positive.optional(),
      /** The KL coefficient (default 0.05); the KL counts once `mu.set_reference` froze a reference. */
      beta: z.number().nonnegative().optional(),
      /**
       * ARCO's decomposition loss (default), or ours, `value`: every step's s_t regressed on its
       * trajectory's R (core's `valueLoss`), so that s_t is a value of the prefix and the action.
       */
      objective: MuObjectiveSchema.optional(),
    }),
    result: MuStepMetricsSchema,
  },
  "mu.scores": {
    params: z.strictObject({ steps: z.array(MuStepSchema).min(1) }),
    result: z.object({ d: z.array(z.array(z.number())), s: z.array(z.number()) }),
  },
  "mu.logits": {
    params: z.strictObject({ ids: z.array(Tokens).min(1) }),
    result: z.object({ logits: z.array(z.array(z.array(z.number()))) }),
  },
  /**
   * Sets the token embeddings of `ids` to `rows` (one row of d_model values per id): pretrained
   * word vectors, the inductive bias a pretrained backbone gives ARCO's μ.
   */
  /** Text through a transformers μ's own tokenizer: what `policy.tokenize`/`detokenize`/`chat` are for π. */
  "mu.tokenize": TextMethods.tokenize,
  "mu.detokenize": TextMethods.detokenize,
  "mu.chat": TextMethods.chat,
  "mu.embed": {
    params: z.strictObject({
      ids: Tokens,
      rows: z.array(z.array(z.number()).min(1)).min(1),
    }),
    result: z.object({ rows: z.number().int() }),
  },
  "mu.set_reference": { params: z.strictObject({}), result: Ok },
  "mu.fingerprint": {
    params: z.strictObject({}),
    // fingerprint is rank 0's; fingerprints (in rank order) and world_size come from sidecars
    // that run μ under torchrun, where equal fingerprints mean the replicas are in sync.
    result: z.object({
      fingerprint: z.string(),
      steps: z.number().int(),
      fingerprints: z.array(z.string()).optional(),
      world_size: z.number().int().optional(),
      /** Rank 0's backbone alone (no score head, no adapter): constant while μ trains through LoRA. */
      base: z.string().optional(),
    }),
  },
  "mu.save": {
    params: z.strictObject({ dir: z.string().min(1) }),
    result: z.object({ path: z.string(), steps: z.number().int() }),
  },
  "mu.load": {
    params: z.strictObject({
      dir: z.string().min(1),
      /** Where to put μ instead of the checkpoint's device ("cpu" for a μ trained on a GPU). */
      device: z.string().min(1).optional(),
    }),
    result: MuSummarySchema,
  },
  /**
   * New tokens after each prompt, by μ's LM head with the key/value cache (rows left-padded into one
   * batch; a transformers μ through its model's own cache, its LoRA adapter active). Greedy: the argmax, lowest id on ties. Sampled (`temperature` > 0): in float64,
   * p = softmax(logits / temperature), and with u = the row's `rng.next()` (one draw per token
   * written), the smallest id i whose running sum of p exceeds u · sum(p), else the largest id with
   * p > 0. A row stops after writing `eos_id` (left out of its ids; `finished` true), after
   * `max_new_tokens` tokens, or when prompt + written reach the model's `max_seq_len`. The loop is
   * specified in python/rubric-trainer/README.md; the onnxruntime-node generator repeats it exactly.
   */
  "mu.generate": {
    params: z
      .strictObject({
        /** Token ids, each prompt at least one and at most `max_seq_len` − 1. */
        prompts: z.array(Tokens).min(1),
        /** Default 128 (ARCO's `mu_max_new_tokens`). */
        max_new_tokens: z.number().int().min(1).optional(),
        eos_id: z.number().int().nonnegative(),
        /** Absent or 0: greedy. */
        temperature: z.number().nonnegative().optional(),
        /** One stream per prompt, required exactly when `temperature` > 0. */
        rng: z.array(RngStateSchema).optional(),
      })
      .superRefine((params, context) => {
        const sampled = (params.temperature ?? 0) > 0;
        if (sampled && params.rng?.length !== params.prompts.length)
          context.addIssue({
            code: "custom",
            path: ["rng"],
            message: `expected ${params.prompts.length} stream states (one per prompt) when temperature > 0`,
          });
        if (!sampled && params.rng !== undefined)
          context.addIssue({
            code: "custom",
            path: ["rng"],
            message: "only with temperature > 0; greedy draws nothing",
          });
      }),
    result: z.object({
      /** The tokens each row wrote, its EOS left out. */
      ids: z.array(z.array(z.number().int())),
      /** Whether the row wrote EOS (false: it ran out of `max_new_tokens` or of positions). */
      finished: z.array(z.boolean()),
    }),
  },
  "mu.export": {
    params: z.strictObject({
      dir: z.string().min(1),
      opset: z.number().int().min(7).optional(),
      /** One tokenizer for both sides: its files travel with the model, in the same atomic rename. */
      tokenizer: MuTokenizerSchema,
      /** `maxLengths.criteria`: the new tokens μ may write (EOS included); default 128, below `max_seq_len`. */
      max_criteria_tokens: z.number().int().min(1).optional(),
      /**
       * The step prompt μ was trained to read, kept in the manifest as `prompt` (arco-heads'
       * `StepPromptSettingsSchema`, which owns the fields; this is its wire copy).
       */
      prompt: z
        .strictObject({
          style: z.enum(["qa", "generic"]).optional(),
          environment: z.string().optional(),
          budgetLabel: z.string().min(1).optional(),
          maxObservationChars: z.number().int().min(1).optional(),
          layout: z.enum(["arco", "action-last"]).optional(),
        })
        .optional(),
    }),
    result: z.object({
      dir: z.string(),
      version: z.number().int(),
      /**
       * `@rubric/arco-heads`' `ModelManifestSchema` (that package owns the model contract and its
       * `readManifest` verifies it with every file's hash); gspo must not depend on it, so it is
       * passed through unchecked here.
       */
      manifest: z.record(z.string(), z.unknown()),
    }),
  },
} as const satisfies MethodSchemas;
export type MuSummary = z.infer<typeof MuSummarySchema>;
