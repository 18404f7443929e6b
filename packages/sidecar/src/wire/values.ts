import { ChatMessageSchema } from "@rubric/core";
import { z } from "zod";

/**
 * The value shapes every subject of the wire shares: token ids, rows and matrices of log-probs,
 * positive rates, and the random-stream state the client and the sidecar both continue.
 */

/** Token ids, at least one. */
export const Tokens = z.array(z.number().int().nonnegative()).min(1);
export const Row = z.array(z.number()).min(1);
export const Matrix = z.array(Row).min(1);
export const Positive = z.number().positive();
const UInt32 = z.number().int().min(0).max(0xffffffff);
export const ObjectiveSchema = z.enum(["gspo", "grpo", "dr-grpo"]);
export const Ok = z.object({ ok: z.literal(true) });

/** peft's LoRA settings as the sidecar reads them (the policy's adapter; μ's refines them). */
export const LoraSettingsSchema = z.strictObject({
  r: z.number().int().positive(),
  lora_alpha: Positive.optional(),
  lora_dropout: z.number().nonnegative().optional(),
  target_modules: z.array(z.string().min(1)).min(1).optional(),
});

/** @rubric/core's `RngState`: a stream the sidecar continues (without advancing the caller's copy). */
export const RngStateSchema = z.strictObject({
  algorithm: z.literal("xoshiro128**"),
  words: z
    .tuple([UInt32, UInt32, UInt32, UInt32])
    .readonly()
    .refine((words) => words.some((word) => word !== 0), { message: "must not be all zero" }),
  key: z.string().regex(/^[0-9a-f]{16}$/, "expected 16 lower-case hex digits"),
});

/**
 * A transformers model's own tokenizer, as a summary describes it (the policy's and μ's alike);
 * null for the small transformer, whose ids its client makes.
 */
export const ModelTokenizerSchema = z
  .object({
    size: z.number().int().positive(),
    bos_token_id: z.number().int().nonnegative().nullable(),
    eos_token_id: z.number().int().nonnegative().nullable(),
    /** Whether it has a chat template (`<subject>.chat` renders conversations with it). */
    chat_template: z.boolean(),
  })
  .nullable();
export type ModelTokenizer = z.infer<typeof ModelTokenizerSchema>;

const Ids = z.array(z.array(z.number().int().nonnegative()));

/**
 * Text through a transformers model's own tokenizer: the same three methods for π (`policy.*`)
 * and μ (`mu.*`). `tokenize`: text → ids, no special token added; `detokenize`: ids → text,
 * special tokens left out; `chat`: conversations → ids through the model's chat template with
 * the assistant's turn opened (the prompt a chat model was trained to answer).
 */
export const TextMethods = {
  tokenize: { params: z.strictObject({ texts: z.array(z.string()).min(1) }), result: z.object({ ids: Ids }) },
  detokenize: { params: z.strictObject({ ids: Ids.min(1) }), result: z.object({ texts: z.array(z.string()) }) },
  chat: {
    params: z.strictObject({ conversations: z.array(z.array(ChatMessageSchema).min(1)).min(1) }),
    result: z.object({ ids: Ids }),
  },
} as const;

/** A method's two schemas: its params (checked before sending) and its result (checked on arrival). */
export type MethodSchemas = Record<string, { params: z.ZodType; result: z.ZodType }>;
