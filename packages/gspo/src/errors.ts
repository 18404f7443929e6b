import { RubricError } from "@rubric/core";

/**
 * Every error `@rubric/gspo` throws as a class: a checkpoint that cannot be read back, a run asked
 * to stop, a token sequence the policy cannot produce. The sidecar client's failures are Effect
 * tagged errors (they cannot extend a class of ours); they carry `sidecar.*` codes instead.
 */
export abstract class TrainingError extends RubricError {
  abstract override readonly code: `checkpoint.${string}` | `training.${string}` | `policy.${string}`;
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
