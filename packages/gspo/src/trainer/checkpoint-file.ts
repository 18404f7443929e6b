import { readFile } from "node:fs/promises";
import { formatZodIssues } from "@rubric/core";
import type { z } from "zod";
import { CheckpointError } from "../errors.js";

/**
 * A JSON file of a checkpoint, validated: a `CheckpointError` naming the file when it cannot be
 * read, is not JSON, or does not match `schema` (with the path of the first fault).
 */
export async function readCheckpointFile<T extends z.ZodType>(file: string, schema: T): Promise<z.infer<T>> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new CheckpointError(`${file}: ${(error as Error).message}`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new CheckpointError(formatZodIssues(parsed.error, { source: file, limit: 1 }));
  return parsed.data;
}
