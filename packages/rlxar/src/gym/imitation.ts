import { createRng, shuffle } from "@rubric/core";
import { RlxarInputError } from "../errors.js";
import type { PolicySftExample, TrainablePolicy } from "../policy/policy.js";
import type { Episode } from "../rollout/rollout.js";

export interface ImitationOptions {
  readonly epochs: number;
  /** Examples per `sft` step (default 64). */
  readonly batchSize?: number;
  /** Default 0.05, which suits the gym policy's few dozen weights. */
  readonly learningRate?: number;
  /** The order of each epoch's examples comes from `createRng(seed).fork("epoch-<e>")`. */
  readonly seed: number | string;
  /**
   * Keep only episodes with reward ≥ 1 and more than one step, as ARCO's π warm-up does. Default
   * false: behaviour cloning of every step, which is what hands a teacher's habits on.
   */
  readonly successfulOnly?: boolean;
}

export interface ImitationResult {
  /** Examples trained on (steps whose target the policy can express). */
  readonly examples: number;
  /** Steps left out because the policy cannot express their action. */
  readonly unlearnable: number;
  /** Each epoch's mean `sft` loss, before its steps. */
  readonly losses: readonly number[];
}

/**
 * Fine-tunes a policy on a teacher's episodes: every step's view with the action the teacher
 * wrote, in seeded random batches, `epochs` times.
 *
 * @example
 * const episodes = await rollout(arcoGym(), train, gymOracle(train), { temperature: 0, seed: 1 });
 * await imitate(policy, episodes, { epochs: 20, seed: "sft" });
 */
export async function imitate(
  policy: TrainablePolicy,
  episodes: readonly Episode[],
  options: ImitationOptions,
): Promise<ImitationResult> {
  const batchSize = options.batchSize ?? 64;
  const learningRate = options.learningRate ?? 0.05;
  if (!Number.isInteger(options.epochs) || options.epochs < 0)
    throw new RlxarInputError("options.epochs", `expected an integer ≥ 0, got ${options.epochs}`);
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new RlxarInputError("options.batchSize", `expected an integer ≥ 1, got ${batchSize}`);
  const kept = options.successfulOnly === true ? episodes.filter((e) => e.reward >= 1 && e.steps.length > 1) : episodes;
  const all: PolicySftExample[] = kept.flatMap((episode) =>
    episode.steps.map((step) => ({ view: step.view, text: step.transition.actionText })),
  );
  const examples = policy.learnable === undefined ? all : all.filter((example) => policy.learnable!(example));
  if (examples.length === 0) throw new RlxarInputError("episodes", "no step the policy can learn");
  const rng = createRng(options.seed);
  const losses: number[] = [];
  for (let epoch = 0; epoch < options.epochs; epoch++) {
    const order = shuffle(examples, rng.fork(`epoch-${epoch}`));
    let loss = 0;
    for (let start = 0; start < order.length; start += batchSize) {
      const batch = order.slice(start, start + batchSize);
      loss += (await policy.sft(batch, { learningRate })).loss * batch.length;
    }
    losses.push(loss / order.length);
  }
  return { examples: examples.length, unlearnable: all.length - examples.length, losses };
}
