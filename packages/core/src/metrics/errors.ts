import { RubricError } from "../errors/rubric-error.js";

/**
 * Thrown when a statistics function gets input it cannot give a meaningful answer for
 * (length mismatch, empty or constant input, NaN, out-of-range options). The message names
 * the argument and the offending value or index, e.g. `y[3] must be a finite number, got NaN`.
 */
export class StatisticsInputError extends RubricError {
  override readonly name = "StatisticsInputError";
  readonly code = "statistics.input";
}
