import type { StepCritic, StepRating } from "../critic/step-critic.js";
import { frozenCritic } from "../critic/teacher-critic.js";
import type { Environment } from "../environment/environment.js";
import { RlxarInputError } from "../errors.js";
import type { Policy } from "../policy/policy.js";
import { trueStepAdvantages } from "./true-advantage.js";

/** Options of {@link trueAdvantageCritic}. */
export interface TrueAdvantageCriticOptions<Task> {
  /** The tasks the trainer rolls out on, looked up by the environment's task id. */
  readonly tasks: readonly Task[];
  /** Continuations per Q and per V estimate (default 8). */
  readonly rollouts?: number;
  /** The continuations' temperature: the trainer's rollout temperature, so Q and V are those of the policy it samples. */
  readonly temperature: number;
  readonly seed: number | string;
}

/** The one criterion a true-advantage rating carries: it is a number, not a rubric. */
export const TRUE_ADVANTAGE_CRITERION = "true advantage Q^π(h_t, a_t) − V^π(h_t), by Monte Carlo";

/**
 * The perfect-credit control of ARCO's comparison: a `StepCritic` whose step score is each step's
 * ground-truth advantage under the policy being trained (`trueStepAdvantages`, Monte Carlo from
 * the replayed prefix), so the dense phase sees what a critic that knew everything would say. It
 * holds the live policy, so every rating is of π as it is now. It needs an environment that is
 * deterministic given the actions (the ARCO gym is) and costs `2 · rollouts` continuations a step,
 * which no rollout budget counts: it is a control, the ceiling a learned critic could reach,
 * never a method. Its draws come from `${seed}/` and the episode's own actions, so a rating
 * depends on the policy and the episode alone (a resumed run rates a batch as the first would).
 * It is frozen (`frozenCritic`).
 *
 * @example
 * const critic = trueAdvantageCritic(arcoGym(), policy, { tasks: train, temperature: 0.7, seed: 1 });
 * await trainCoEvolution({ environment, train, policy, critic,
 *   settings: { sparseEpochs: 0, denseEpochs: 4, gamma: 0, terminalBuckets: "per-step", denseScale: 1 } });
 */
export function trueAdvantageCritic<Task>(
  environment: Environment<Task>,
  policy: Policy,
  options: TrueAdvantageCriticOptions<Task>,
): StepCritic {
  const rollouts = options.rollouts ?? 8;
  const byId = new Map(options.tasks.map((task) => [environment.taskId(task), task]));
  return frozenCritic("the true-advantage control", async (episodes) => {
    const ratings: StepRating[][] = [];
    for (const [e, episode] of episodes.entries()) {
      const task = byId.get(episode.taskId);
      if (task === undefined)
        throw new RlxarInputError(
          `episodes[${e}].taskId`,
          `${JSON.stringify(episode.taskId)} is not one of the critic's ${byId.size} tasks`,
        );
      const actions = episode.steps.map((step) => step.transition.actionText).join("\n");
      const credit = await trueStepAdvantages(environment, task, policy, episode, {
        rollouts,
        temperature: options.temperature,
        seed: `${options.seed}/${episode.replica}/${actions}`,
      });
      ratings.push(
        credit.map((c) => ({ criteria: [TRUE_ADVANTAGE_CRITERION], scores: [c.advantage], s: c.advantage })),
      );
    }
    return ratings;
  });
}
