import { randomBytes } from "node:crypto";
import {
  closeSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { RubricError } from "@rubric/core";

/**
 * How commands write their results: never over an earlier result unless `--force`, never half
 * a file (a temporary file beside the target, then a rename), and checked before the work
 * starts, so that a long run cannot end in "cannot write" with its results lost.
 */

/** A result that is already there (an earlier run's): replaced only with `--force`. Exit 1, naming the path. */
export class OutputExistsError extends RubricError {
  override readonly name = "OutputExistsError";
  readonly code = "cli.output-exists";
  constructor(
    readonly path: string,
    detail: string,
  ) {
    super(`${path}: ${detail}`);
  }
}

/** A place that cannot hold a result: a directory, a name of the wrong kind, no write permission. Exit 1. */
export class OutputUnwritableError extends RubricError {
  override readonly name = "OutputUnwritableError";
  readonly code = "cli.output-unwritable";
  constructor(
    readonly path: string,
    detail: string,
  ) {
    super(`${path}: ${detail}`);
  }
}

/** One file a command will write. */
export interface ResultFile {
  readonly path: string;
  /** How `--help` and error messages name it, e.g. "the Markdown card". */
  readonly what: string;
}

/**
 * Checks, before any work, that every result can be written: its directory exists or can be
 * made, it is not a directory itself, and (without `force`) it does not exist yet. Creates the
 * directories.
 */
export function prepareResultFiles(files: readonly ResultFile[], force: boolean): void {
  for (const file of files) {
    const dir = dirname(file.path);
    try {
      makeDirectories(dir);
    } catch (error) {
      throw new OutputUnwritableError(file.path, `cannot create its directory ${dir} (${errnoOf(error)})`);
    }
    const existing = statOrUndefined(file.path);
    if (existing?.isDirectory())
      throw new OutputUnwritableError(file.path, `is a directory; --out names the file for ${file.what}`);
    // A symbolic link counts as the name taken, dangling or not: the final write would find it
    // there after the whole run (a dangling one is invisible to stat).
    const link = lstatOrUndefined(file.path)?.isSymbolicLink() === true;
    if (link && existing === undefined && !force)
      throw new OutputExistsError(
        file.path,
        "is a dangling symbolic link; pass --force to replace the link, or choose another --out",
      );
    if (existing !== undefined && !force)
      throw new OutputExistsError(
        file.path,
        `already exists (${file.what}); pass --force to replace it, or choose another --out`,
      );
    // Probe that the directory takes a new file now, not after the run.
    const probe = temporaryPath(file.path);
    try {
      closeSync(openSync(probe, "wx"));
      rmSync(probe);
    } catch (error) {
      throw new OutputUnwritableError(file.path, `its directory ${dir} does not take new files (${errnoOf(error)})`);
    }
  }
}

/**
 * Writes `content` to `path` whole or not at all: to a temporary file in the same directory,
 * then moved into place. Without `force` the move refuses an existing file (a hard link, which
 * fails if the name is taken, unlike a rename), so two runs racing for one name cannot overwrite
 * each other.
 */
export function writeResultFile(path: string, content: string, force: boolean): void {
  const temporary = temporaryPath(path);
  try {
    writeFileSync(temporary, content, { flag: "wx" });
    if (force) renameSync(temporary, path);
    else {
      try {
        linkSync(temporary, path);
      } catch (error) {
        if (errnoOf(error) === "EEXIST")
          throw new OutputExistsError(
            path,
            "was created by someone else while this command ran; pass --force to replace it",
          );
        throw error;
      }
    }
  } catch (error) {
    if (error instanceof OutputExistsError) throw error;
    throw new OutputUnwritableError(path, `cannot be written (${errnoOf(error)})`);
  } finally {
    rmSync(temporary, { force: true });
  }
}

/**
 * A result named by `flag` that comes as two files: `out`, which must end in `extension`, and its
 * sibling with that extension swapped (`card.json` → `card.md`). A name without the extension is
 * refused rather than guessed at (`--out report.md` once gave `report.md` holding JSON and
 * `report.md.md` holding Markdown).
 *
 * @example
 * resultPair("runs/card.json", "--out", ".json", ".md"); // { main: "runs/card.json", sibling: "runs/card.md" }
 */
export function resultPair(
  out: string,
  flag: string,
  extension: string,
  siblingExtension: string,
): { readonly main: string; readonly sibling: string } {
  if (!out.toLowerCase().endsWith(extension) || basename(out).length === extension.length)
    throw new OutputUnwritableError(
      out,
      `${flag} must name a ${extension} file (its ${siblingExtension} twin is written beside it, with the same stem)`,
    );
  return { main: out, sibling: `${out.slice(0, out.length - extension.length)}${siblingExtension}` };
}

function temporaryPath(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
}

/**
 * `mkdir -p`, one level at a time from the deepest existing ancestor down. Node's recursive mkdir
 * never returns under a file system that answers ENOENT to every mkdir (`--out /proc/x` spun
 * forever); level by level, the first refusal is the answer.
 */
function makeDirectories(dir: string): void {
  const missing: string[] = [];
  for (let at = resolve(dir); statOrUndefined(at) === undefined; at = dirname(at)) {
    missing.push(at);
    if (dirname(at) === at) break;
  }
  for (const level of missing.reverse()) mkdirSync(level);
}

function lstatOrUndefined(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

function statOrUndefined(path: string) {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function errnoOf(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? String(error);
}
