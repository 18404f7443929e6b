import { appendFileSync } from "node:fs";
import { FlatRubricSchema, TokenUsageSchema } from "@rubric/core";
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
  const turns: Turn[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new TranscriptError(`${source}:${i + 1}: invalid JSON: ${(error as Error).message}`);
    }
    const parsed = TurnSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new TranscriptError(`${source}:${i + 1}: ${issue.path.join(".") || "(root)"}: ${issue.message}`);
    }
    turns.push(parsed.data);
  });
  return turns;
}

export function transcriptToJsonl(turns: readonly Turn[]): string {
  return turns.map((t) => JSON.stringify(t)).join("\n") + (turns.length > 0 ? "\n" : "");
}

/**
 * A turn sink that appends each turn to a JSONL file the moment it happens (synchronously), so
 * a crash or timeout later in the episode never loses what was already said.
 */
export function appendTurnsTo(path: string): (turn: Turn) => void {
  return (turn) => appendFileSync(path, `${JSON.stringify(turn)}\n`);
}
