import { RubricError } from "@rubric/core";

/**
 * Every error `@rubric/gspo` throws as a class: a checkpoint that cannot be read back, a run asked
 * to stop, a token sequence the policy cannot produce, an argument out of range, an output
 * guidance cannot score. The sidecar client's failures are Effect tagged errors (they cannot
 * extend a class of ours); they carry `sidecar.*` codes instead.
 */
export abstract class TrainingError extends RubricError {
  abstract override readonly code:
    | `checkpoint.${string}`
    | `training.${string}`
    | `policy.${string}`
    | `guidance.${string}`;
}

/** A checkpoint that cannot be read back into this policy (missing, malformed, or another vocabulary). */
export class CheckpointError extends TrainingError {
  override readonly name = "CheckpointError";
  readonly code = "checkpoint.invalid";
}

/** A token sequence that the policy's grammar cannot produce. */
export class PolicySequenceError extends TrainingError {
  override readonly name = "PolicySequenceError";
  readonly code = "policy.sequence";
}

/** A policy's template without exactly one `{term}` slot: its written criteria could not be read back. */
export class PolicyTemplateError extends TrainingError {
  override readonly name = "PolicyTemplateError";
  readonly code = "policy.template";
}

/** An argument of a training loop or of the gym environment out of its range; the message names its path and value. */
export class TrainingInputError extends TrainingError {
  override readonly name = "TrainingInputError";
  readonly code = "training.input";
}

/** An argument of test-time guidance out of its range; the message names its path and value. */
export class GuidanceInputError extends TrainingError {
  override readonly name = "GuidanceInputError";
  readonly code = "guidance.input";
}

/** A candidate output guidance could not score (an error verdict): refused, rather than ranked as if it scored 0. */
export class GuidanceScoringError extends TrainingError {
  override readonly name = "GuidanceScoringError";
  readonly code = "guidance.scoring";
}
