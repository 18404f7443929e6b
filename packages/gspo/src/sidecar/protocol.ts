import { z } from "zod";

/**
 * The sidecar's wire (python/rubric-trainer/src/rubric_trainer/protocol.py holds the same schemas
 * in Python): newline-delimited JSON over the child's stdio, snake_case field names.
 *
 * Client → sidecar: `{id, method, params}`, or the notification `{method: "$/cancel", params: {id}}`.
 * Sidecar → client: `{id, result}` or `{id, error: {code, message, data}}` for every request, and
 * notifications without an id: `ready` once at start, `metrics` after each training step.
 */

export const SIDECAR_ERROR_CODES = [
  "parse_error",
  "invalid_request",
  "unknown_method",
  "invalid_params",
  "no_policy",
  "non_finite",
  "out_of_memory",
  "unavailable",
  "cancelled",
  "checkpoint",
  "internal",
] as const;
export type SidecarErrorCode = (typeof SIDECAR_ERROR_CODES)[number];

const RequestIdSchema = z.union([z.number(), z.string()]);

export const ReplySchema = z.union([
  z.strictObject({ id: RequestIdSchema, result: z.unknown() }),
  z.strictObject({
    id: RequestIdSchema.nullable(),
    error: z.strictObject({
      code: z.enum(SIDECAR_ERROR_CODES),
      message: z.string(),
      data: z.record(z.string(), z.unknown()),
    }),
  }),
]);

const PolicySummarySchema = z.object({
  parameters: z.number().int(),
  vocab_size: z.number().int(),
  max_seq_len: z.number().int(),
  device: z.string(),
  dtype: z.string(),
  steps: z.number().int(),
  reference: z.boolean(),
  /** A transformers model's tokenizer (`policy.tokenize` reads text with it); null for the small transformer, whose ids its client makes. */
  tokenizer: z
    .object({
      size: z.number().int().positive(),
      bos_token_id: z.number().int().nonnegative().nullable(),
      eos_token_id: z.number().int().nonnegative().nullable(),
    })
    .nullable(),
});

export const ReadySchema = z.object({
  pid: z.number().int(),
  version: z.string(),
  torch: z.string(),
  world_size: z.number().int().positive(),
});

const StepMetricsSchema = z.object({
  loss: z.number(),
  clipped_fraction: z.number(),
  kl: z.number(),
  tokens: z.number().int(),
  grad_norm: z.number(),
  step: z.number().int(),
  compute_ms: z.number(),
});

const SftMetricsSchema = z.object({
  nll: z.number(),
  tokens: z.number().int(),
  grad_norm: z.number(),
  step: z.number().int(),
  compute_ms: z.number(),
});

const MuSftMetricsSchema = z.object({
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

const MuStepMetricsSchema = z.object({
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

const MuSummarySchema = z.object({
  parameters: z.number().int(),
  head_parameters: z.number().int(),
  k: z.number().int(),
  vocab_size: z.number().int(),
  max_seq_len: z.number().int(),
  pooling: z.enum(["prompt+criteria", "criteria"]),
  steps: z.number().int(),
  reference: z.boolean(),
});

export const NotificationSchema = z.discriminatedUnion("method", [
  z.strictObject({ method: z.literal("ready"), params: ReadySchema }),
  z.strictObject({
    method: z.literal("metrics"),
    params: z.discriminatedUnion("method", [
      StepMetricsSchema.extend({ method: z.literal("policy.step") }),
      SftMetricsSchema.extend({ method: z.literal("policy.sft_step") }),
      MuSftMetricsSchema.extend({ method: z.literal("mu.sft") }),
      MuStepMetricsSchema.extend({ method: z.literal("mu.step") }),
    ]),
  }),
]);
export type SidecarNotification = z.infer<typeof NotificationSchema>;
/** A `metrics` notification's params: what one training step measured, streamed as it happens. */
export type TrainingMetrics = Extract<SidecarNotification, { method: "metrics" }>["params"];

const Tokens = z.array(z.number().int().nonnegative()).min(1);
const Row = z.array(z.number()).min(1);
const Matrix = z.array(Row).min(1);
const Positive = z.number().positive();
const UInt32 = z.number().int().min(0).max(0xffffffff);
const ObjectiveSchema = z.enum(["gspo", "grpo", "dr-grpo"]);

/** A model the sidecar can build: its small causal transformer, or a Hugging Face model by name (needs transformers there). */
export const ModelSpecSchema = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("tiny"),
    vocab_size: z.number().int().min(2),
    d_model: z.number().int().positive().optional(),
    n_heads: z.number().int().positive().optional(),
    n_layers: z.number().int().nonnegative().optional(),
    d_ff: z.number().int().positive().optional(),
    max_seq_len: z.number().int().min(2).optional(),
  }),
  z.strictObject({
    kind: z.literal("transformers"),
    name: z.string().min(1),
    lora: z
      .strictObject({
        r: z.number().int().positive(),
        lora_alpha: Positive.optional(),
        lora_dropout: z.number().nonnegative().optional(),
        target_modules: z.array(z.string().min(1)).min(1).optional(),
      })
      .optional(),
  }),
]);
export type ModelSpec = z.infer<typeof ModelSpecSchema>;

