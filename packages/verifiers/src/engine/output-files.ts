import { createHash } from "node:crypto";
import type { FileHandle } from "node:fs/promises";
import { realpath } from "node:fs/promises";
import { isAbsolute, relative, sep } from "node:path";
import { InputFileNotRegularError, InputFileUnreadableError, openInputFile } from "@rubric/core/files";
import { VerificationError } from "../errors.js";
import type { OutputFile } from "../verifier/verifier.js";

/**
 * An output names a file outside the directory its files may come from. The path is written by
 * whoever produced the outputs (in training, the policy's harness), so `/etc/shadow`, `../` and a
 * symlink pointing out are refused before anything reads or mounts the file.
 */
export class OutputFileOutsideRootError extends VerificationError {
  override readonly name = "OutputFileOutsideRootError";
  readonly code = "verification.output-file-outside-root";
  constructor(
    /** The path as the output gave it. */
    readonly path: string,
    /** The root it had to resolve under. */
    readonly root: string,
    /** Where it resolves to (symlinks followed), when it exists. */
    readonly resolved?: string,
  ) {
    super(
      `output file ${path}${resolved !== undefined && resolved !== path ? ` (resolves to ${resolved})` : ""} is outside the files root ${root}; only files under it are given to verifiers`,
    );
  }
}

/** An output names a file that cannot be resolved (missing, or a dangling link). */
export class OutputFileNotFoundError extends VerificationError {
  override readonly name = "OutputFileNotFoundError";
  readonly code = "verification.output-file-not-found";
  constructor(
    readonly path: string,
    cause: unknown,
  ) {
    super(`output file ${path} cannot be resolved: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
  }
}

/** An output's file exists but cannot be read as one: a directory, a device, no permission. */
export class OutputFileUnreadableError extends VerificationError {
  override readonly name = "OutputFileUnreadableError";
  readonly code = "verification.output-file-unreadable";
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`output file ${path} cannot be read: ${reason}`);
  }
}

/**
 * An output's file is larger than the operator's cap (`maxFileBytes`). Hashing it for the cache key
 * would take time in proportion to its size before any verifier ran (a sparse 20 GB file cost
 * 80 s, and a sparse file costs its author nothing), so it is refused by its size alone.
 */
export class OutputFileTooLargeError extends VerificationError {
  override readonly name = "OutputFileTooLargeError";
  readonly code = "verification.output-file-too-large";
  constructor(
    readonly path: string,
    /** Its size as the file system reports it (a sparse file's apparent size). */
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(
      `output file ${path} is ${bytes} bytes, above the ${maxBytes}-byte cap on output files (maxFileBytes); it was neither hashed nor given to a verifier`,
    );
  }
}

/** The default cap on one output file: 1 GiB, a few seconds of hashing. */
export const DEFAULT_MAX_OUTPUT_FILE_BYTES = 1024 ** 3;

// Path lookups that mean "there is no such file" rather than "it cannot be read".
const NOT_FOUND = new Set(["ENOENT", "ENOTDIR", "ELOOP"]);

/** Core's reader opened it, or said why not: in this module's errors, which name the output file. */
async function openOutputFile(path: string): Promise<{ handle: FileHandle; size: number }> {
  try {
    return await openInputFile(path);
  } catch (cause) {
    if (cause instanceof InputFileUnreadableError && NOT_FOUND.has(cause.systemCode ?? ""))
      throw new OutputFileNotFoundError(path, cause);
    if (cause instanceof InputFileNotRegularError) throw new OutputFileUnreadableError(path, `it is ${cause.kind}`);
    if (cause instanceof InputFileUnreadableError) throw new OutputFileUnreadableError(path, cause.reason);
    throw cause;
  }
}

/**
 * sha256 of a file's bytes, streamed. The file is opened once by core's reader (a regular file
 * only; a FIFO cannot block the open) and its size taken from that open file, so what is measured
 * is what is read.
 * @throws OutputFileNotFoundError when it is missing, OutputFileUnreadableError when it is not a
 * regular file or cannot be read, OutputFileTooLargeError when it is over `maxBytes` (before a
 * byte of it is read).
 */
export async function fileDigest(path: string, maxBytes: number = DEFAULT_MAX_OUTPUT_FILE_BYTES): Promise<string> {
  const { handle, size } = await openOutputFile(path);
  try {
    if (size > maxBytes) throw new OutputFileTooLargeError(path, size, maxBytes);
    const hash = createHash("sha256");
    let read = 0;
    try {
      // One byte past the cap is enough to see a file that grew after it was measured.
      for await (const chunk of handle.createReadStream({ start: 0, end: maxBytes, autoClose: false })) {
        read += (chunk as Buffer).length;
        hash.update(chunk as Buffer);
      }
    } catch (cause) {
      throw new OutputFileUnreadableError(path, (cause as NodeJS.ErrnoException).code ?? (cause as Error).message);
    }
    if (read > maxBytes) throw new OutputFileTooLargeError(path, read, maxBytes);
    return hash.digest("hex");
  } finally {
    await handle.close();
  }
}

/**
 * The output's files with every path resolved (`realpath`, symlinks included) and checked to lie
 * under `root` (itself resolved). The resolved paths are returned, so what is checked is what gets
 * read and mounted. @throws OutputFileOutsideRootError or OutputFileNotFoundError for the first bad file.
 *
 * @example
 * await confineOutputFiles([{ name: "r.csv", path: "/data/run/r.csv" }], "/data"); // ok
 * await confineOutputFiles([{ name: "s", path: "/data/../etc/shadow" }], "/data"); // throws OutputFileOutsideRootError
 */
export async function confineOutputFiles(files: readonly OutputFile[], root: string): Promise<OutputFile[]> {
  const realRoot = await realpath(root).catch((cause: unknown) => {
    throw new OutputFileNotFoundError(root, cause);
  });
  const confined: OutputFile[] = [];
  for (const file of files) {
    let resolved: string;
    try {
      resolved = await realpath(file.path);
    } catch (cause) {
      throw new OutputFileNotFoundError(file.path, cause);
    }
    if (!isUnder(resolved, realRoot)) throw new OutputFileOutsideRootError(file.path, root, resolved);
    confined.push({ ...file, path: resolved });
  }
  return confined;
}

// A prefix test would let `/data-evil` pass for `/data`; a relative path that climbs or is absolute (another drive) is outside.
function isUnder(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}
