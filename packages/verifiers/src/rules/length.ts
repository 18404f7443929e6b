import { z } from "zod";
import { okDraft } from "../verifier/verifier.js";
import { bounds, rule, within } from "./rule.js";
import { countCharacters, sentences, words } from "./text.js";

export const LengthSpecSchema = z
  .strictObject({
    kind: z.literal("length"),
    unit: z.enum(["words", "chars", "sentences"]).default("words"),
    ...bounds,
    /**
     * Partial credit outside the band: the score falls linearly to 0 at a distance of
     * `tolerance × bound` (e.g. 0.2: 20% over the maximum scores 0). Absent: all or nothing.
     */
    tolerance: z.number().positive().optional(),
  })
  .refine((s) => s.min !== undefined || s.max !== undefined, { message: "expected min, max or both", path: ["min"] })
  .refine((s) => s.min === undefined || s.max === undefined || s.min <= s.max, {
    message: "expected min ≤ max",
    path: ["max"],
  });
export type LengthSpec = z.output<typeof LengthSpecSchema>;

export function measureLength(text: string, unit: LengthSpec["unit"]): number {
  if (unit === "chars") return countCharacters(text);
  return unit === "words" ? words(text).length : sentences(text).length;
}

/** `length`: the output's words, characters or sentences lie within a band, with optional tolerance. */
export const lengthVerifier = rule("length", LengthSpecSchema, (spec, output) => {
  const n = measureLength(output, spec.unit);
  const band = `${spec.min ?? 0}–${spec.max ?? "∞"} ${spec.unit}`;
  if (within(n, spec.min, spec.max)) return okDraft(1, `${n} ${spec.unit}, within ${band}`, { length: n });
  const bound = spec.min !== undefined && n < spec.min ? spec.min : spec.max!;
  const score =
    spec.tolerance === undefined || bound === 0 ? 0 : Math.max(0, 1 - Math.abs(n - bound) / (spec.tolerance * bound));
  return okDraft(score, `${n} ${spec.unit}, outside ${band}`, { length: n });
});
