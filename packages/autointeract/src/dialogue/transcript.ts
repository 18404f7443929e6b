import { appendFileSync } from "node:fs";
import { FlatRubricSchema, TokenUsageSchema, formatRubricIssue, readJsonLines, toJsonLines } from "@rubric/core";
import { z } from "zod";
import { AutointeractError } from "../errors.js";

const SpendSchema = {
  usage: TokenUsageSchema.optional(),
  costUsd: z.number().min(0).optional(),
  model: z.string().optional(),
};

/** One line of a transcript. Transcripts are JSONL: a line per turn, written as it happens. */
export const TurnSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("task"),
    task: z.strictObject({
      id: z.string(),
      prompt: z.string(),
      sector: z.string().optional(),
      occupation: z.string().optional(),
    }),
    manager: z.string(),
    stakeholder: z.string(),
    budget: z.strictObject({ questions: z.number().int().min(0), turns: z.number().int().min(1) }),
  }),
  z.strictObject({
    type: z.literal("question"),
    index: z.number().int().min(0),
    text: z.string(),
    difficulty: z.enum(["easy", "medium", "hard"]).optional(),
    ...SpendSchema,
  }),
  z.strictObject({ type: z.literal("answer"), index: z.number().int().min(0), text: z.string(), ...SpendSchema }),
  z.strictObject({ type: z.literal("rubric"), rubric: FlatRubricSchema, ...SpendSchema }),
  z.strictObject({
    type: z.literal("error"),
    role: z.enum(["manager", "stakeholder", "engine"]),
    error: z.strictObject({ name: z.string(), message: z.string() }),
  }),
  z.strictObject({
    type: z.literal("end"),
    reason: z.enum(["submitted", "error"]),
    costs: z.strictObject({
      questions: z.number().int().min(0),
      clarify: z.number().min(0),
      tokens: z.number().int().min(0),
      usd: z.number().min(0),
    }),
  }),
]);
export type Turn = z.output<typeof TurnSchema>;

/** Thrown when a transcript file does not parse; names the line. */
export class TranscriptError extends AutointeractError {
  override readonly name = "TranscriptError";
  readonly code = "dialogue.transcript";
}

/** Parses a JSONL transcript. @throws TranscriptError naming the first bad line and its path. */
export function parseTranscript(text: string, source = "transcript"): Turn[] {
  const { records, issues } = readJsonLines(text, TurnSchema, { source });
  if (issues.length > 0) throw new TranscriptError(formatRubricIssue(issues[0]!));
  return records.map((record) => record.value);
}

export function transcriptToJsonl(turns: readonly Turn[]): string {
  return toJsonLines(turns);
}

/**
 * A turn sink that appends each turn to a JSONL file the moment it happens (synchronously), so
 * a crash or timeout later in the episode never loses what was already said.
 */
export function appendTurnsTo(path: string): (turn: Turn) => void {
  return (turn) => appendFileSync(path, toJsonLines([turn]));
}
