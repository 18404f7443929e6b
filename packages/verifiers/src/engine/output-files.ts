import { createHash } from "node:crypto";
import { realpath } from "node:fs/promises";
import { isAbsolute, relative, sep } from "node:path";
import {
  InputFileNotRegularError,
  InputFileUnreadableError,
  isInputFileError,
  readInputChunks,
} from "@rubric/core/files";
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
 * sha256 of a file's bytes, streamed. @throws OutputFileNotFoundError when it is missing,
 * OutputFileUnreadableError when it is not a regular file or cannot be read.
 */
export async function fileDigest(path: string): Promise<string> {
  const hash = createHash("sha256");
  try {
    // Core's reader: what is opened is checked to be a regular file (a FIFO swapped in after a
    // stat() would otherwise hang the hash), and nothing is read before that check.
    for await (const chunk of readInputChunks(path)) hash.update(chunk);
  } catch (cause) {
    if (cause instanceof InputFileUnreadableError && cause.systemCode === "ENOENT")
      throw new OutputFileNotFoundError(path, cause);
    if (cause instanceof InputFileNotRegularError) throw new OutputFileUnreadableError(path, `it is ${cause.kind}`);
    if (isInputFileError(cause)) throw new OutputFileUnreadableError(path, cause.detail);
    throw cause;
  }
  return hash.digest("hex");
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
