import { InputLineTooLongError } from "./errors.js";
import { readInputChunks } from "./chunks.js";
import type { InputFileOptions } from "./open.js";

/**
 * The most one line may hold. A line is held whole (it becomes one string, then one JSON value),
 * so without a bound one 600 MB line in an outputs file ended the run with a bare
 * `RangeError: Invalid string length` naming no line (issue 29 item 15).
 */
export const MAX_INPUT_LINE_BYTES = 64 * 2 ** 20;

/** Options of {@link readInputLines} and {@link boundedLines}. */
export interface InputLinesOptions {
  /** The most bytes one line may hold, its line end left out; {@link MAX_INPUT_LINE_BYTES} by default. */
  readonly maxLineBytes?: number;
}

const NEWLINE = 0x0a;

/** A whole line's bytes as text, its "\r" (of a "\r\n") dropped; refused when over the bound. */
function decode(parts: readonly Buffer[], length: number, bound: () => InputLineTooLongError, max: number): string {
  const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts, length);
  const end = bytes.at(-1) === 0x0d ? length - 1 : length;
  if (end > max) throw bound();
  return bytes.toString("utf8", 0, end);
}

/**
 * The lines of a stream of bytes, each without its line end (`\n` or `\r\n`), a final line without
 * one included when it is not empty. A line longer than `maxLineBytes` is an
 * {@link InputLineTooLongError} naming `source` and the line, raised as soon as the bound is
 * passed: nothing past the bound is held.
 *
 * @example
 * for await (const line of boundedLines(process.stdin, "standard input")) reader.push(line);
 */
export async function* boundedLines(
  chunks: AsyncIterable<Buffer | string>,
  source: string,
  options: InputLinesOptions = {},
): AsyncGenerator<string, void, undefined> {
  const maxLineBytes = options.maxLineBytes ?? MAX_INPUT_LINE_BYTES;
  let parts: Buffer[] = [];
  let held = 0;
  let line = 1;
  const tooLong = () => new InputLineTooLongError(source, line, maxLineBytes);
  for await (const given of chunks) {
    // UTF-8 never uses the byte 0x0a inside a character, so lines can be cut on bytes.
    const chunk = typeof given === "string" ? Buffer.from(given, "utf8") : given;
    let start = 0;
    for (;;) {
      const end = chunk.indexOf(NEWLINE, start);
      const piece = chunk.subarray(start, end === -1 ? chunk.length : end);
      if (end === -1) {
        // One byte of slack: it may be the "\r" of a "\r\n" that the next chunk completes.
        if (held + piece.length > maxLineBytes + 1) throw tooLong();
        if (piece.length > 0) {
          parts.push(piece);
          held += piece.length;
        }
        break;
      }
      parts.push(piece);
      yield decode(parts, held + piece.length, tooLong, maxLineBytes);
      parts = [];
      held = 0;
      line++;
      start = end + 1;
    }
  }
  if (held > 0) yield decode(parts, held, tooLong, maxLineBytes);
}

/**
 * The lines of an input file, read as they are needed, never the file whole: a regular file only
 * (checked before anything is read), each line bounded (see {@link boundedLines}).
 *
 * @example
 * const reader = jsonLinesReader(OutputSchema, { source: path, idOf: (o) => o.id });
 * for await (const line of readInputLines(path)) reader.push(line);
 */
export function readInputLines(
  path: string,
  options: InputFileOptions & InputLinesOptions = {},
): AsyncGenerator<string, void, undefined> {
  return boundedLines(readInputChunks(path, options), path, options);
}
