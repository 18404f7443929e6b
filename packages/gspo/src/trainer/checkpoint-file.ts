import { formatZodIssues } from "@rubric/core";
import { readInputText } from "@rubric/core/files";
import type { z } from "zod";
import { CheckpointError } from "../errors.js";

/**
 * A JSON file of a checkpoint, validated: a `CheckpointError` naming the file when it is not JSON
 * or does not match `schema` (with the path of the first fault). It is read by core's reader, as a
 * run directory's files are: a regular file, not a link, bounded; else one of its `file.*` errors.
 */
export async function readCheckpointFile<T extends z.ZodType>(file: string, schema: T): Promise<z.infer<T>> {
  const text = readInputText(file, { symlinks: "refuse" });
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new CheckpointError(`${file}: ${(error as Error).message}`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new CheckpointError(formatZodIssues(parsed.error, { source: file, limit: 1 }));
  return parsed.data;
}
