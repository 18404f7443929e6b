/** Thrown before any verifier runs when a rubric's criteria cannot be verified with the registry at hand. */
export class VerificationSetupError extends Error {
  override readonly name = "VerificationSetupError";
  constructor(readonly problems: readonly { readonly criterionId: string; readonly problem: string }[]) {
    super(
      `cannot verify this rubric: ${problems.length} criterion problem(s):\n${problems.map((p) => `  ${p.criterionId}: ${p.problem}`).join("\n")}`,
    );
  }
}
