import { readFileSync } from "node:fs";

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
    throw new InputFileError(`${path}: cannot read (${code === "ENOENT" ? "no such file" : code ?? String(error)})`);
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
