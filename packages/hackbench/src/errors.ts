import { RubricError } from "@rubric/core";

/**
 * Every error `@rubric/hackbench` throws: a samples file, options or a card that do not make a run,
 * an unknown probe, a judge request or biased-judge configuration it cannot use, a scorer that
 * could not score. The CLI's `hackbench` turns every one of them into exit 2 (could not tell).
 */
export abstract class HackbenchError extends RubricError {
  abstract override readonly code: `hackbench.${string}`;
}
