import type { VerifierSpec } from "@rubric/core";
import { z } from "zod";
import type { VerdictDraft, Verifier } from "../verifier/verifier.js";

/*
 * How a deterministic rule verifier is made. Each rule kind is a file of its own under rules/: a
 * spec schema (what may appear under `verifier` in a rubric) and a pure function from the output
 * text to a draft verdict. Partial credit is given where the spec says how; otherwise a rule is
 * all or nothing.
 */

const count = z.number().int().min(0);
/** The `min` / `max` counts that length and markdown specs share. */
export const bounds = { min: count.optional(), max: count.optional() };

/** A cheap verifier from a spec schema and a pure judgement of the output. */
export function rule<S extends VerifierSpec>(
  kind: S["kind"],
  specSchema: z.ZodType<S>,
  judge: (spec: S, output: string, input: string | undefined) => VerdictDraft,
): Verifier<S> {
  return {
    kind,
    specSchema,
    cheap: true,
    check: (spec, input) => judge(spec, input.output, input.input),
    async verify(_criterion, spec, input) {
      return judge(spec, input.output, input.input);
    },
  };
}

export function within(value: number, min: number | undefined, max: number | undefined): boolean {
  return (min === undefined || value >= min) && (max === undefined || value <= max);
}
