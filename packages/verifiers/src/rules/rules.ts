import { z } from "zod";
import { okDraft, type VerdictDraft, type Verifier } from "../verifier/verifier.js";
import { containsTerm, sentences, syllables, words } from "./text.js";

/**
 * Deterministic rule verifiers. Each is a spec schema (what may appear under `verifier` in a
 * rubric) and a pure function from the output text to a draft verdict. Partial credit is given
 * where the spec says how; otherwise a rule is all or nothing.
 */

const count = z.number().int().min(0);
const bounds = { min: count.optional(), max: count.optional() };

function rule<S extends { kind: string }>(
  kind: S["kind"],
  specSchema: z.ZodType<S>,
  judge: (spec: S, output: string, input: string | undefined) => VerdictDraft,
): Verifier<S> {
  return {
    kind,
    specSchema,
    cheap: true,
    async verify(_criterion, spec, input) {
      return judge(spec, input.output, input.input);
    },
  };
}

function within(value: number, min: number | undefined, max: number | undefined): boolean {
  return (min === undefined || value >= min) && (max === undefined || value <= max);
}

// --- regex -----------------------------------------------------------------------------------

export const RegexSpecSchema = z
  .strictObject({
    kind: z.literal("regex"),
    pattern: z.string().min(1),
    flags: z
      .string()
      .regex(/^[dgimsuvy]*$/, "expected RegExp flags from d g i m s u v y")
      .optional(),
    /** `match` (default): the output must match; `no-match`: it must not. */
    expect: z.enum(["match", "no-match"]).default("match"),
    /** Partial credit: score = min(1, matches / minMatches). */
    minMatches: z.number().int().min(1).optional(),
  })
  .superRefine((spec, ctx) => {
    try {
      new RegExp(spec.pattern, spec.flags);
    } catch (error) {
      ctx.addIssue({
        code: "custom",
        path: ["pattern"],
        message: `invalid regular expression: ${(error as Error).message}`,
      });
    }
  });
export type RegexSpec = z.output<typeof RegexSpecSchema>;

export const regexVerifier = rule("regex", RegexSpecSchema, (spec, output) => {
  const flags = spec.flags ?? "";
  const matches = output.match(new RegExp(spec.pattern, flags.includes("g") ? flags : `${flags}g`))?.length ?? 0;
  if (spec.expect === "no-match")
    return okDraft(matches === 0 ? 1 : 0, `${matches} match(es) of /${spec.pattern}/; expected none`);
  const needed = spec.minMatches ?? 1;
  return okDraft(Math.min(1, matches / needed), `${matches} match(es) of /${spec.pattern}/; ${needed} needed`);
});

// --- includes / excludes ---------------------------------------------------------------------

const termOptions = {
  terms: z.array(z.string().min(1)).min(1),
  /** Case-insensitive by default, with Unicode folding. */
  caseSensitive: z.boolean().default(false),
  wholeWord: z.boolean().default(false),
};

export const IncludesSpecSchema = z.strictObject({
  kind: z.literal("includes"),
  ...termOptions,
  /** `all` (default) gives partial credit: the share of terms present; `any`: 1 if any is present. */
  mode: z.enum(["all", "any"]).default("all"),
});
export type IncludesSpec = z.output<typeof IncludesSpecSchema>;

export const includesVerifier = rule("includes", IncludesSpecSchema, (spec, output) => {
  const found = spec.terms.filter((t) => containsTerm(output, t, spec));
  const missing = spec.terms.filter((t) => !found.includes(t));
  const score = spec.mode === "any" ? (found.length > 0 ? 1 : 0) : found.length / spec.terms.length;
  return okDraft(score, missing.length === 0 ? "all terms present" : `missing: ${missing.join(", ")}`, {
    found,
    missing,
  });
});

export const ExcludesSpecSchema = z.strictObject({
  kind: z.literal("excludes"),
  ...termOptions,
  /** false (default): 1 only if no term appears; true: the share of terms absent. */
  partial: z.boolean().default(false),
});
export type ExcludesSpec = z.output<typeof ExcludesSpecSchema>;

export const excludesVerifier = rule("excludes", ExcludesSpecSchema, (spec, output) => {
  const present = spec.terms.filter((t) => containsTerm(output, t, spec));
  const score = spec.partial ? 1 - present.length / spec.terms.length : present.length === 0 ? 1 : 0;
  return okDraft(score, present.length === 0 ? "no excluded term present" : `present: ${present.join(", ")}`, {
    present,
  });
});

// --- length ----------------------------------------------------------------------------------

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
  if (unit === "chars") return [...text.normalize("NFC")].length;
  return unit === "words" ? words(text).length : sentences(text).length;
}

export const lengthVerifier = rule("length", LengthSpecSchema, (spec, output) => {
  const n = measureLength(output, spec.unit);
  const band = `${spec.min ?? 0}–${spec.max ?? "∞"} ${spec.unit}`;
  if (within(n, spec.min, spec.max)) return okDraft(1, `${n} ${spec.unit}, within ${band}`, { length: n });
  const bound = spec.min !== undefined && n < spec.min ? spec.min : spec.max!;
  const score =
    spec.tolerance === undefined || bound === 0 ? 0 : Math.max(0, 1 - Math.abs(n - bound) / (spec.tolerance * bound));
  return okDraft(score, `${n} ${spec.unit}, outside ${band}`, { length: n });
});

// --- markdown --------------------------------------------------------------------------------

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

// --- citations -------------------------------------------------------------------------------

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

export const citationsVerifier = rule("citations", CitationsSpecSchema, (spec, output) => {
  const found = findCitations(output, spec.styles);
  return okDraft(Math.min(1, found.length / spec.min), `${found.length} distinct citation(s); ${spec.min} needed`, {
    citations: found,
  });
});

// --- numeric ---------------------------------------------------------------------------------

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

// --- readability -----------------------------------------------------------------------------

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

export const readabilityVerifier = rule("readability", ReadabilitySpecSchema, (spec, output) => {
  const r = readability(output);
  if (r.words === 0) return okDraft(0, "no words to measure", r);
  const value = spec.metric === "flesch-reading-ease" ? r.fleschReadingEase : r.fleschKincaidGrade;
  const inBand = (spec.min === undefined || value >= spec.min) && (spec.max === undefined || value <= spec.max);
  return okDraft(inBand ? 1 : 0, `${spec.metric} ${value.toFixed(1)}, band ${spec.min ?? "−∞"}–${spec.max ?? "∞"}`, r);
});

// --- json-schema lives in json-schema.ts (it needs a validator) -------------------------------

/** Every rule verifier of this module. */
export const ruleVerifiers = [
  regexVerifier,
  includesVerifier,
  excludesVerifier,
  lengthVerifier,
  markdownVerifier,
  citationsVerifier,
  numericVerifier,
  readabilityVerifier,
] as const;
