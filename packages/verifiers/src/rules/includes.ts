import { z } from "zod";
import { okDraft } from "../verifier/verifier.js";
import { rule } from "./rule.js";
import { containsTerm, termOptions } from "./terms.js";

export const IncludesSpecSchema = z.strictObject({
  kind: z.literal("includes"),
  ...termOptions,
  /** `all` (default) gives partial credit: the share of terms present; `any`: 1 if any is present. */
  mode: z.enum(["all", "any"]).default("all"),
});
export type IncludesSpec = z.output<typeof IncludesSpecSchema>;

/** `includes`: the share of the listed terms the output contains (or 1 if any, with `mode: "any"`). */
export const includesVerifier = rule("includes", IncludesSpecSchema, (spec, output) => {
  const found = spec.terms.filter((t) => containsTerm(output, t, spec));
  const missing = spec.terms.filter((t) => !found.includes(t));
  const score = spec.mode === "any" ? (found.length > 0 ? 1 : 0) : found.length / spec.terms.length;
  return okDraft(score, missing.length === 0 ? "all terms present" : `missing: ${missing.join(", ")}`, {
    found,
    missing,
  });
});
