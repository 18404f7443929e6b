import { closeSync, readSync } from "node:fs";
import { withoutBom } from "../records/json-lines.js";
import { InputFileTooLargeError } from "./errors.js";
import { type InputFileOptions, openInputFileSync, unreadableError } from "./open.js";

/**
 * The most read whole, as one string: Node cannot hold a string much over 512 MiB (a larger read
 * failed with a bare ERR_STRING_TOO_LONG), and a file is parsed after it is read, which takes
 * more again. Files that can grow past it (`score --outputs`) are read line by line.
 */
export const MAX_INPUT_FILE_BYTES = 256 * 2 ** 20;

/** Options of {@link readInputFile} and {@link readInputText}. */
export interface ReadInputOptions extends InputFileOptions {
  /** The most bytes read; {@link MAX_INPUT_FILE_BYTES} by default. */
  readonly maxBytes?: number;
}

/**
 * The bytes of `fd`, never more than `maxBytes`: the bound is kept while reading, because a file
 * can grow between fstat() and the last read, and standard input has no size to check first.
 */
function readBounded(fd: number, label: string, maxBytes: number): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  const chunk = Buffer.allocUnsafe(Math.min(1 << 20, maxBytes + 1));
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, chunk, 0, chunk.length, null);
    } catch (error) {
      // A non-blocking descriptor with nothing to read yet (standard input from a slow writer):
      // wait a little and read again, rather than take "try again" for an error.
      if ((error as NodeJS.ErrnoException).code === "EAGAIN") {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
        continue;
      }
      throw unreadableError(label, error);
    }
    if (n === 0) return Buffer.concat(chunks, total);
    total += n;
    if (total > maxBytes) throw new InputFileTooLargeError(label, undefined, maxBytes);
    chunks.push(Buffer.from(chunk.subarray(0, n)));
  }
}

/**
 * The bytes of an input file: a regular file only (a FIFO, a device or a directory is refused
 * before anything is read), of at most `maxBytes`, and not a symbolic link when links are refused.
 *
 * @example
 * const graph = readInputFile("models/mu/v0003/score.onnx", { symlinks: "refuse", maxBytes: 2 ** 31 });
 */
export function readInputFile(path: string, options: ReadInputOptions = {}): Buffer {
  const maxBytes = options.maxBytes ?? MAX_INPUT_FILE_BYTES;
  const { fd, size } = openInputFileSync(path, options);
  try {
    if (size > maxBytes) throw new InputFileTooLargeError(path, size, maxBytes);
    return readBounded(fd, path, maxBytes);
  } finally {
    closeSync(fd);
  }
}

/**
 * {@link readInputFile} as UTF-8 text, without a leading byte-order mark. Every command and
 * library that reads a file a user names reads it through this (or {@link readInputLines}).
 *
 * @example
 * const rubric = parseRubric(JSON.parse(readInputText("rubric.json")), { source: "rubric.json" });
 * const table = readInputText(join(runDir, "table.json"), { symlinks: "refuse" });
 */
export function readInputText(path: string, options: ReadInputOptions = {}): string {
  return withoutBom(readInputFile(path, options).toString("utf8"));
}

/**
 * Standard input as UTF-8 text, whatever it is (a pipe, a file, a terminal), of at most
 * `maxBytes`: for a command told to read `-`. `label` names it in errors.
 *
 * @example
 * const text = readStandardInputText({ label: "--rubric -" });
 */
export function readStandardInputText(options: { readonly label?: string; readonly maxBytes?: number } = {}): string {
  return withoutBom(
    readBounded(0, options.label ?? "standard input", options.maxBytes ?? MAX_INPUT_FILE_BYTES).toString("utf8"),
  );
}
