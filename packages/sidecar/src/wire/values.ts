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

/** A method's two schemas: its params (checked before sending) and its result (checked on arrival). */
export type MethodSchemas = Record<string, { params: z.ZodType; result: z.ZodType }>;
