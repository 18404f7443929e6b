import { z } from "zod";
import { readRecords } from "../records/read-records.js";
import { StepSchema } from "./step.js";

/** One line of a steps file (`rubric mu criteria --steps`): a step with an id unique in the file. */
export const StepRecordSchema = StepSchema.extend({ id: z.string().min(1) });
export type StepRecord = z.infer<typeof StepRecordSchema>;

/**
 * The steps of a JSON-lines file, one `{ id, task, history, budgetLeft, action }` per line. Every
 * bad line (and any repeated id) is listed, numbered, in one `ArcoFileError` naming `source`.
 *
 * @example
 * const steps = readSteps(readInputText("steps.jsonl"), "steps.jsonl");
 */
export function readSteps(text: string, source: string): StepRecord[] {
  return readRecords(text, StepRecordSchema, source, (step) => step.id);
}
