import type { z } from "zod";
import { VerifierOptionsError } from "../errors.js";

/**
 * The operator's ceilings on what one rule's spec may ask for. A rubric may lower its own limits
 * but not raise them past these: the rubric's author is not the one whose machine pays for
 * `memoryMb: 8192` or `timeoutMs: 3e9`.
 *
 * A spec above a maximum is refused — an issue on the spec, so the engine reports it as a
 * `VerificationSetupError` naming the criterion before anything runs — and not clamped: a clamped
 * limit turns "this rule needs 8 GiB" into a memory-error or timeout verdict that reads as the
 * output's fault.
 */
export interface RuleLimitMaxima {
  /** Longest wall-clock limit a spec may set, in ms (CLI `--max-rule-timeout-ms`). Default 60 000. */
  readonly maxTimeoutMs?: number;
  /** Largest memory limit a spec may set, in MiB (CLI `--max-rule-memory-mb`). Default 2048 for `python`, 1024 for `js`. */
  readonly maxMemoryMb?: number;
}

export const RULE_LIMIT_MAXIMA = { timeoutMs: 60_000, pythonMemoryMb: 2048, jsMemoryMb: 1024 } as const;

/** One limit of one spec, against its ceiling. */
export interface LimitCheck {
  /** The spec's field, e.g. `timeoutMs`. */
  readonly field: string;
  readonly asked: number | undefined;
  readonly maximum: number;
  /** How the numbers read: `ms`, `MiB`, `bytes`. */
  readonly unit: string;
  /** Where the operator sets this maximum, for the message. */
  readonly setBy: string;
}

/**
 * The first limit a spec asks for above its maximum, as a message, or `undefined`.
 *
 * @example
 * limitProblem([{ field: "timeoutMs", asked: 3e9, maximum: 60_000, unit: "ms", setBy: "maxTimeoutMs" }]);
 * // "asks for 3000000000 ms, above the operator's maximum of 60000 ms (maxTimeoutMs); a rubric may only ask for less"
 */
export function limitProblem(checks: readonly LimitCheck[]): { field: string; message: string } | undefined {
  for (const check of checks)
    if (check.asked !== undefined && check.asked > check.maximum)
      return {
        field: check.field,
        message: `asks for ${check.asked} ${check.unit}, above the operator's maximum of ${check.maximum} ${check.unit} (${check.setBy}); a rubric may only ask for less`,
      };
  return undefined;
}

/** `schema` with the checks as an issue on the offending field, so the engine names criterion and field. */
export function withLimitMaxima<S extends z.ZodType>(schema: S, checksOf: (spec: z.output<S>) => LimitCheck[]): S {
  return schema.superRefine((spec, ctx) => {
    const problem = limitProblem(checksOf(spec as z.output<S>));
    if (problem) ctx.addIssue({ code: "custom", path: [problem.field], message: problem.message });
  }) as unknown as S;
}

/** Throws when the operator's own default is above the operator's own maximum: a configuration mistake. */
export function assertDefaultWithinMaximum(name: string, value: number | undefined, maxName: string, maximum: number) {
  if (value !== undefined && value > maximum)
    throw new VerifierOptionsError(
      `${name} ${value} is above ${maxName} ${maximum}; raise ${maxName} or lower ${name}`,
    );
}
