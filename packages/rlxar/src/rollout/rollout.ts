import { type Trajectory, stepsOf, type Step } from "@rubric/arco-heads";
import { RlxarInputError } from "../errors.js";
import type { ActOptions, Policy, PolicyDecision } from "../policy/policy.js";
import type { AgentView, Environment, Transition } from "../environment/environment.js";

/** One step of a finished episode: what the agent saw, what it chose, what the environment said. */
export interface EpisodeStep {
  readonly view: AgentView;
  readonly decision: PolicyDecision;
  readonly transition: Transition;
}

/** A finished episode. */
export interface Episode {
  readonly taskId: string;
  /** Which rollout of its task this is (0 … group size − 1). */
  readonly replica: number;
  readonly task: string;
  readonly steps: readonly EpisodeStep[];
  /** The sum of the steps' rewards (ARCO: the final EM). */
  readonly reward: number;
}

export interface RolloutOptions {
  /** 0 for greedy (evaluation); ARCO samples at 0.7 in training. */
  readonly temperature: number;
  /** Every draw of the batch derives from this seed, the task id, the replica and the step. */
  readonly seed: number | string;
  /** Rollouts per task (ARCO's sparse phase: 4). Default 1. */
  readonly replicas?: number;
  /** Called after each round of policy calls with the number of episodes still running. */
  readonly onRound?: (round: number, running: number) => void;
  /** Milliseconds spent in the policy and in the environment are added here (a trainer's time shares). */
  readonly timing?: RolloutTiming;
}

/** Where a rollout's time went; {@link rollout} adds to it. */
export interface RolloutTiming {
  policyMs: number;
  environmentMs: number;
}

/**
 * Runs every task's episodes to the end, batching one policy call per round over all the
 * episodes still running (a served model sees one batch, not one request per episode). Row seeds
 * are `${seed}/${taskId}/${replica}/${step}`, so an episode's draws do not depend on the batch.
 *
 * @example
 * const episodes = await rollout(hotpotQa(), questions, policy, { temperature: 0.7, seed: 1, replicas: 4 });
 */
export async function rollout<Task>(
  environment: Environment<Task>,
  tasks: readonly Task[],
  policy: Policy,
  options: RolloutOptions,
): Promise<Episode[]> {
  const replicas = options.replicas ?? 1;
  if (!Number.isInteger(replicas) || replicas < 1) {
    throw new RlxarInputError("options.replicas", `expected an integer ≥ 1, got ${replicas}`);
  }
  if (!(options.temperature >= 0)) {
    throw new RlxarInputError("options.temperature", `expected a number ≥ 0, got ${options.temperature}`);
  }
  const clock = options.timing;
  let mark = performance.now();
  const running = tasks.flatMap((task) =>
    Array.from({ length: replicas }, (_, replica) => ({
      taskId: environment.taskId(task),
      replica,
      episode: environment.reset(task),
      task: "",
      steps: [] as EpisodeStep[],
      reward: 0,
    })),
  );
  for (const row of running) row.task = row.episode.view().task;
  let round = 0;
  for (; round < environment.maxSteps; round++) {
    const live = running.filter((row) => !row.episode.done);
    if (live.length === 0) break;
    const views = live.map((row) => row.episode.view());
    const act: ActOptions = {
      temperature: options.temperature,
      seeds: live.map((row) => `${options.seed}/${row.taskId}/${row.replica}/${row.steps.length}`),
    };
    if (clock !== undefined) clock.environmentMs += performance.now() - mark;
    mark = performance.now();
    const decisions = await policy.act(views, act);
    if (clock !== undefined) clock.policyMs += performance.now() - mark;
    mark = performance.now();
    if (decisions.length !== views.length) {
      throw new RlxarInputError(
        `policy ${policy.name}`,
        `returned ${decisions.length} decisions for ${views.length} views`,
      );
    }
    live.forEach((row, i) => {
      const transition = row.episode.step(decisions[i]!.text);
      row.steps.push({ view: views[i]!, decision: decisions[i]!, transition });
      row.reward += transition.reward;
    });
    options.onRound?.(round + 1, running.filter((row) => !row.episode.done).length);
  }
  if (clock !== undefined) clock.environmentMs += performance.now() - mark;
  const unfinished = running.find((row) => !row.episode.done);
  if (unfinished !== undefined) {
    throw new RlxarInputError(
      `environment ${environment.name}`,
      `episode of task ${JSON.stringify(unfinished.taskId)} did not end within its maxSteps (${environment.maxSteps})`,
    );
  }
  return running.map(({ taskId, replica, task, steps, reward }) => ({ taskId, replica, task, steps, reward }));
}

/** An episode as arco-heads' `Trajectory`: the turns μ and the annotator read, with the outcome. */
export function episodeTrajectory(episode: Episode): Trajectory {
  return {
    id: `${episode.taskId}#${episode.replica}`,
    task: episode.task,
    turns: episode.steps.map((step) => ({
      action: step.transition.actionText,
      observation: step.transition.observation,
      budgetLeft: step.view.budgetLeft,
    })),
    outcome: episode.reward,
  };
}

/** μ's steps of an episode: step t sees turns 0…t−1 and turn t's action, never its result. */
export function episodeSteps(episode: Episode): Step[] {
  return stepsOf(episodeTrajectory(episode));
}
