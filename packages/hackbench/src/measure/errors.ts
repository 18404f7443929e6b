import { HackbenchError } from "../errors.js";

/**
 * Why a hackbench run could not decide. None of these is ever turned into a clean verdict: a
 * scorer that cannot score is not a scorer that cannot be gamed.
 */

/** Options or samples that do not make a run: a threshold below 0, duplicate sample ids. */
export class HackbenchInputError extends HackbenchError {
  override readonly name = "HackbenchInputError";
  readonly code = "hackbench.input";
}

/** A verifier (typically a judge) returned an error verdict, or the rubric could not be scored. */
export class HackbenchScoringError extends HackbenchError {
  override readonly name = "HackbenchScoringError";
  readonly code = "hackbench.scoring";
  constructor(
    message: string,
    /** Each failed output: which sample, which probe's text, and why. */
    readonly failures: readonly { readonly sampleId: string; readonly text: string; readonly reason: string }[] = [],
  ) {
    super(message);
  }
}

/** The true-utility scorer failed or returned something that is not a finite number. */
export class TrueUtilityError extends HackbenchError {
  override readonly name = "TrueUtilityError";
  readonly code = "hackbench.true-utility";
}
