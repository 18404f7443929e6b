import { z } from "zod";
import { okDraft } from "../verifier/verifier.js";
import { rule } from "./rule.js";

export const NumericSpecSchema = z
  .strictObject({
    kind: z.literal("numeric"),
    expected: z.number(),
    /** Absolute tolerance (default 0); with relativeTolerance, either suffices. */
    tolerance: z.number().min(0).default(0),
    relativeTolerance: z.number().min(0).optional(),
    /** A regex whose first capture group holds the number; otherwise every number in the output is a candidate. */
    pattern: z.string().optional(),
    /** Which candidate counts: the first, the last, or any (default). */
    select: z.enum(["first", "last", "any"]).default("any"),
  })
  .superRefine((spec, ctx) => {
    if (spec.pattern === undefined) return;
    try {
      new RegExp(spec.pattern);
    } catch (error) {
      ctx.addIssue({
        code: "custom",
        path: ["pattern"],
        message: `invalid regular expression: ${(error as Error).message}`,
      });
    }
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

/** `numeric`: a number in the output (first, last or any) is within tolerance of `expected`. */
export const numericVerifier = rule("numeric", NumericSpecSchema, (spec, output) => {
  let candidates: number[];
  if (spec.pattern !== undefined) {
    candidates = [...output.matchAll(new RegExp(spec.pattern, "g"))].flatMap((m) =>
      extractNumbers(m[1] ?? m[0]).slice(0, 1),
    );
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
