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
 * `text` without a leading UTF-8 byte-order mark. Editors on Windows write one; `JSON.parse`
 * reads it as an unexpected token, so a file that looks fine would fail at line 1, column 1.
 *
 * @example
 * withoutBom("\uFEFF{}"); // "{}"
 */
export function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
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
  const reader = jsonLinesReader(schema, options);
  for (const raw of withoutBom(text).split("\n")) reader.push(raw);
  return reader.result();
}

/** {@link readJsonLines} a line at a time, for a file streamed rather than read whole. */
export interface JsonLinesReader<T> {
  /** The next line, without its newline. */
  push(raw: string): void;
  result(): { records: JsonLine<T>[]; issues: RubricIssue[] };
}

/**
 * The reader behind {@link readJsonLines}, fed one line at a time: the same records and issues,
 * for a caller streaming a file too large to hold as one string (Node's limit is ~512 MiB).
 * The first line may carry a byte-order mark; it is dropped.
 *
 * @example
 * const reader = jsonLinesReader(OutputSchema, { source: path, idOf: (o) => o.id });
 * for await (const line of createInterface({ input: createReadStream(path) })) reader.push(line);
 * const { records, issues } = reader.result();
 */
export function jsonLinesReader<S extends z.ZodType>(
  schema: S,
  options: JsonLinesOptions<z.output<S>> = {},
): JsonLinesReader<z.output<S>> {
  const records: JsonLine<z.output<S>>[] = [];
  const issues: RubricIssue[] = [];
  const firstLine = new Map<string, number>();
  const where = (line: number) => ({ line, source: options.source });
  let line = 0;
  return {
    push(given) {
      line++;
      const raw = line === 1 ? withoutBom(given) : given;
      if (raw.trim() === "") return;
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
    },
    result: () => ({ records, issues }),
  };
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
