import { RubricError } from "../errors/rubric-error.js";

/** Thrown when a verdict or weight refers to a criterion the rubric does not have, or is malformed. */
export class VerdictValidationError extends RubricError {
  override readonly name = "VerdictValidationError";
  readonly code = "score.verdict-validation";
}

/**
 * Thrown under `errorsAs: "fail"` (the default) when a criterion that the score depends on has
 * an `error` verdict or none at all. `partial` keeps what had been computed before the fault.
 */
export class CriterionErrorsError extends RubricError {
  override readonly name = "CriterionErrorsError";
  readonly code = "score.criterion-errors";
  constructor(
    message: string,
    /** The criteria at fault, with why. */
    readonly failures: readonly { readonly criterionId: string; readonly reason: string }[],
    /** Stage results already computed (staged rubrics), in order. */
    readonly partial: readonly unknown[] = [],
  ) {
    super(message);
  }
}

/** Thrown when nothing is left to score, e.g. every reward criterion was skipped or errored under `renormalize`. */
export class ScoringError extends RubricError {
  override readonly name = "ScoringError";
  readonly code = "score.scoring";
}
