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
  const tasks: GdpvalTask[] = [];
  const problems: string[] = [];
  const seen = new Map<string, number>();
  text.split("\n").forEach((line, index) => {
    if (line.trim() === "") return;
    const where = `${source}:${index + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      problems.push(`${where}: invalid JSON: ${(error as Error).message}`);
      return;
    }
    const parsed = GdpvalTaskSchema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues)
        problems.push(`${where}: ${issue.path.join(".") || "(root)"}: ${issue.message}`);
      return;
    }
    const first = seen.get(parsed.data.task_id);
    if (first !== undefined) problems.push(`${where}: task_id ${parsed.data.task_id} also on line ${first}`);
    seen.set(parsed.data.task_id, index + 1);
    tasks.push(parsed.data);
  });
  if (problems.length > 0)
    throw new GdpvalDataError(`${problems.length} problem(s) in ${source}:\n  ${problems.join("\n  ")}`);
  return tasks;
}
