import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { RubricError, jsonLinesReader, type JsonLinesOptions, type JsonLinesReader } from "@rubric/core";
import {
  MAX_INPUT_FILE_BYTES,
  boundedLines,
  readInputLines,
  readInputText,
  readStandardInputText,
  type InputLinesOptions,
} from "@rubric/core/files";
import type { z } from "zod";
import {
  findGdpvalTask,
  GdpvalTaskAmbiguousError,
  GdpvalTaskNotFoundError,
  type GdpvalTask,
} from "@rubric/autointeract";

/** Where a command writes; injected so tests run commands in-process and read what they printed. */
export interface CliIO {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/** Usage mistakes (unknown flag, a flag's value rejected, missing file argument): exit code 2, as most Unix tools do. */
export class UsageError extends RubricError {
  override readonly name = "UsageError";
  readonly code = "cli.usage";
}

/**
 * A file the user named was read but is not what the command reads (invalid JSON, no outputs, …):
 * exit code 1 with the file's name. A file that cannot be read at all is one of core's `file.*`
 * errors (`@rubric/core/files`).
 */
export class InputFileError extends RubricError {
  override readonly name = "InputFileError";
  readonly code = "cli.input-file";
}

/** The most read whole; core's bound (`MAX_INPUT_FILE_BYTES` of `@rubric/core/files`), by its older name. */
export const MAX_WHOLE_FILE_BYTES = MAX_INPUT_FILE_BYTES;

/**
 * The names of standard input among input files. `-` is the usual one; `/dev/stdin` is taken the
 * same way on purpose, because it is what people type and from a pipe it is a FIFO, which the
 * file reader refuses (a FIFO in a run directory hung `report`, issue 29 items 14 and 18).
 * Standard input is read once; a second input naming it reads nothing.
 */
const STANDARD_INPUT = new Set(["-", "/dev/stdin"]);

/** What to do instead, at the end of "is a FIFO, not a regular file" for a file named on the command line. */
const NOT_REGULAR_HINT = "name a regular file, or - to read standard input";

/**
 * A file named on the command line, as text: a regular file of at most 256 MiB (a link the user
 * made is followed), or standard input for `-` / `/dev/stdin`. Anything else is a named error of
 * core's (`file.*`): a FIFO, a device or a directory is refused before anything is read.
 */
export function readText(path: string): string {
  if (STANDARD_INPUT.has(path)) return readStandardInputText({ label: path });
  return readInputText(path, { notRegularHint: NOT_REGULAR_HINT });
}

/**
 * A file found inside a directory the user named (a run directory): as {@link readText}, but a
 * symbolic link is refused, since it could stand for any file of this machine (issue 29 item 2).
 */
export function readTextInside(path: string): string {
  return readInputText(path, { symlinks: "refuse" });
}

/**
 * A JSON-lines file read line by line, never whole, against `schema`: records and
 * line-numbered issues as core's `readJsonLines` gives them, for a file of any size. A line longer
 * than `maxLineBytes` (64 MiB by default) is an `InputLineTooLongError` naming the file and line.
 */
export async function readJsonLinesFile<S extends z.ZodType>(
  path: string,
  schema: S,
  options: Omit<JsonLinesOptions<z.output<S>>, "source"> & InputLinesOptions = {},
): Promise<ReturnType<JsonLinesReader<z.output<S>>["result"]>> {
  const { maxLineBytes, ...readerOptions } = options;
  const reader = jsonLinesReader(schema, { ...readerOptions, source: path });
  const lines = STANDARD_INPUT.has(path)
    ? boundedLines(process.stdin, path, { maxLineBytes })
    : readInputLines(path, { maxLineBytes, notRegularHint: NOT_REGULAR_HINT });
  for await (const line of lines) reader.push(line);
  return reader.result();
}

/** {@link readText} parsed as JSON; text that is not JSON is an {@link InputFileError} naming the file. */
export function readJson(path: string, read: (path: string) => string = readText): unknown {
  const text = read(path);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InputFileError(`${path}: invalid JSON: ${(error as Error).message}`);
  }
}

/**
 * The context window of every command that runs a llama-cpp model on GDPval prompts (elicit,
 * repro): those prompts, with a dialogue, run to several thousand tokens, beyond the 2048 that
 * llamaCpp defaults to for small uses.
 */
export const LLAMA_CPP_GDPVAL_CONTEXT = 8192;

/**
 * `data/<relative>` of the project's shared data: under $RUBRIC_SHARED_DIR, else ../shared or
 * ../../shared beside the working directory; the first where `probe` inside it (the path itself
 * by default) exists, or undefined.
 */
export function findSharedData(relative: string, probe = ""): string | undefined {
  return findShared("data", relative, probe);
}

/** `relative` under the shared directory's `folder` (`data` or `models`), found as `findSharedData` finds data. */
export function findShared(folder: "data" | "models", relative: string, probe = ""): string | undefined {
  const roots = [process.env["RUBRIC_SHARED_DIR"], resolve("../shared"), resolve("../../shared")];
  return roots
    .flatMap((root) => (root ? [join(root, folder, relative)] : []))
    .find((path) => existsSync(join(path, probe)));
}

/** The GDPval data directory: the flag, else `gdpval` of the shared data (see `findSharedData`). */
export function gdpvalDir(given: string | undefined): string {
  if (given) return given;
  const found = findSharedData("gdpval", "tasks.jsonl");
  if (!found) throw new InputFileError("cannot find the GDPval data: pass --gdpval <dir> or set RUBRIC_SHARED_DIR");
  return found;
}

/**
 * A GDPval task named on the command line by `flag` (a whole id or a unique prefix): no match is an
 * input error, an ambiguous prefix a usage error naming the candidates, both in flag terms.
 */
export function gdpvalTaskFlag<T extends GdpvalTask | { readonly task: GdpvalTask }>(
  tasks: readonly T[],
  wanted: string,
  flag: string,
  pool?: string,
): T {
  try {
    return findGdpvalTask(tasks, wanted, pool === undefined ? {} : { pool });
  } catch (error) {
    if (error instanceof GdpvalTaskNotFoundError)
      throw new InputFileError(
        `${flag}: no GDPval ${pool === undefined ? "" : `${pool} `}task ${JSON.stringify(wanted)}`,
      );
    if (error instanceof GdpvalTaskAmbiguousError) {
      const { candidates } = error;
      throw new UsageError(
        `${flag} ${JSON.stringify(wanted)} is a prefix of ${candidates.length} task ids (${candidates.slice(0, 5).join(", ")}${candidates.length > 5 ? ", …" : ""}); give more of it`,
      );
    }
    throw error;
  }
}
