import { z } from "zod";
import {
  LoraSettingsSchema,
  Matrix,
  ModelTokenizerSchema,
  type MethodSchemas,
  ObjectiveSchema,
  Ok,
  Positive,
  Row,
  TextMethods,
  Tokens,
} from "./values.js";

/**
 * The policy's subject of the wire (`policy.*`, `checkpoint.*`, `gspo.loss`, `export.onnx`): a
 * causal LM the sidecar trains by SFT and by GSPO / GRPO / Dr.GRPO steps, its checkpoints, and its
 * ONNX export. python/rubric-trainer/src/rubric_trainer/protocol.py holds the same schemas.
 */

export const PolicySummarySchema = z.object({
  parameters: z.number().int(),
  vocab_size: z.number().int(),
  max_seq_len: z.number().int(),
  device: z.string(),
  dtype: z.string(),
  steps: z.number().int(),
  reference: z.boolean(),
  /** A transformers model's tokenizer (`policy.tokenize` reads text with it); null for the small transformer, whose ids its client makes. */
  tokenizer: ModelTokenizerSchema,
});
export type PolicySummary = z.infer<typeof PolicySummarySchema>;

export const StepMetricsSchema = z.object({
  loss: z.number(),
  clipped_fraction: z.number(),
  kl: z.number(),
  tokens: z.number().int(),
  grad_norm: z.number(),
  step: z.number().int(),
  compute_ms: z.number(),
});

export const SftMetricsSchema = z.object({
  nll: z.number(),
  tokens: z.number().int(),
  grad_norm: z.number(),
  step: z.number().int(),
  compute_ms: z.number(),
});

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
    lora: LoraSettingsSchema.optional(),
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

/** The policy's methods. */
export const POLICY_METHODS = {
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
  "policy.tokenize": TextMethods.tokenize,
  "policy.detokenize": TextMethods.detokenize,
  "policy.chat": TextMethods.chat,
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
  "policy.set_reference": { params: z.strictObject({}), result: Ok },
  "policy.reset_optimizer": { params: z.strictObject({}), result: Ok },
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
} as const satisfies MethodSchemas;
