import { z } from "zod";
import { okDraft } from "../verifier/verifier.js";
import { rule } from "./rule.js";
import { sentences, syllables, words } from "./text.js";

export const ReadabilitySpecSchema = z
  .strictObject({
    kind: z.literal("readability"),
    /** Flesch–Kincaid grade level (default) or Flesch reading ease. */
    metric: z.enum(["flesch-kincaid-grade", "flesch-reading-ease"]).default("flesch-kincaid-grade"),
    min: z.number().optional(),
    max: z.number().optional(),
  })
  .refine((s) => s.min !== undefined || s.max !== undefined, { message: "expected min, max or both", path: ["min"] });
export type ReadabilitySpec = z.output<typeof ReadabilitySpecSchema>;

/** Flesch (1948) reading ease and Kincaid et al. (1975) grade level, with heuristic syllables. */
export function readability(text: string) {
  const ws = words(text);
  const ss = Math.max(1, sentences(text).length);
  const syl = ws.reduce((n, w) => n + syllables(w), 0);
  const wordsPerSentence = ws.length / ss;
  const syllablesPerWord = ws.length === 0 ? 0 : syl / ws.length;
  return {
    words: ws.length,
    sentences: ss,
    syllables: syl,
    fleschReadingEase: 206.835 - 1.015 * wordsPerSentence - 84.6 * syllablesPerWord,
    fleschKincaidGrade: 0.39 * wordsPerSentence + 11.8 * syllablesPerWord - 15.59,
  };
}

/** `readability`: the Flesch–Kincaid grade (or Flesch reading ease) lies within a band. */
export const readabilityVerifier = rule("readability", ReadabilitySpecSchema, (spec, output) => {
  const r = readability(output);
  if (r.words === 0) return okDraft(0, "no words to measure", r);
  const value = spec.metric === "flesch-reading-ease" ? r.fleschReadingEase : r.fleschKincaidGrade;
  const inBand = (spec.min === undefined || value >= spec.min) && (spec.max === undefined || value <= spec.max);
  return okDraft(inBand ? 1 : 0, `${spec.metric} ${value.toFixed(1)}, band ${spec.min ?? "−∞"}–${spec.max ?? "∞"}`, r);
});
