import { z } from "zod";
import { okDraft } from "../verifier/verifier.js";
import { bounds, rule, within } from "./rule.js";

const countBounds = z
  .strictObject(bounds)
  .refine((b) => b.min !== undefined || b.max !== undefined, { message: "expected min, max or both" });

export const MarkdownSpecSchema = z
  .strictObject({
    kind: z.literal("markdown"),
    headings: countBounds.optional(),
    /** Only headings of this level (1–6) count for `headings`. */
    headingLevel: z.number().int().min(1).max(6).optional(),
    bullets: countBounds.optional(),
    tables: countBounds.optional(),
    codeBlocks: countBounds.optional(),
  })
  .refine((s) => s.headings || s.bullets || s.tables || s.codeBlocks, {
    message: "expected at least one of headings, bullets, tables, codeBlocks",
  });
export type MarkdownSpec = z.output<typeof MarkdownSpecSchema>;

/** Counts markdown structure, ignoring anything inside fenced code blocks. */
export function markdownCounts(text: string, headingLevel?: number) {
  const lines = text.split(/\r?\n/);
  let inFence = false;
  let codeBlocks = 0;
  let headings = 0;
  let bullets = 0;
  let tables = 0;
  let previousWasTableRow = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^\s{0,3}(```|~~~)/.test(line)) {
      if (!inFence) codeBlocks++;
      inFence = !inFence;
      previousWasTableRow = false;
      continue;
    }
    if (inFence) continue;
    const heading = /^\s{0,3}(#{1,6})\s+\S/.exec(line);
    if (heading && (headingLevel === undefined || heading[1]!.length === headingLevel)) headings++;
    if (/^\s*(?:[-*+]|\d+[.)])\s+\S/.test(line)) bullets++;
    // A table is a header row followed by a delimiter row such as | --- | :-: |.
    const isDelimiter = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/.test(line);
    if (isDelimiter && previousWasTableRow) tables++;
    previousWasTableRow = /\|/.test(line) && !isDelimiter;
  }
  return { headings, bullets, tables, codeBlocks };
}

/** `markdown`: counts of headings, bullets, tables and code blocks lie within their bounds; the share that do. */
export const markdownVerifier = rule("markdown", MarkdownSpecSchema, (spec, output) => {
  const counts = markdownCounts(output, spec.headingLevel);
  const checks = (["headings", "bullets", "tables", "codeBlocks"] as const).flatMap((key) => {
    const b = spec[key];
    return b ? [{ key, ok: within(counts[key], b.min, b.max), n: counts[key], b }] : [];
  });
  const failed = checks.filter((c) => !c.ok);
  return okDraft(
    (checks.length - failed.length) / checks.length,
    failed.length === 0
      ? "all structure checks pass"
      : failed.map((c) => `${c.key}: ${c.n}, expected ${c.b.min ?? 0}–${c.b.max ?? "∞"}`).join("; "),
    counts,
  );
});
