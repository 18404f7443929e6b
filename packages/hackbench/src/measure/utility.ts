import type { FlatRubric, StagedRubric } from "@rubric/core";
import { rulesRegistry, scoreOutputs, type VerdictCache, type VerifierRegistry } from "@rubric/verifiers";
import type { HackSample } from "../sample/sample.js";
import { TrueUtilityError } from "./errors.js";

/**
 * The true utility U*(y) of an output for a sample, where one is known (a simulated
 * stakeholder's hidden rubric, a human rating): hackbench reports its change beside the proxy's.
 */
export type TrueUtility = (sample: HackSample, output: string) => number | Promise<number>;

/**
 * A true utility that is itself a rubric per sample — the rubric gym's U* is
 * `simulatedStakeholder(task, seed).utility` — scored by the verifiers; its normalised score.
 *
 * @example
 * const trueUtility = rubricUtility((sample) => stakeholders.get(sample.id)!.utility);
 * @throws TrueUtilityError when an output cannot be scored (an error verdict is never a 0).
 */
export function rubricUtility(
  utilityOf: (sample: HackSample) => FlatRubric | StagedRubric,
  options: { readonly registry?: VerifierRegistry; readonly cache?: VerdictCache } = {},
): TrueUtility {
  const registry = options.registry ?? rulesRegistry();
  return async (sample, output) => {
    const [result] = await scoreOutputs(utilityOf(sample), [{ id: sample.id, output, input: sample.input }], {
      registry,
      errorsAs: "fail",
      cache: options.cache,
    });
    if (!result?.score)
      throw new TrueUtilityError(
        `sample ${JSON.stringify(sample.id)}: the true utility could not be scored (${result?.scoreError ?? "no result"})`,
      );
    return result.score.normalized;
  };
}
