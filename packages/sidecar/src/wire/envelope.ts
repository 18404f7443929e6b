import { z } from "zod";
import { MuPretrainMetricsSchema, MuSftMetricsSchema, MuStepMetricsSchema } from "./mu.js";
import { SftMetricsSchema, StepMetricsSchema } from "./policy.js";

/**
 * The envelope of the sidecar's wire (python/rubric-trainer/src/rubric_trainer/protocol.py holds
 * the same schemas in Python): newline-delimited JSON over the child's stdio, snake_case fields.
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

export const ReadySchema = z.object({
  pid: z.number().int(),
  version: z.string(),
  torch: z.string(),
  world_size: z.number().int().positive(),
});

export const NotificationSchema = z.discriminatedUnion("method", [
  z.strictObject({ method: z.literal("ready"), params: ReadySchema }),
  z.strictObject({
    method: z.literal("metrics"),
    params: z.discriminatedUnion("method", [
      StepMetricsSchema.extend({ method: z.literal("policy.step") }),
      SftMetricsSchema.extend({ method: z.literal("policy.sft_step") }),
      MuSftMetricsSchema.extend({ method: z.literal("mu.sft") }),
      MuPretrainMetricsSchema.extend({ method: z.literal("mu.pretrain") }),
      MuStepMetricsSchema.extend({ method: z.literal("mu.step") }),
    ]),
  }),
]);
export type SidecarNotification = z.infer<typeof NotificationSchema>;
/** A `metrics` notification's params: what one training step measured, streamed as it happens. */
export type TrainingMetrics = Extract<SidecarNotification, { method: "metrics" }>["params"];
