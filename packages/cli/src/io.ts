import { closeSync, createReadStream, existsSync, openSync, readSync, statSync } from "node:fs";
import { createInterface } from "node:readline";
import { join, resolve } from "node:path";
import { RubricError, jsonLinesReader, withoutBom, type JsonLinesOptions, type JsonLinesReader } from "@rubric/core";
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

/** A file the user named could not be read or parsed: exit code 1 with the file's name. */
export class InputFileError extends RubricError {
  override readonly name = "InputFileError";
  readonly code = "cli.input-file";
}

/**
 * The largest file read whole, as one string. Node cannot hold a string much over 512 MiB (a
 * larger read fails with a bare ERR_STRING_TOO_LONG); JSON-lines inputs that can grow that large
 * (`score --outputs`) are streamed instead, by {@link readJsonLinesFile}.
 */
export const MAX_WHOLE_FILE_BYTES = 256 * 1024 * 1024;

function cannotRead(path: string, error: unknown): InputFileError {
  const code = (error as NodeJS.ErrnoException).code;
  const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : (code ?? String(error));
  return new InputFileError(`${path}: cannot read (${why})`);
}

export function readText(path: string): string {
  let size: number;
  try {
    const info = statSync(path);
    if (info.isDirectory()) throw Object.assign(new Error("directory"), { code: "EISDIR" });
    size = info.size;
  } catch (error) {
    throw cannotRead(path, error);
  }
  if (size > MAX_WHOLE_FILE_BYTES)
    throw new InputFileError(
      `${path}: ${Math.ceil(size / 2 ** 20)} MiB is too large to read whole (the limit is ${MAX_WHOLE_FILE_BYTES / 2 ** 20} MiB); split it into smaller files`,
    );
  return withoutBom(readBounded(path).toString("utf8"));
}

/**
 * The file's bytes, never more than {@link MAX_WHOLE_FILE_BYTES}: a device or a pipe has no size
 * to check beforehand (`/dev/zero` has none, and reading it whole ran to many GB), so the bound
 * is kept while reading.
 */
function readBounded(path: string): Buffer {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    throw cannotRead(path, error);
  }
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    const chunk = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, chunk, 0, chunk.length, null);
      } catch (error) {
        throw cannotRead(path, error);
      }
      if (n === 0) return Buffer.concat(chunks, total);
      total += n;
      if (total > MAX_WHOLE_FILE_BYTES)
        throw new InputFileError(
          `${path}: gives more than ${MAX_WHOLE_FILE_BYTES / 2 ** 20} MiB, the most read whole; name a regular file of that size or less`,
        );
      chunks.push(Buffer.from(chunk.subarray(0, n)));
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * A JSON-lines file read line by line, never whole, against `schema`: records and
 * line-numbered issues as core's `readJsonLines` gives them, for a file of any size.
 */
export async function readJsonLinesFile<S extends z.ZodType>(
  path: string,
  schema: S,
  options: Omit<JsonLinesOptions<z.output<S>>, "source"> = {},
): Promise<ReturnType<JsonLinesReader<z.output<S>>["result"]>> {
  const reader = jsonLinesReader(schema, { ...options, source: path });
  try {
    if (statSync(path).isDirectory()) throw Object.assign(new Error("directory"), { code: "EISDIR" });
    const lines = createInterface({
      input: createReadStream(path, { encoding: "utf8" }),
      crlfDelay: Number.POSITIVE_INFINITY,
    });
    for await (const line of lines) reader.push(line);
  } catch (error) {
    throw cannotRead(path, error);
  }
  return reader.result();
}

export function readJson(path: string): unknown {
  const text = readText(path);
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
  const roots = [process.env["RUBRIC_SHARED_DIR"], resolve("../shared"), resolve("../../shared")];
  return roots
    .flatMap((root) => (root ? [join(root, "data", relative)] : []))
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
