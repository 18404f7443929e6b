import { formatRubricIssue, readJsonLines } from "@rubric/core";
import { z } from "zod";
import { AutointeractError } from "../errors.js";

/** One GDPval task as shipped in `tasks.jsonl` (OpenAI's gold subset). */
export const GdpvalTaskSchema = z.strictObject({
  task_id: z.string().min(1),
  sector: z.string().min(1),
  occupation: z.string().min(1),
  prompt: z.string().min(1),
  /** Paths of the task's input files, relative to the dataset; not shipped here. */
  reference_files: z.array(z.string()),
  reference_file_urls: z.array(z.string()),
});
export type GdpvalTask = z.output<typeof GdpvalTaskSchema>;

/**
 * The gdpval module's errors: thrown as is when a GDPval file does not have the shape it should
 * (naming every bad line); its subclasses are the task lookups of `findGdpvalTask`.
 */
export class GdpvalDataError extends AutointeractError {
  // Widened to string so that the more specific gdpval errors (find-task.ts) can name themselves.
  override readonly name: string = "GdpvalDataError";
  readonly code: `gdpval.${string}` = "gdpval.data";
}

/** Parses `tasks.jsonl`. @throws GdpvalDataError listing every bad line with its path. */
export function parseGdpvalTasks(text: string, source = "tasks.jsonl"): GdpvalTask[] {
  const { records, issues } = readJsonLines(text, GdpvalTaskSchema, {
    source,
    idOf: (task) => task.task_id,
    idPath: "task_id",
  });
  if (issues.length > 0)
    throw new GdpvalDataError(
      `${issues.length} problem(s) in ${source}:\n  ${issues.map(formatRubricIssue).join("\n  ")}`,
    );
  return records.map((record) => record.value);
}
