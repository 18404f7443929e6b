/** The manager asked more questions than the budget allows. */
export class QuestionBudgetExceededError extends Error {
  override readonly name = "QuestionBudgetExceededError";
}

/** The episode ran out of turns before the manager submitted a rubric. */
export class TurnLimitError extends Error {
  override readonly name = "TurnLimitError";
}

/** A role did not answer within its time limit. */
export class RoleTimeoutError extends Error {
  override readonly name = "RoleTimeoutError";
}

/** A role returned something that is not a valid move, answer or rubric. */
export class RoleOutputError extends Error {
  override readonly name = "RoleOutputError";
}
