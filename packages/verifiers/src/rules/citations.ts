import { z } from "zod";
import { okDraft } from "../verifier/verifier.js";
import { rule } from "./rule.js";

export const CitationsSpecSchema = z.strictObject({
  kind: z.literal("citations"),
  /** Partial credit: score = min(1, distinct citations / min). */
  min: z.number().int().min(1).default(1),
  styles: z
    .array(z.enum(["url", "bracket", "doi"]))
    .min(1)
    .default(["url", "bracket"]),
});
export type CitationsSpec = z.output<typeof CitationsSpecSchema>;

export function findCitations(text: string, styles: readonly ("url" | "bracket" | "doi")[]): string[] {
  const found = new Set<string>();
  if (styles.includes("url"))
    for (const m of text.matchAll(/\bhttps?:\/\/[^\s<>()"'\]]+[^\s<>()"'\].,;:!?]/g)) found.add(m[0]);
  // [1], [2, 3], [4-6] — numeric references, not markdown links or checkboxes.
  if (styles.includes("bracket"))
    for (const m of text.matchAll(/\[(\d+(?:\s*[-–,]\s*\d+)*)\](?!\()/g))
      for (const part of m[1]!.split(/\s*,\s*/)) {
        const range = /^(\d+)\s*[-–]\s*(\d+)$/.exec(part);
        if (range)
          for (let k = Number(range[1]); k <= Number(range[2]) && k - Number(range[1]) < 100; k++) found.add(`[${k}]`);
        else found.add(`[${Number(part)}]`);
      }
  if (styles.includes("doi"))
    for (const m of text.matchAll(/\b10\.\d{4,9}\/[^\s"'<>]+[^\s"'<>.,;]/g)) found.add(`doi:${m[0].toLowerCase()}`);
  return [...found];
}

/** `citations`: at least `min` distinct URLs, numeric references or DOIs; partial credit below. */
export const citationsVerifier = rule("citations", CitationsSpecSchema, (spec, output) => {
  const found = findCitations(output, spec.styles);
  return okDraft(Math.min(1, found.length / spec.min), `${found.length} distinct citation(s); ${spec.min} needed`, {
    citations: found,
  });
});
