import type { z } from "zod";
import type { RubricIssue } from "../rubric/errors.js";
import { jsonSyntaxIssue } from "../rubric/json-syntax.js";
import { formatZodPath } from "./zod-issues.js";

/** One record of a JSON-lines file, with the 1-based line it came from. */
export interface JsonLine<T> {
  readonly line: number;
  readonly value: T;
}

/** Options of `readJsonLines`. */
export interface JsonLinesOptions<T> {
  /** The file or label the text came from, repeated in every issue. */
  readonly source?: string;
  /** A record's id; when given, a repeated id is an issue naming the line it first appeared on. */
  readonly idOf?: (record: T) => string;
  /** Where the id lives in a record, for the duplicate-id issue's path; `id` by default. */
  readonly idPath?: string;
}

/**
 * Reads a JSON-lines text record by record against a zod schema, never stopping at the first
 * fault: blank lines are skipped, good lines come back with their line numbers, and every bad
 * one becomes an issue naming `source`, the line and the path inside the record (`a.b[2].c`;
 * `(root)` for a line that is not JSON, with the column where it goes wrong), plus a
 * duplicate-id issue, naming the first line, when `idOf` is given. The caller decides whether
 * issues are fatal: `formatRubricIssue` writes one as `outputs.jsonl:line 2: id: …`.
 *
 * @example
 * const { records, issues } = readJsonLines('{"id":"a","output":"x"}\n{"id":1}\n', Schema, { source: "outputs.jsonl", idOf: (r) => r.id });
 * if (issues.length > 0) throw new MyFileError(issues.map(formatRubricIssue).join("\n"));
 */
export function readJsonLines<S extends z.ZodType>(
  text: string,
  schema: S,
  options: JsonLinesOptions<z.output<S>> = {},
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
      issues.push(jsonSyntaxIssue(raw, error, where(line)));
      return;
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues)
        issues.push({ ...where(line), path: formatZodPath(issue.path), message: issue.message });
      return;
    }
    if (options.idOf) {
      const id = options.idOf(parsed.data);
      const first = firstLine.get(id);
      if (first !== undefined) {
        issues.push({
          ...where(line),
          path: options.idPath ?? "id",
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

/**
 * Writes records as JSON lines: one `JSON.stringify` per record, each line ending in a newline
 * (the last one too, so that appending a record is appending its text); no records is the
 * empty text. `readJsonLines` reads it back.
 *
 * @example
 * toJsonLines([{ id: "a" }, { id: "b" }]); // '{"id":"a"}\n{"id":"b"}\n'
 * appendFileSync(path, toJsonLines([turn])); // one more line
 */
export function toJsonLines(records: readonly unknown[]): string {
  let text = "";
  for (const record of records) text += `${JSON.stringify(record)}\n`;
  return text;
}
