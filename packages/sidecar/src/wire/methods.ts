import { z } from "zod";
import { MU_METHODS, MuSummarySchema } from "./mu.js";
import { POLICY_METHODS, PolicySummarySchema } from "./policy.js";
import { type MethodSchemas, Ok } from "./values.js";

/** Every method: the schema of its params (checked before sending) and of its result (checked on arrival). */
export const SIDECAR_METHODS = {
  health: {
    params: z.strictObject({}),
    result: z.object({
      ok: z.literal(true),
      version: z.string(),
      pid: z.number().int(),
      torch: z.string(),
      /**
       * torch's intra-op threads. Its floating-point sums depend on how many, so a μ or policy
       * trained on 1 thread differs in its last bits from one trained on 2, and the gap grows.
       */
      threads: z.number().int().positive(),
      cuda: z.boolean(),
      world_size: z.number().int(),
      transformers: z.boolean(),
      policy: PolicySummarySchema.nullable(),
      /** ARCO's rubric model μ, when the sidecar holds one. */
      mu: MuSummarySchema.nullable(),
    }),
  },
  shutdown: { params: z.strictObject({}), result: Ok },
  ...POLICY_METHODS,
  ...MU_METHODS,
} as const satisfies MethodSchemas;

export type SidecarMethod = keyof typeof SIDECAR_METHODS;
export type ParamsOf<M extends SidecarMethod> = z.input<(typeof SIDECAR_METHODS)[M]["params"]>;
export type ResultOf<M extends SidecarMethod> = z.output<(typeof SIDECAR_METHODS)[M]["result"]>;
