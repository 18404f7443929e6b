import { formatRubricIssue, readJsonLines } from "@rubric/core";
import type { z } from "zod";
import { ArcoFileError } from "../errors.js";

/**
 * Every record of a JSON-lines file this package writes (traces, μ-SFT examples), read through
 * core's `readJsonLines`: one `ArcoFileError` listing every bad line, numbered, and any repeated
 * id, rather than a stop at the first fault.
 */
export function readRecords<S extends z.ZodType>(
  text: string,
  schema: S,
  source: string,
  idOf: (record: z.output<S>) => string,
): z.output<S>[] {
  const { records, issues } = readJsonLines(text, schema, { source, idOf });
  if (issues.length > 0) {
    // The source leads the error's message once; each problem keeps its line and path.
    throw new ArcoFileError(
      source,
      issues.map((issue) => formatRubricIssue({ ...issue, source: undefined })),
    );
  }
  return records.map((record) => record.value);
}
