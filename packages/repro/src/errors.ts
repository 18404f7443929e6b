import { RubricError } from "@rubric/core";

/**
 * Every error `@rubric/repro` throws of its own (a reproduction otherwise reports its libraries'
 * errors). Callers branch on `code` or on `instanceof`.
 */
export abstract class ReproError extends RubricError {
  abstract override readonly code: `repro.${string}`;
}

/** A reproduction's configuration that cannot be run: names the setting and what it must be. */
export class ReproInputError extends ReproError {
  override readonly name = "ReproInputError";
  readonly code = "repro.input";
  constructor(
    /** The setting at fault, e.g. `budget` or `hops[1]`. */
    readonly path: string,
    detail: string,
  ) {
    super(`${path}: ${detail}`);
  }
}
