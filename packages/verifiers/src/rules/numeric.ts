import { z } from "zod";
import { errorDraft, okDraft } from "../verifier/verifier.js";
import { RegexTimeLimitError, rulePatternCache, rulePatternIssue } from "./regex-engine.js";
import { rule } from "./rule.js";

export const NumericSpecSchema = z
  .strictObject({
    kind: z.literal("numeric"),
    expected: z.number(),
    /** Absolute tolerance (default 0); with relativeTolerance, either suffices. */
    tolerance: z.number().min(0).default(0),
    relativeTolerance: z.number().min(0).optional(),
    /**
     * A regex whose first capture group holds the number; otherwise every number in the output is
     * a candidate. Run by RE2 unless `engine` is `js`, as in the `regex` rule.
     */
    pattern: z.string().optional(),
    engine: z.enum(["re2", "js"]).default("re2"),
    /** Which candidate counts: the first, the last, or any (default). */
    select: z.enum(["first", "last", "any"]).default("any"),
  })
  .superRefine((spec, ctx) => {
    if (spec.pattern === undefined) return;
    const issue = rulePatternIssue(spec.pattern, "", spec.engine);
    if (issue) ctx.addIssue({ code: "custom", ...issue });
  });
export type NumericSpec = z.output<typeof NumericSpecSchema>;

/** Numbers as people write them: 1,234.5 · −3 · 4.2e-3 · 12% (as 12) · $1.2M is not expanded. */
export function extractNumbers(text: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(/(?<![\p{L}\d.])[-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?/gu)) {
    const value = Number(m[0].replace(/,/g, "").replace("−", "-"));
    if (Number.isFinite(value)) out.push(value);
  }
  return out;
}

const patternOf = rulePatternCache();

/** `numeric`: a number in the output (first, last or any) is within tolerance of `expected`. */
export const numericVerifier = rule("numeric", NumericSpecSchema, (spec, output) => {
  let candidates: number[];
  if (spec.pattern !== undefined) {
    let found: string[];
    try {
      found = patternOf(spec.pattern, "", spec.engine).firstGroups(output);
    } catch (error) {
      if (error instanceof RegexTimeLimitError) return errorDraft(error.message);
      throw error;
    }
    candidates = found.flatMap((text) => extractNumbers(text).slice(0, 1));
  } else candidates = extractNumbers(output);
  if (spec.select === "first") candidates = candidates.slice(0, 1);
  if (spec.select === "last") candidates = candidates.slice(-1);
  const close = (x: number) =>
    Math.abs(x - spec.expected) <= spec.tolerance ||
    (spec.relativeTolerance !== undefined &&
      Math.abs(x - spec.expected) <= spec.relativeTolerance * Math.abs(spec.expected));
  const hit = candidates.find(close);
  if (candidates.length === 0) return okDraft(0, "no number found", { candidates });
  return okDraft(
    hit === undefined ? 0 : 1,
    hit === undefined ? `no candidate within tolerance of ${spec.expected}` : `found ${hit}`,
    { candidates },
  );
});
