import { createRng } from "@rubric/core";
import type { AgentView } from "../environment/environment.js";
import { RlxarInputError } from "../errors.js";
import type { ActOptions, Policy, PolicyDecision } from "../policy/policy.js";
import type { GymTask } from "./world.js";

/**
 * The noisy teacher's default rate of careless searches: 0.9. Imitation learns the teacher's most
 * likely action in each state, so a habit shown more often than the right action survives into the
 * imitating policy's greedy choice (any rate past 1/2 does that); the rate sets how often ARCO's
 * sampling temperature (0.7) still draws the careful search. At 2/3 the warm-up answered a 4-hop
 * question in 16 % of sampled rollouts, so nearly every batch of outcome-only RL held a success,
 * Adam read the right direction from each, and outcome RL learnt the careful search as fast as
 * the true-advantage control: the gym showed no value of step credit at any H. At 0.9 the
 * warm-up's sampled success is 14 % at H = 2, 6 % at H = 3 and 2.5 % at H = 4 (64 training
 * tasks, measured on training-stream tasks before any evaluation question was run): outcome RL's
 * groups of 4 then carry a success several times a batch at H = 2 and less than once at H = 4,
 * the regime in which ARCO argues step credit pays. See packages/repro/README.md, "The ARCO gym".
 */
export const CARELESS_NOISE = 0.9;

export interface GymTeacherOptions {
  /** The chance that a search is careless: the chain entity's first word alone, the word its look-alike shares. */
  readonly noise?: number;
}

/** How many hops of the gold chain the view's searches have found, in order. */
function progress(task: GymTask, view: AgentView): number {
  let found = 0;
  for (const turn of view.history) {
    const hop = task.chain[found];
    if (hop !== undefined && turn.observation === task.paragraphs[hop.paragraph]!.text) found++;
  }
  return found;
}

function teacher(name: string, tasks: readonly GymTask[], noise: number): Policy {
  if (!(noise >= 0 && noise <= 1))
    throw new RlxarInputError("options.noise", `expected a number in [0, 1], got ${noise}`);
  const byId = new Map(tasks.map((task) => [task.id, task]));
  return {
    name,
    async act(views: readonly AgentView[], options: ActOptions): Promise<PolicyDecision[]> {
      return views.map((view, i) => {
        const task = byId.get(view.taskId);
        if (task === undefined)
          throw new RlxarInputError(
            `views[${i}].taskId`,
            `no gym task ${JSON.stringify(view.taskId)} was given to ${name}`,
          );
        const found = progress(task, view);
        // At the end of the chain, or out of searches: the answer the evidence found so far gives.
        if (found === task.hops || view.mustFinish)
          return { text: `Finish[${found > 0 ? task.chain[found - 1]!.object : task.chain[0]!.subject}]` };
        const next = task.chain[found]!.subject;
        const careless = noise > 0 && createRng(options.seeds[i]!).next() < noise;
        return { text: `Search[${careless ? next.split(" ")[0]! : next}]` };
      });
    },
  };
}

/**
 * The gym's oracle (a simulation's gold, read by nobody but teachers and tests): it searches each
 * chain entity by its whole name, in chain order, and finishes with the last one's object. After a
 * search that found no gold paragraph it searches the same entity again, and with no search left
 * it answers with what it has.
 *
 * @example
 * const episodes = await rollout(arcoGym(), tasks, gymOracle(tasks), { temperature: 0, seed: 1 }); // all reward 1
 */
export function gymOracle(tasks: readonly GymTask[]): Policy {
  return teacher("gym-oracle", tasks, 0);
}

/**
 * The oracle with a careless habit: each search is, with probability `noise` (default
 * {@link CARELESS_NOISE}), for the chain entity's first word alone — the word its look-alike
 * shares — which BM25 resolves to the gold paragraph or to the look-alike's, about evenly. Its
 * draws come from the rollout's per-step seeds. Imitating it gives the warm-up a policy that
 * starts low, with the right action still in its support.
 *
 * @example
 * const episodes = await rollout(arcoGym(), train, gymNoisyTeacher(train), { temperature: 1, seed: "warm-up", replicas: 2 });
 */
export function gymNoisyTeacher(tasks: readonly GymTask[], options: GymTeacherOptions = {}): Policy {
  const noise = options.noise ?? CARELESS_NOISE;
  return teacher(`gym-noisy-teacher(noise ${noise.toFixed(3)})`, tasks, noise);
}
