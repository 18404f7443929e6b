import { z } from "zod";
import { okDraft } from "../verifier/verifier.js";
import { rule } from "./rule.js";
import { containsTerm, termOptions } from "./terms.js";

export const ExcludesSpecSchema = z.strictObject({
  kind: z.literal("excludes"),
  ...termOptions,
  /** false (default): 1 only if no term appears; true: the share of terms absent. */
  partial: z.boolean().default(false),
});
export type ExcludesSpec = z.output<typeof ExcludesSpecSchema>;

/** `excludes`: none of the listed terms may appear; with `partial`, the share absent. */
export const excludesVerifier = rule("excludes", ExcludesSpecSchema, (spec, output) => {
  const present = spec.terms.filter((t) => containsTerm(output, t, spec));
  const score = spec.partial ? 1 - present.length / spec.terms.length : present.length === 0 ? 1 : 0;
  return okDraft(score, present.length === 0 ? "no excluded term present" : `present: ${present.join(", ")}`, {
    present,
  });
});
