import type { Environment, EnvironmentEpisode } from "../environment/environment.js";
import { RlxarInputError } from "../errors.js";
import type { Policy } from "../policy/policy.js";
import type { Episode } from "../rollout/rollout.js";

export interface TrueAdvantageOptions {
  /** Continuations per estimate: each step's Q and V are means over this many. */
  readonly rollouts: number;
  readonly seed: number | string;
  /** The policy's temperature in the continuations (default 1: π itself). */
  readonly temperature?: number;
}

/** The ground-truth credit of one step of an episode, by Monte Carlo. */
export interface StepAdvantage {
  readonly step: number;
  /** Q^π(h_t, a_t): the mean return from step t when the episode's own action a_t follows prefix h_t, then π. */
  readonly q: number;
  /** V^π(h_t): the mean return from step t when π acts from prefix h_t on. */
  readonly v: number;
  /** Q − V: how much better a_t was than π's own choice at h_t. */
  readonly advantage: number;
  /** The advantage's standard error, the two means' errors added as if independent (see below). */
  readonly standardError: number;
}

interface Continuation {
  readonly step: number;
  readonly replica: number;
  readonly q: boolean;
  readonly episode: EnvironmentEpisode;
  value: number;
}

/**
 * Ground-truth step credit for any critic to be compared with: for each step t of `episode`,
 * Q^π(h_t, a_t) − V^π(h_t) estimated by Monte Carlo. The environment is reset and the episode's
 * first t actions replayed (checked to give the same observations again, so the environment must
 * be deterministic given the actions); Q's continuations then take a_t and follow `policy`, V's
 * follow `policy` from h_t, `rollouts` of each, batched into one policy call per round. A return
 * counts the rewards from step t on.
 *
 * Q's and V's continuations of the same replica draw from the same seeds
 * (`${seed}/${taskId}/${t}/${replica}/${depth}`, depth the steps taken so far): common random
 * numbers, so where V's continuation happens to choose a_t the two returns agree exactly, and
 * the difference's variance is lower than two independent means'; the reported standard error
 * ignores that and is conservative.
 *
 * @example
 * const [episode] = await rollout(env, [task], policy, { temperature: 1, seed: 1 });
 * const credit = await trueStepAdvantages(env, task, policy, episode!, { rollouts: 64, seed: "truth" });
 * credit.map((c) => c.advantage); // compare with a critic's step scores
 */
export async function trueStepAdvantages<Task>(
  environment: Environment<Task>,
  task: Task,
  policy: Policy,
  episode: Episode,
  options: TrueAdvantageOptions,
): Promise<StepAdvantage[]> {
  const { rollouts } = options;
  if (!Number.isInteger(rollouts) || rollouts < 1)
    throw new RlxarInputError("options.rollouts", `expected an integer ≥ 1, got ${rollouts}`);
  const temperature = options.temperature ?? 1;
  if (!(temperature >= 0))
    throw new RlxarInputError("options.temperature", `expected a number ≥ 0, got ${temperature}`);
  const taskId = environment.taskId(task);
  if (taskId !== episode.taskId)
    throw new RlxarInputError(
      "episode.taskId",
      `is ${JSON.stringify(episode.taskId)}, the task is ${JSON.stringify(taskId)}`,
    );

  /** A fresh episode advanced by the recorded episode's first `steps` actions; rewards from step `from` on. */
  const replay = (steps: number, from: number): { episode: EnvironmentEpisode; value: number } => {
    const live = environment.reset(task);
    let value = 0;
    for (let k = 0; k < steps; k++) {
      const recorded = episode.steps[k]!.transition;
      const again = live.step(recorded.actionText);
      if (again.observation !== recorded.observation || again.kind !== recorded.kind)
        throw new RlxarInputError(
          `episode.steps[${k}]`,
          `replaying ${JSON.stringify(recorded.actionText)} gave another result; ${environment.name} must be deterministic given the actions`,
        );
      if (k >= from) value += again.reward;
    }
    return { episode: live, value };
  };

  const continuations: Continuation[] = [];
  episode.steps.forEach((_, t) => {
    for (let replica = 0; replica < rollouts; replica++) {
      continuations.push({ step: t, replica, q: true, ...replay(t + 1, t) });
      continuations.push({ step: t, replica, q: false, ...replay(t, t) });
    }
  });
  for (let round = 0; round < environment.maxSteps; round++) {
    const live = continuations.filter((c) => !c.episode.done);
    if (live.length === 0) break;
    const views = live.map((c) => c.episode.view());
    const decisions = await policy.act(views, {
      temperature,
      seeds: live.map((c, i) => `${options.seed}/${taskId}/${c.step}/${c.replica}/${views[i]!.history.length}`),
    });
    if (decisions.length !== views.length)
      throw new RlxarInputError(
        `policy ${policy.name}`,
        `returned ${decisions.length} decisions for ${views.length} views`,
      );
    live.forEach((c, i) => {
      c.value += c.episode.step(decisions[i]!.text).reward;
    });
  }
  if (continuations.some((c) => !c.episode.done))
    throw new RlxarInputError(
      `environment ${environment.name}`,
      `a continuation did not end within maxSteps (${environment.maxSteps})`,
    );

  return episode.steps.map((_, t) => {
    const q = continuations.filter((c) => c.step === t && c.q).map((c) => c.value);
    const v = continuations.filter((c) => c.step === t && !c.q).map((c) => c.value);
    const meanQ = mean(q);
    const meanV = mean(v);
    return {
      step: t,
      q: meanQ,
      v: meanV,
      advantage: meanQ - meanV,
      standardError: Math.sqrt(variance(q, meanQ) / q.length + variance(v, meanV) / v.length),
    };
  });
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The sample variance (n − 1); 0 for a single value. */
function variance(xs: readonly number[], m: number): number {
  if (xs.length < 2) return 0;
  return xs.reduce((sum, x) => sum + (x - m) ** 2, 0) / (xs.length - 1);
}
