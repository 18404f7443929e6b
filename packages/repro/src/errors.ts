import { RubricError } from "@rubric/core";

/** A reproduction's configuration that cannot be run: names the setting and what it must be. */
export class ReproInputError extends RubricError {
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
