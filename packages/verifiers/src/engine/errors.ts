import { VerificationError } from "../errors.js";

/** Thrown before any verifier runs when a rubric's criteria cannot be verified with the registry at hand. */
export class VerificationSetupError extends VerificationError {
  override readonly name = "VerificationSetupError";
  readonly code = "verification.setup";
  constructor(readonly problems: readonly { readonly criterionId: string; readonly problem: string }[]) {
    super(
      `cannot verify this rubric: ${problems.length} criterion problem(s):\n${problems.map((p) => `  ${p.criterionId}: ${p.problem}`).join("\n")}`,
    );
  }
}
