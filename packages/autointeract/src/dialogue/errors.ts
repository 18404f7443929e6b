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

/** An argument of an episode out of its range (a budget, a turn limit); the message names it and its value. */
export class DialogueInputError extends AutointeractError {
  override readonly name = "DialogueInputError";
  readonly code = "dialogue.input";
}

/** A manager policy file that does not read or does not have the policy's shape; the message names the file and field. */
export class ManagerPolicyFileError extends AutointeractError {
  override readonly name = "ManagerPolicyFileError";
  readonly code = "dialogue.policy-file";
}

/** An episode of an SFT corpus that ended in an error: the message names the task, `cause` is the episode's error. */
export class CorpusEpisodeError extends AutointeractError {
  override readonly name = "CorpusEpisodeError";
  readonly code = "dialogue.corpus-episode";
}

/** A role returned something that is not a valid move, answer or rubric. */
export class RoleOutputError extends AutointeractError {
  override readonly name = "RoleOutputError";
  readonly code = "dialogue.role-output";
}
