import { RubricError } from "../errors/rubric-error.js";

/**
 * Thrown when a random-number helper gets an argument it cannot honour, e.g. a fractional seed
 * or `int(0)`. The message names the argument and the offending value.
 */
export class RandomInputError extends RubricError {
  override readonly name = "RandomInputError";
  readonly code = "random.input";
}
