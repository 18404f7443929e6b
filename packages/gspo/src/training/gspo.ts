import { createRng, drGrpoObjective, groupAdvantages, grpoObjective, gspoObjective, prioritizedReplay, type FlatRubric } from "@rubric/core";
import { simulatedStakeholder, type GymTask, type Worker } from "@rubric/autointeract";
import { createVerifierRegistry, scoreOutputs } from "@rubric/verifiers";
import { featurize, type Features } from "../policy/features.js";
import type { RubricAction, RubricPolicy } from "../policy/rubric-policy.js";
import { Adam } from "../policy/sft.js";

/** One task's dialogue as the policy sees it. */
export interface TrainingTask {
  readonly task: GymTask;
  readonly answers: readonly string[];
}

export interface GspoOptions {
  readonly seed: number;
  /** Rubrics sampled per task (the group). Default 8. */
  readonly groupSize?: number;
  /** Gradient steps per rollout batch; with more than one, the ratios really move off 1. Default 4. */
  readonly stepsPerBatch?: number;
  readonly learningRate?: number;
  /** Default 3e-4 / 4e-4 (the paper's); a tiny policy may need wider clipping to learn in few steps. */
  readonly epsLow?: number;
  readonly epsHigh?: number;
  /** GSPO (sequence ratio, the default), or GRPO / Dr.GRPO (token ratios) for comparison. */
  readonly objective?: Objective;
  /** Also replay the tasks whose return fell in this lowest percentile of the batch (0 = off). Default 20. */
  readonly replayPercentile?: number;
  /** λ_compute per criterion of a rubric (a rubric's verification cost). Default 0. */
  readonly costPerCriterion?: number;
  readonly worker: Worker;
}

export type Objective = "gspo" | "grpo" | "dr-grpo";

/**
 * The clipped policy-gradient objective by name, from @rubric/core. Dr.GRPO takes advantages
 * without the std normalisation (its point); the others group-normalise.
 */
export function policyObjective(objective: Objective, input: { logpNew: number[][]; logpOld: number[][]; rewards: readonly number[]; epsLow?: number; epsHigh?: number }) {
  const advantages = groupAdvantages(input.rewards, { normalize: objective === "dr-grpo" ? "none" : "std" });
  const eps = { ...(input.epsLow === undefined ? {} : { epsLow: input.epsLow }), ...(input.epsHigh === undefined ? {} : { epsHigh: input.epsHigh }) };
  const args = { logpNew: input.logpNew, logpOld: input.logpOld, advantages, ...eps };
  if (objective === "gspo") return gspoObjective(args);
  return objective === "grpo" ? grpoObjective(args) : drGrpoObjective(args);
}

interface Rollout {
  readonly x: Features;
  readonly actions: RubricAction[];
  readonly logpOld: number[];
  readonly reward: number;
  readonly task: TrainingTask;
}

const registry = createVerifierRegistry({ python: false, js: false });

/** U*(y) of the worker's output under a rubric, minus the rubric's cost: the reward of one rollout. */
export async function rubricReturn(task: GymTask, rubric: FlatRubric, worker: Worker, seed: number, stakeholderSeed: number, costPerCriterion = 0): Promise<number> {
  const [output] = await worker.produce(task, rubric, 1, { seed });
  const [scored] = await scoreOutputs(simulatedStakeholder(task, stakeholderSeed).utility, [{ id: "y", input: task.prompt, output: output!.text }], { registry });
  return scored!.score!.normalized - costPerCriterion * rubric.criteria.length;
}

/**
 * Stage II, one batch: K rubrics per task from π_old, the worker runs under each, rewards are the
 * stakeholder's true utility (minus costs), advantages are group-normalised, and the policy takes
 * `stepsPerBatch` Adam steps on the GSPO objective (sequence-level ratio, clipped; or GRPO /
 * Dr.GRPO) from @rubric/core — whose per-token gradient is chained into the policy's parameters. Tasks whose
 * return is in the lowest `replayPercentile` are replayed in the same update.
 */
export async function gspoBatch(policy: RubricPolicy, adam: Adam, tasks: readonly TrainingTask[], options: GspoOptions & { readonly batch: number; readonly stakeholderSeed: number }): Promise<{ meanReward: number; clippedFraction: number; loss: number }> {
  const K = options.groupSize ?? 8;
  const rng = createRng(options.seed).fork(`batch:${options.batch}`);
  const groups: Rollout[][] = [];
  for (const [t, task] of tasks.entries()) {
    const x = featurize(task.task, task.answers, policy.dim);
    const group: Rollout[] = [];
    for (let k = 0; k < K; k++) {
      const actions = policy.sample(x, rng);
      const rubric = policy.toRubric(actions, `${task.task.id}-gspo`);
      const reward = await rubricReturn(task.task, rubric, options.worker, options.seed * 1_000_003 + options.batch * 1009 + t * 31 + k, options.stakeholderSeed, options.costPerCriterion ?? 0);
      group.push({ x, actions, logpOld: policy.tokenLogProbs(x, actions), reward, task });
    }
    groups.push(group);
  }
  const replay = (options.replayPercentile ?? 20) > 0 ? prioritizedReplay(groups, options.replayPercentile ?? 20, (g) => g.reduce((s, r) => s + r.reward, 0) / g.length) : [];
  const trainingGroups = [...groups, ...replay];
  let clipped = 0;
  let loss = 0;
  for (let step = 0; step < (options.stepsPerBatch ?? 4); step++) {
    const gW = new Float64Array(policy.W.length);
    const gU = new Float64Array(policy.U.length);
    clipped = 0;
    loss = 0;
    for (const group of trainingGroups) {
      const result = policyObjective(options.objective ?? "gspo", {
        logpNew: group.map((r) => policy.tokenLogProbs(r.x, r.actions)),
        logpOld: group.map((r) => [...r.logpOld]),
        rewards: group.map((r) => r.reward),
        ...(options.epsLow === undefined ? {} : { epsLow: options.epsLow }),
        ...(options.epsHigh === undefined ? {} : { epsHigh: options.epsHigh }),
      });
      // Ascend −loss: each token's coefficient is −∂loss/∂logpNew, averaged over groups.
      group.forEach((r, k) => policy.accumulateGradient(r.x, r.actions, result.gradLogpNew[k]!.map((g) => -g / trainingGroups.length), gW, gU));
      clipped += result.clippedFraction / trainingGroups.length;
      loss += result.loss / trainingGroups.length;
    }
    adam.ascend([gW, gU]);
  }
  const rewards = groups.flat().map((r) => r.reward);
  return { meanReward: rewards.reduce((a, b) => a + b, 0) / rewards.length, clippedFraction: clipped, loss };
}

/** Expected return of the policy on tasks: the mean reward of `samples` sampled rubrics per task (seeded). */
export async function expectedReturn(policy: RubricPolicy, tasks: readonly TrainingTask[], options: { seed: number; samples: number; worker: Worker; stakeholderSeed: number }): Promise<number> {
  const rng = createRng(options.seed).fork("evaluate");
  let total = 0;
  for (const [t, task] of tasks.entries()) {
    const x = featurize(task.task, task.answers, policy.dim);
    for (let k = 0; k < options.samples; k++) {
      const rubric = policy.toRubric(policy.sample(x, rng), `${task.task.id}-eval`);
      total += await rubricReturn(task.task, rubric, options.worker, options.seed * 7919 + t * 31 + k, options.stakeholderSeed);
    }
  }
  return total / (tasks.length * options.samples);
}
