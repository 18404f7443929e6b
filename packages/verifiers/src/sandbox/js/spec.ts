import { z } from "zod";

const MIB = 1024 * 1024;

/** Limits a rule runs under when its spec does not say. */
export const JS_RULE_DEFAULTS = { timeoutMs: 1000, memoryBytes: 32 * MIB } as const;

/**
 * Upper bounds on the limits a spec may ask for. A rule is a check, not a job: a minute of wall
 * time is generous, and QuickJS's WebAssembly heap cannot grow past 2 GiB at all (the inputs and
 * the engine itself live in that heap too), so 1 GiB keeps a margin.
 */
const timeoutMs = z.number().int().min(1).max(60_000);
const memoryBytes = z
  .number()
  .int()
  .min(MIB)
  .max(1024 * MIB);

/**
 * A `js` rule: JavaScript run in QuickJS (WebAssembly) with nothing but the ECMAScript built-ins
 * and the data handed in.
 *
 * `code` either defines `evaluate` (`function evaluate({ input, output, files }) { … }` or
 * `const evaluate = …`), whose return value is the result, or is a plain script whose last
 * expression is the result (`output.includes("Total")`). The result is a number in [0, 1]
 * (clamped), a boolean (true = 1) or `{ score, rationale? }`; `evaluate` may be `async`.
 *
 * @example
 * JsVerifierSpecSchema.parse({ kind: "js", code: "output.trim().endsWith('.')" });
 */
export const JsVerifierSpecSchema = z.strictObject({
  kind: z.literal("js"),
  code: z.string().min(1),
  /** Wall time for the whole evaluation, in milliseconds (default 1000). */
  timeoutMs: timeoutMs.optional(),
  /**
   * Memory limit in bytes, inputs included (default 32 MiB). It bounds the engine's WebAssembly
   * heap, which starts at 16 MiB, so a rule gets about this much plus the ~10 MiB that heap has free.
   */
  memoryBytes: memoryBytes.optional(),
});
export type JsVerifierSpec = z.output<typeof JsVerifierSpecSchema>;

/** The limits of one run, as `runJsRule` takes them. */
export const JsRuleLimitsSchema = z.strictObject({ timeoutMs, memoryBytes });
export type JsRuleLimits = z.output<typeof JsRuleLimitsSchema>;
