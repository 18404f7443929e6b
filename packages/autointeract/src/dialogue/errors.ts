import { AutointeractError } from "../errors.js";

/** The manager asked more questions than the budget allows. */
export class QuestionBudgetExceededError extends AutointeractError {
  override readonly name = "QuestionBudgetExceededError";
  readonly code = "dialogue.question-budget";
}

/** The episode ran out of turns before the manager submitted a rubric. */
export class TurnLimitError extends AutointeractError {
  override readonly name = "TurnLimitError";
  readonly code = "dialogue.turn-limit";
}

/** A role did not answer within its time limit. */
export class RoleTimeoutError extends AutointeractError {
  override readonly name = "RoleTimeoutError";
  readonly code = "dialogue.role-timeout";
}

/** A role returned something that is not a valid move, answer or rubric. */
export class RoleOutputError extends AutointeractError {
  override readonly name = "RoleOutputError";
  readonly code = "dialogue.role-output";
}
