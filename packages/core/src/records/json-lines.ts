import type { z } from "zod";
import type { RubricIssue } from "../rubric/errors.js";

/** One record of a JSON-lines file, with the 1-based line it came from. */
export interface JsonLine<T> {
  readonly line: number;
  readonly value: T;
}

/**
 * Reads a JSON-lines text record by record against a zod schema, never stopping at the first
 * fault: blank lines are skipped, good lines come back with their line numbers, and every bad
 * one becomes an issue naming `source`, the line and the path inside the record (plus a
 * duplicate-id issue, naming the first line, when `idOf` is given). The caller decides whether
 * issues are fatal.
 *
 * @example
 * const { records, issues } = readJsonLines('{"id":"a","output":"x"}\n{"id":1}\n', Schema, { source: "outputs.jsonl", idOf: (r) => r.id });
 */
export function readJsonLines<S extends z.ZodType>(
  text: string,
  schema: S,
  options: { readonly source?: string; readonly idOf?: (record: z.output<S>) => string } = {},
): { records: JsonLine<z.output<S>>[]; issues: RubricIssue[] } {
  const records: JsonLine<z.output<S>>[] = [];
  const issues: RubricIssue[] = [];
  const firstLine = new Map<string, number>();
  const where = (line: number) => ({ line, source: options.source });
  text.split("\n").forEach((raw, index) => {
    if (raw.trim() === "") return;
    const line = index + 1;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      issues.push({ ...where(line), path: "(root)", message: `invalid JSON: ${(error as Error).message}` });
      return;
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues)
        issues.push({ ...where(line), path: issue.path.join(".") || "(root)", message: issue.message });
      return;
    }
    if (options.idOf) {
      const id = options.idOf(parsed.data);
      const first = firstLine.get(id);
      if (first !== undefined) {
        issues.push({
          ...where(line),
          path: "id",
          message: `duplicate id ${JSON.stringify(id)} (first on line ${first})`,
        });
        return;
      }
      firstLine.set(id, line);
    }
    records.push({ line, value: parsed.data });
  });
  return { records, issues };
}
