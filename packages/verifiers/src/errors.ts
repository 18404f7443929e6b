import { RubricError } from "@rubric/core";

/**
 * Every error `@rubric/verifiers` throws as a class: a rubric that cannot be verified with the
 * registry at hand, a registry asked to hold two verifiers of one kind, a judge's unreadable reply,
 * limits a sandbox cannot honour. The sandboxes' own failures are Effect tagged errors (they cannot
 * extend a class of ours); they carry `sandbox.*` codes from `SANDBOX_ERROR_CODES` instead.
 */
export abstract class VerificationError extends RubricError {
  abstract override readonly code: `verification.${string}` | `sandbox.${string}`;
}

/**
 * An option of a verifier, the engine or a sandbox out of its range (a concurrency of 0, a judge
 * asked for 0 samples, a default above its own maximum): a caller's configuration mistake, thrown
 * when the option is given, before anything runs. The message names the option and its value.
 */
export class VerifierOptionsError extends VerificationError {
  override readonly name = "VerifierOptionsError";
  readonly code = "verification.options";
}
