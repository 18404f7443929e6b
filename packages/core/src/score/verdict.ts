import { z } from "zod";
import { weightSumIssue } from "../rubric/weight.js";
import { formatRubricIssue } from "../rubric/errors.js";
import { toRubricIssues } from "../rubric/issues.js";
import { VerdictValidationError } from "./errors.js";

/**
 * One verifier's judgement of one criterion. `score` is a fraction in [0, 1] (staged rules earn
 * fraction × weight points); an `error` or `skipped` verdict has no score — an error is never a 0.
 */
export const VerdictSchema = z
  .strictObject({
    criterionId: z.string().min(1),
    score: z.number().min(0).max(1).nullable(),
    status: z.enum(["ok", "error", "skipped"]),
    rationale: z.string().optional(),
    /** What the verifier saw: quotes, matches, a traceback for an error. */
    evidence: z.unknown().optional(),
    /** The error's message when status is `error`. */
    error: z.string().optional(),
    /** Which verifier produced it, e.g. `regex` or `llm-judge:hf:meta-llama/...`. */
    verifier: z.string().optional(),
    costUsd: z.number().min(0).optional(),
    tokens: z.number().int().min(0).optional(),
    latencyMs: z.number().min(0).optional(),
    cacheKey: z.string().optional(),
  })
  .superRefine((verdict, ctx) => {
    if (verdict.status === "ok" && verdict.score === null)
      ctx.addIssue({
        code: "custom",
        path: ["score"],
        message: 'expected a score in [0, 1] for status "ok", got null',
      });
    if (verdict.status !== "ok" && verdict.score !== null)
      ctx.addIssue({
        code: "custom",
        path: ["score"],
        message: `expected null for status ${JSON.stringify(verdict.status)}, got ${verdict.score}`,
      });
  });
export type Verdict = z.output<typeof VerdictSchema>;

/** Shorthand for a verdict that holds: `okVerdict("s0.r1", 0.5)`. */
export function okVerdict(criterionId: string, score: number): Verdict {
  return { criterionId, score, status: "ok" };
}

/**
 * A verdicts file: `{"scores": {"<criterionId>": fraction}}` (every score `ok`), or
 * `{"verdicts": [Verdict, ...]}` with statuses and provenance.
 */
export const VerdictFileSchema = z.union([
  z.strictObject({ scores: z.record(z.string().min(1), z.number().min(0).max(1)) }),
  z.strictObject({ verdicts: z.array(VerdictSchema) }),
]);
export type VerdictFile = z.output<typeof VerdictFileSchema>;

/**
 * The verdicts a verdicts file holds. Given zod's output, a `scores` entry keyed `__proto__` is
 * already gone (zod rebuilds records by assignment, and assigning `__proto__` sets a prototype);
 * {@link parseVerdictFile} reads the entries from the file's own value and keeps it.
 */
export function verdictsFromFile(file: VerdictFile): Verdict[] {
  if ("verdicts" in file) return file.verdicts;
  return Object.entries(file.scores).map(([criterionId, score]) => okVerdict(criterionId, score));
}

// A record's own entries as the file holds them, `__proto__` included. Called once zod has
// validated them, which it does for every own key even though its output drops that one.
function ownEntries(record: unknown): [string, number][] {
  return Object.entries(record as Record<string, number>);
}

/**
 * Reads a verdicts file's JSON value.
 * @throws VerdictValidationError naming the path and value of every problem.
 */
export function parseVerdictFile(value: unknown, source = "verdicts"): Verdict[] {
  const result = VerdictFileSchema.safeParse(value, { reportInput: true });
  if (!result.success)
    throw new VerdictValidationError(
      describeIssues(result.error.issues, source, 'expected {"scores": {id: fraction}} or {"verdicts": [...]}'),
    );
  if ("verdicts" in result.data) return result.data.verdicts;
  return ownEntries((value as { scores: unknown }).scores).map(([criterionId, score]) => okVerdict(criterionId, score));
}

/** A weights file: `{"weights": {"<criterionId>": weight}}` or the bare record. */
export const WeightFileSchema = z.union([
  z.strictObject({ weights: z.record(z.string().min(1), z.number().min(0)) }),
  z.record(z.string().min(1), z.number().min(0)),
]);

/**
 * Reads a weights file's JSON value.
 * @throws VerdictValidationError naming the path and value of every problem.
 */
export function parseWeightFile(value: unknown, source = "weights"): Record<string, number> {
  const result = WeightFileSchema.safeParse(value, { reportInput: true });
  if (!result.success)
    throw new VerdictValidationError(
      describeIssues(result.error.issues, source, 'expected {"weights": {id: weight ≥ 0}}'),
    );
  const raw = value as Record<string, unknown>;
  const record = "weights" in result.data && typeof result.data["weights"] === "object" ? raw["weights"] : raw;
  // fromEntries defines each key as an own property, so `__proto__` stays an entry.
  const weights = Object.fromEntries(ownEntries(record)) as Record<string, number>;
  // Refused as a rubric file with the same weights is: every total and maximum in weight units
  // would print as Infinity (`null` in JSON). Scoring itself would cope (weights are scaled by a
  // power of two before they are summed), so overrides built in code are left alone.
  const overflow = weightSumIssue(Object.values(weights), []);
  if (overflow !== undefined) throw new VerdictValidationError(`${source}: ${overflow.message}`);
  return weights;
}

function describeIssues(issues: readonly z.core.$ZodIssue[], source: string, shape: string): string {
  // A union reports "no option matched" at the root; the branch whose issues go deepest names the real fault.
  const flattened = issues.flatMap((issue) =>
    issue.code === "invalid_union" && issue.path.length === 0 ? deepest(issue.errors).map((inner) => inner) : [issue],
  );
  const lines = toRubricIssues(flattened).map((issue) => formatRubricIssue({ ...issue, source }));
  return lines.length > 0 ? lines.join("\n") : `${source}: ${shape}`;
}

function deepest(branches: readonly (readonly z.core.$ZodIssue[])[]): readonly z.core.$ZodIssue[] {
  let best: readonly z.core.$ZodIssue[] = [];
  let depth = -1;
  for (const branch of branches) {
    const d = Math.max(...branch.map((i) => i.path.length + (i.code === "unrecognized_keys" ? 0 : 1)));
    if (d > depth) {
      depth = d;
      best = branch;
    }
  }
  return best;
}
