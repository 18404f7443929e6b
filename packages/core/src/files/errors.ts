import { RubricError } from "../errors/rubric-error.js";

/**
 * The faults of reading an input file, one class each, every one naming the file (and the line,
 * for a line too long) in its message and as a field. Callers branch on `code` (`file.*`); a
 * library that reports the file under its own error (a model directory's `ModelCorruptError`)
 * takes `detail`, the fault without the path.
 */
export abstract class InputFileFault extends RubricError {
  constructor(
    readonly path: string,
    /** What is wrong, without the path: "is a FIFO (named pipe), not a regular file; …". */
    readonly detail: string,
    where = path,
  ) {
    super(`${where}: ${detail}`);
  }
}

/** Not a regular file: a directory, a FIFO, a device (`/dev/zero`), a socket. */
export class InputFileNotRegularError extends InputFileFault {
  override readonly name = "InputFileNotRegularError";
  readonly code = "file.not-regular";
  constructor(
    path: string,
    /** What it is instead: "a directory", "a FIFO (named pipe)", "a character device", … */
    readonly kind: string,
    hint = "name a regular file",
  ) {
    super(path, `is ${kind}, not a regular file; ${hint}`);
  }
}

/** A symbolic link where links are refused (a file found inside a directory the user named). */
export class InputFileSymlinkError extends InputFileFault {
  override readonly name = "InputFileSymlinkError";
  readonly code = "file.symlink";
  constructor(
    path: string,
    /** Where the link points, when it could be read. */
    readonly target: string | undefined,
  ) {
    super(
      path,
      `is a symbolic link${target === undefined ? "" : ` (to ${target})`}; links are not followed inside a directory the toolkit reads, so that its files cannot stand for other files of this machine`,
    );
  }
}

/** Larger than the most that is read whole. */
export class InputFileTooLargeError extends InputFileFault {
  override readonly name = "InputFileTooLargeError";
  readonly code = "file.too-large";
  constructor(
    path: string,
    /** Its size, when known beforehand; undefined when it grew past the bound while being read. */
    readonly size: number | undefined,
    readonly maxBytes: number,
  ) {
    super(
      path,
      size === undefined
        ? `gives more than ${formatBytes(maxBytes)}, the most read whole; name a regular file of that size or less`
        : `${formatBytes(size, true)} is too large to read whole (the limit is ${formatBytes(maxBytes)}); split it into smaller files`,
    );
  }
}

/** One line longer than the most a line may hold (a line is held whole, as one string). */
export class InputLineTooLongError extends InputFileFault {
  override readonly name = "InputLineTooLongError";
  readonly code = "file.line-too-long";
  constructor(
    path: string,
    /** 1-based. */
    readonly line: number,
    readonly maxLineBytes: number,
  ) {
    super(
      path,
      `longer than ${formatBytes(maxLineBytes)}, the most one line may hold; nothing was read past it`,
      `${path}:line ${line}`,
    );
  }
}

/** The system refused to open or read it (no such file, permission denied, …). */
export class InputFileUnreadableError extends InputFileFault {
  override readonly name = "InputFileUnreadableError";
  readonly code = "file.unreadable";
  constructor(
    path: string,
    /** Why, in words ("no such file", "permission denied") or the system's code. */
    readonly reason: string,
    /** The system's error code (`ENOENT`, `EACCES`), when the system gave one. */
    readonly systemCode?: string,
  ) {
    super(path, `cannot read (${reason})`);
  }
}

/** `256 MiB`, `64 KiB`, `100 bytes`; `roundUp` writes a size just over a bound as the next MiB (257 MiB). */
export function formatBytes(bytes: number, roundUp = false): string {
  const MiB = 2 ** 20;
  if (bytes >= MiB && (roundUp || bytes % MiB === 0)) return `${Math.ceil(bytes / MiB)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * Whether `error` is one of the faults of reading an input file (`file.*`), by shape like
 * `isRubricError`, so that one from a second copy of core counts too.
 *
 * @example
 * catch (error) { if (isInputFileError(error)) throw new ModelCorruptError(dir, file, error.detail); throw error; }
 */
export function isInputFileError(error: unknown): error is InputFileFault & { readonly code: `file.${string}` } {
  if (!(error instanceof Error)) return false;
  const { code, path, detail } = error as { code?: unknown; path?: unknown; detail?: unknown };
  return typeof code === "string" && code.startsWith("file.") && typeof path === "string" && typeof detail === "string";
}