export const PolicyInitParamsSchema = z.strictObject({
  model: ModelSpecSchema,
  seed: z.number().int().nonnegative().optional(),
  dtype: z.enum(["float32", "float64", "bfloat16", "float16"]).optional(),
  /** "auto" (default): the rank's GPU when CUDA is there, else the CPU. */
  device: z.string().min(1).optional(),
  learning_rate: Positive.optional(),
  max_new_tokens: z.number().int().positive().optional(),
  eos_token_id: z.number().int().nonnegative().optional(),
});
export type PolicyInitParams = z.infer<typeof PolicyInitParamsSchema>;

/** μ's backbone: the sidecar's small causal transformer (with an attention mask and a key/value cache). */
export const MuModelSpecSchema = z.strictObject({
  kind: z.literal("tiny"),
  vocab_size: z.number().int().min(2),
  d_model: z.number().int().positive().optional(),
  n_heads: z.number().int().positive().optional(),
  n_layers: z.number().int().positive().optional(),
  d_ff: z.number().int().positive().optional(),
  max_seq_len: z.number().int().min(2).optional(),
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

/** @rubric/core's `RngState`: a stream `mu.generate` continues (without advancing the caller's copy). */
const RngStateSchema = z.strictObject({
  algorithm: z.literal("xoshiro128**"),
  words: z
    .tuple([UInt32, UInt32, UInt32, UInt32])
    .readonly()
    .refine((words) => words.some((word) => word !== 0), { message: "must not be all zero" }),
  key: z.string().regex(/^[0-9a-f]{16}$/, "expected 16 lower-case hex digits"),
});

const Ok = z.object({ ok: z.literal(true) });

/** ARCO's rubric model μ: init, SFT, the decomposition step, scores, logits, checkpoints and the versioned ONNX export. */
const MU_METHODS = {
  "mu.init": {
    params: z.strictObject({
      model: MuModelSpecSchema,
      /** Criteria per step (default 3; 1 for the "no rubric" ablation). */
      k: z.number().int().min(1).max(64).optional(),
      seed: z.number().int().nonnegative().optional(),
      /** Which tokens the score head pools: all of prompt + criteria (the paper's, default) or the criteria only. */
      pooling: z.enum(["prompt+criteria", "criteria"]).optional(),
    }),
    result: MuSummarySchema,
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
  "mu.step": {
    params: z.strictObject({
      trajectories: z.array(z.strictObject({ steps: z.array(MuStepSchema).min(1), reward: z.number() })).min(1),
      learning_rate: Positive,
      head_learning_rate: Positive.optional(),
      /** The KL coefficient (default 0.05); the KL counts once `mu.set_reference` froze a reference. */
      beta: z.number().nonnegative().optional(),
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
    }),
  },
  "mu.save": {
    params: z.strictObject({ dir: z.string().min(1) }),
    result: z.object({ path: z.string(), steps: z.number().int() }),
  },
  "mu.load": { params: z.strictObject({ dir: z.string().min(1) }), result: MuSummarySchema },
  /**
   * New tokens after each prompt, by μ's LM head with the key/value cache (rows left-padded into one
   * batch). Greedy: the argmax, lowest id on ties. Sampled (`temperature` > 0): in float64,
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
        max_new_tokens: z.number().int().min(1),
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
} as const satisfies Record<string, { params: z.ZodType; result: z.ZodType }>;

/** Every method: the schema of its params (checked before sending) and of its result (checked on arrival). */
export const SIDECAR_METHODS = {
  health: {
    params: z.strictObject({}),
    result: z.object({
      ok: z.literal(true),
      version: z.string(),
      pid: z.number().int(),
      torch: z.string(),
      cuda: z.boolean(),
      world_size: z.number().int(),
      transformers: z.boolean(),
      policy: PolicySummarySchema.nullable(),
      /** ARCO's rubric model μ, when the sidecar holds one. */
      mu: MuSummarySchema.nullable(),
    }),
  },
  shutdown: { params: z.strictObject({}), result: z.object({ ok: z.literal(true) }) },
  "gspo.loss": {
    params: z.strictObject({
      objective: ObjectiveSchema.optional(),
      logp_new: Matrix,
      logp_old: Matrix,
      mask: z
        .array(z.array(z.union([z.literal(0), z.literal(1), z.boolean()])).min(1))
        .min(1)
        .optional(),
      advantages: z.array(z.number()).min(1),
      eps_low: z.number().nonnegative().optional(),
      eps_high: z.number().nonnegative().optional(),
      beta: z.number().nonnegative().optional(),
      logp_ref: Matrix.optional(),
      max_tokens: Positive.optional(),
      /** false skips ∂loss/∂logp_new (half the reply). Default true. */
      gradient: z.boolean().optional(),
    }),
    result: z.object({
      loss: z.number(),
      ratios: z.union([z.array(z.number()), z.array(z.array(z.number()))]),
      clipped_fraction: z.number(),
      grad_logp_new: z.array(z.array(z.number())).optional(),
      kl: z.number().optional(),
      compute_ms: z.number(),
    }),
  },
  "policy.init": { params: PolicyInitParamsSchema, result: PolicySummarySchema },
  "policy.sample": {
    params: z.strictObject({
      prompt: Tokens,
      n: z.number().int().min(1).max(4096),
      seed: z.number().int().nonnegative(),
      temperature: Positive.optional(),
      max_new_tokens: z.number().int().positive().optional(),
      eos_token_id: z.number().int().nonnegative().optional(),
    }),
    result: z.object({
      sequences: z.array(z.object({ tokens: z.array(z.number().int()), logprobs: z.array(z.number()) })),
    }),
  },
  "policy.logprobs": {
    params: z.strictObject({ prompt: Tokens, sequences: z.array(Tokens).min(1) }),
    result: z.object({ logprobs: z.array(z.array(z.number())) }),
  },
  /** Text → ids with the model's own tokenizer, no special token added (transformers models only). */
  "policy.tokenize": {
    params: z.strictObject({ texts: z.array(z.string()).min(1) }),
    result: z.object({ ids: z.array(z.array(z.number().int().nonnegative())) }),
  },
  /** Ids → text, special tokens left out (transformers models only). */
  "policy.detokenize": {
    params: z.strictObject({ ids: z.array(z.array(z.number().int().nonnegative())).min(1) }),
    result: z.object({ texts: z.array(z.string()) }),
  },
  "policy.step": {
    params: z.strictObject({
      objective: ObjectiveSchema.optional(),
      eps_low: z.number().nonnegative().optional(),
      eps_high: z.number().nonnegative().optional(),
      learning_rate: Positive,
      kl_coef: z.number().nonnegative().optional(),
      max_tokens: Positive.optional(),
      max_grad_norm: Positive.optional(),
      groups: z
        .array(
          z.strictObject({
            prompt: Tokens,
            sequences: z.array(z.strictObject({ tokens: Tokens, logp_old: Row, advantage: z.number() })).min(1),
          }),
        )
        .min(1),
    }),
    result: StepMetricsSchema,
  },
  "policy.sft_step": {
    params: z.strictObject({
      examples: z.array(z.strictObject({ prompt: Tokens, tokens: Tokens })).min(1),
      learning_rate: Positive,
      max_grad_norm: Positive.optional(),
    }),
    result: SftMetricsSchema,
  },
  "policy.set_reference": { params: z.strictObject({}), result: z.object({ ok: z.literal(true) }) },
  "policy.reset_optimizer": { params: z.strictObject({}), result: z.object({ ok: z.literal(true) }) },
  "policy.fingerprint": {
    params: z.strictObject({}),
    result: z.object({ world_size: z.number().int(), fingerprints: z.array(z.string()), steps: z.number().int() }),
  },
  "checkpoint.save": {
    params: z.strictObject({ dir: z.string().min(1) }),
    result: z.object({ path: z.string(), steps: z.number().int() }),
  },
  "checkpoint.load": { params: z.strictObject({ dir: z.string().min(1) }), result: PolicySummarySchema },
  "export.onnx": {
    params: z.strictObject({
      path: z.string().min(1),
      opset: z.number().int().min(7).optional(),
      /** Token ids [batch][sequence]; the result then holds torch's logits for them, to check a runtime against. */
      probe: z.array(Tokens).min(1).optional(),
    }),
    result: z.object({
      path: z.string(),
      opset: z.number().int(),
      inputs: z.array(z.string()),
      outputs: z.array(z.string()),
      bytes: z.number().int(),
      probe_logits: z.array(z.array(z.array(z.number()))).optional(),
    }),
  },
  ...MU_METHODS,
} as const satisfies Record<string, { params: z.ZodType; result: z.ZodType }>;

export type SidecarMethod = keyof typeof SIDECAR_METHODS;
export type ParamsOf<M extends SidecarMethod> = z.input<(typeof SIDECAR_METHODS)[M]["params"]>;
export type ResultOf<M extends SidecarMethod> = z.output<(typeof SIDECAR_METHODS)[M]["result"]>;
