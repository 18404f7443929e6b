import { createRng, type FlatRubric } from "@rubric/core";
import { createVerifierRegistry, scoreOutputs } from "@rubric/verifiers";
import { simulatedStakeholder } from "../roles/stakeholder/simulated-stakeholder.js";
import type { Worker } from "../roles/worker/worker.js";
import type { GymTask } from "./task.js";

export interface BestOfNResult {
  readonly taskId: string;
  /** U* of the output picked by the selector rubric (or at random without one). */
  readonly utility: number;
  /** U* of every candidate, in order. */
  readonly candidates: readonly number[];
  readonly picked: number;
}

// Rule verifiers only: the gym's criteria are all rules, and U* must come from the verifiers.
const registry = createVerifierRegistry({ python: false, js: false });

/**
 * One best-of-N trial in the gym: the worker writes N outputs (steered by `guide` if given), the
 * `selector` rubric scores them with the real verifiers and the best is kept (ties → the first;
 * no selector → a seeded random pick), and the stakeholder's true utility U* of the pick is the
 * return. U* is normalised to [0, 1].
 */
export async function bestOfN(
  task: GymTask,
  options: { seed: number; n: number; worker: Worker; guide?: FlatRubric; selector?: FlatRubric },
): Promise<BestOfNResult> {
  const stakeholder = simulatedStakeholder(task, options.seed);
  const outputs = await options.worker.produce(task, options.guide, options.n, { seed: options.seed });
  const candidates = outputs.map((o, i) => ({ id: String(i), input: task.prompt, output: o.text }));
  const truth = await scoreOutputs(stakeholder.utility, candidates, { registry });
  const utilities = truth.map((r) => r.score!.normalized);
  let picked: number;
  if (options.selector) {
    const proxy = (await scoreOutputs(options.selector, candidates, { registry })).map((r) => r.score!.normalized);
    picked = proxy.indexOf(Math.max(...proxy));
  } else picked = createRng(options.seed).fork(`pick:${task.id}`).int(options.n);
  return { taskId: task.id, utility: utilities[picked]!, candidates: utilities, picked };
}
