import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ErrorPolicySchema, type ErrorPolicy } from "@rubric/core";

/** Where a command writes; injected so tests run commands in-process and read what they printed. */
export interface CliIO {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/** Usage mistakes (unknown flag, missing file argument): exit code 2, as most Unix tools do. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** A file the user named could not be read or parsed: exit code 1 with the file's name. */
export class InputFileError extends Error {
  override readonly name = "InputFileError";
}

export function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InputFileError(`${path}: cannot read (${code === "ENOENT" ? "no such file" : (code ?? String(error))})`);
  }
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
 * A numeric flag, or `fallback` when absent. @throws UsageError naming the flag and what it
 * expects (`expected`, e.g. "a number ≥ 0") when the value is empty or fails `check`.
 */
export function numberFlag(
  value: string | undefined,
  flag: string,
  fallback: number,
  check: (n: number) => boolean,
  expected: string,
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === "" || !check(n))
    throw new UsageError(`${flag} must be ${expected}, got ${JSON.stringify(value)}`);
  return n;
}

/** An integer flag ≥ `min`, or `fallback` when absent. @throws UsageError naming the flag. */
/**
 * The context window of every command that runs a llama-cpp model on GDPval prompts (elicit,
 * repro): those prompts, with a dialogue, run to several thousand tokens, beyond the 2048 that
 * llamaCpp defaults to for small uses.
 */
export const LLAMA_CPP_GDPVAL_CONTEXT = 8192;

export function integer(value: string | undefined, flag: string, fallback: number, min: number): number {
  return numberFlag(
    value,
    flag,
    fallback,
    (n) => Number.isInteger(n) && n >= min,
    min === 1 ? "a positive integer" : `an integer ≥ ${min}`,
  );
}

/** The GDPval data directory: the flag, else $RUBRIC_SHARED_DIR/data/gdpval, else ../shared beside the working directory. */
export function gdpvalDir(given: string | undefined): string {
  if (given) return given;
  const candidates = [
    process.env["RUBRIC_SHARED_DIR"] && join(process.env["RUBRIC_SHARED_DIR"], "data/gdpval"),
    resolve("../shared/data/gdpval"),
    resolve("../../shared/data/gdpval"),
  ];
  const found = candidates.find((c): c is string => typeof c === "string" && existsSync(join(c, "tasks.jsonl")));
  if (!found) throw new InputFileError("cannot find the GDPval data: pass --gdpval <dir> or set RUBRIC_SHARED_DIR");
  return found;
}

/**
 * `--errors-as`, validated by core's own `ErrorPolicySchema` (narrowed to `allowed` where a
 * command cannot honour every policy), or `fallback` when absent.
 */
export function errorPolicyFlag<P extends ErrorPolicy>(
  value: string | undefined,
  fallback: P,
  allowed: readonly P[] = ErrorPolicySchema.options as unknown as readonly P[],
  why = "",
): P {
  if (value === undefined) return fallback;
  const parsed = ErrorPolicySchema.safeParse(value);
  if (!parsed.success || !(allowed as readonly string[]).includes(parsed.data)) {
    throw new UsageError(`--errors-as must be one of ${allowed.join(", ")}, got ${JSON.stringify(value)}${why}`);
  }
  return parsed.data as P;
}
