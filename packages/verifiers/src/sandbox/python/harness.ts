import { fileURLToPath } from "node:url";
import { z } from "zod";

/**
 * Bumped whenever harness.py changes what a rule sees or how its answer is read, so cached
 * verdicts computed by an older harness are not reused.
 */
export const PYTHON_HARNESS_VERSION = 3;

/**
 * Where `harness.py` is on disk. It is resolved next to the running module: in the source tree
 * that is `src/sandbox/python/harness.py`; in the published package it is `dist/harness.py`, which
 * the build must copy there (tsup bundles the TypeScript but does not copy data files).
 *
 * @example
 * const path = pythonHarnessPath(); // ".../src/sandbox/python/harness.py" or ".../dist/harness.py"
 */
export function pythonHarnessPath(): string {
  return fileURLToPath(new URL("./harness.py", import.meta.url));
}

/** One output file as the harness sees it: `path` is where it is mounted inside the sandbox. */
export interface HarnessFile {
  readonly id: string;
  readonly name: string;
  readonly path: string;
  readonly mime_type: string;
}

/** What the runner writes to the harness's stdin. */
export interface HarnessRequest {
  readonly code: string;
  readonly files: readonly HarnessFile[];
  readonly input: string;
  readonly output: string;
  readonly max_score: number;
  readonly limits: {
    readonly cpu_seconds: number;
    readonly memory_bytes: number;
    readonly file_size_bytes: number;
    readonly open_files: number;
    /** Tasks the interpreter may run (RLIMIT_NPROC, counted per user namespace), its main thread included. */
    readonly threads: number;
  };
}

/** The one JSON line the harness writes to stdout. */
export const HarnessResponseSchema = z.discriminatedUnion("ok", [
  z.strictObject({ ok: z.literal(true), score: z.number(), feedback: z.string().nullable() }),
  z.strictObject({
    ok: z.literal(false),
    kind: z.enum(["exception", "memory", "invalid-result"]),
    error_type: z.string(),
    message: z.string(),
    traceback: z.string().nullable(),
  }),
]);
export type HarnessResponse = z.output<typeof HarnessResponseSchema>;
