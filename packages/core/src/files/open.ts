import { type BigIntStats, closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { InputFileNotRegularError, InputFileSymlinkError, InputFileUnreadableError } from "./errors.js";

/** How an input file is opened. */
export interface InputFileOptions {
  /**
   * `"refuse"` for a file found inside a directory the user named (a run directory): a link there
   * could stand for any file of this machine (`/proc/self/environ`, `/etc/passwd`). `"follow"`
   * (the default) for a path the user named themselves, whose own link is theirs to make.
   */
  readonly symlinks?: "follow" | "refuse";
  /** The end of the "not a regular file" message: what to do instead. */
  readonly notRegularHint?: string;
}

// O_NONBLOCK: opening a FIFO for reading blocks until a writer comes, before any check could run;
// non-blocking, open() returns at once and fstat() says what was opened. It changes nothing for a
// regular file. O_NOFOLLOW closes the gap between lstat() and open() when links are refused.
// Neither exists on Windows (0 there: the lstat/fstat checks still hold).
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;

function flagsOf(options: InputFileOptions): number {
  return constants.O_RDONLY | O_NONBLOCK | (options.symlinks === "refuse" ? O_NOFOLLOW : 0);
}

// Every stat here is a bigint stat, on purpose. Node 20's realpathSync, which the ES module loader
// runs on every import, reads the file type of the last *number* stat made anywhere in the process
// from one shared array when its cache answers; after a number stat of a FIFO (`/dev/stdin` from
// a pipe) it stops resolving links, and the next `import()` under pnpm's symlinked node_modules
// failed with ERR_MODULE_NOT_FOUND (issue 29 item 18). Bigint stats fill a separate array.

/** What a non-regular file is, in words. */
function kindOf(info: BigIntStats): string {
  if (info.isDirectory()) return "a directory";
  if (info.isFIFO()) return "a FIFO (named pipe)";
  if (info.isCharacterDevice()) return "a character device";
  if (info.isBlockDevice()) return "a block device";
  if (info.isSocket()) return "a socket";
  return "not a regular file";
}

function refuseLink(path: string): void {
  let info: BigIntStats | undefined;
  try {
    info = lstatSync(path, { bigint: true, throwIfNoEntry: false });
  } catch (error) {
    throw unreadable(path, error);
  }
  if (info === undefined) throw new InputFileUnreadableError(path, "no such file", "ENOENT");
  if (info.isSymbolicLink()) throw symlinkError(path);
}

function symlinkError(path: string): InputFileSymlinkError {
  let target: string | undefined;
  try {
    target = readlinkSync(path);
  } catch {
    target = undefined;
  }
  return new InputFileSymlinkError(path, target);
}

function unreadable(path: string, error: unknown): InputFileUnreadableError {
  const code = (error as NodeJS.ErrnoException).code;
  const reason =
    code === "ENOENT"
      ? "no such file"
      : code === "EACCES" || code === "EPERM"
        ? "permission denied"
        : code === "ENOTDIR"
          ? "a part of the path is not a directory"
          : code === "ELOOP"
            ? "too many levels of symbolic links"
            : (code ?? String(error));
  return new InputFileUnreadableError(path, reason, code);
}

/** The error for a failed open(): a link refused by O_NOFOLLOW, a socket (ENXIO), or the system's reason. */
function openError(path: string, error: unknown, options: InputFileOptions): Error {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ELOOP" && options.symlinks === "refuse") return symlinkError(path);
  if (code === "ENXIO") return new InputFileNotRegularError(path, "a socket", options.notRegularHint);
  return unreadable(path, error);
}

function checkRegular(path: string, info: BigIntStats, options: InputFileOptions): void {
  if (!info.isFile()) throw new InputFileNotRegularError(path, kindOf(info), options.notRegularHint);
}

/**
 * Opens `path` for reading if it is a regular file (and not a link, when links are refused):
 * its descriptor and its size. Nothing that is not a regular file is ever read, so a FIFO, a
 * device or a directory is refused at once, by name.
 */
export function openInputFileSync(path: string, options: InputFileOptions = {}): { fd: number; size: number } {
  if (options.symlinks === "refuse") refuseLink(path);
  let fd: number;
  try {
    fd = openSync(path, flagsOf(options));
  } catch (error) {
    throw openError(path, error, options);
  }
  try {
    const info = fstatSync(fd, { bigint: true });
    checkRegular(path, info, options);
    return { fd, size: Number(info.size) };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** {@link openInputFileSync} for a file read asynchronously (streamed). */
export async function openInputFile(
  path: string,
  options: InputFileOptions = {},
): Promise<{ handle: FileHandle; size: number }> {
  if (options.symlinks === "refuse") refuseLink(path);
  let handle: FileHandle;
  try {
    handle = await open(path, flagsOf(options));
  } catch (error) {
    throw openError(path, error, options);
  }
  try {
    const info = await handle.stat({ bigint: true });
    checkRegular(path, info, options);
    return { handle, size: Number(info.size) };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

export { unreadable as unreadableError };
