import type { Environment } from "../environment/environment.js";
import { RlxarInputError } from "../errors.js";
import type { HotpotQuestion } from "../hotpotqa/data.js";
import { hotpotQa } from "../hotpotqa/environment.js";
import { hotpotGrammar } from "../hotpotqa/grammar.js";
import { GYM_MAX_HOPS, type GymTask } from "./world.js";

/** Options of {@link arcoGym}. */
export interface ArcoGymOptions {
  /** Searches beyond the H a question needs (default 1: ARCO's 3 searches for HotpotQA's 2 hops). */
  readonly spareSearches?: number;
  /** BM25's k₁ (default 1.2). */
  readonly k?: number;
  /** BM25's b (default 0.75). */
  readonly b?: number;
}

function describe(spare: number): string {
  return `This is a simulation: a procedurally generated world of fictional people, cities, countries,
companies, universities and films with made-up names. Answer a multi-hop question about them by
searching the question's own closed pool of paragraphs; each paragraph states one fact about the
entity it is titled by, and some entities have look-alike names. Each turn write one action on one line.
- Search[query] spends one search and returns the text of the single paragraph that best matches the
  query (titles count); you have H + ${spare} searches, where H is the number of relations the question chains.
- Finish[answer] submits the answer, an entity's full name, and ends the episode at no cost.
Output that is neither spends a search. With no searches left only Finish is accepted: anything else
ends the episode without an answer, and an episode without an answer earns 0.`;
}

/**
 * The ARCO gym's environment (a simulation): ARCO's HotpotQA environment over a generated task's
 * own pool, with ARCO's action grammar (`Search[…]`, `Finish[…]`, read by `hotpotGrammar`), BM25
 * top-1 retrieval with titles indexed, a budget of H + 1 searches for a question of H hops (ARCO's
 * 3 for HotpotQA's 2), and reward 1 for a Finish whose answer equals the gold under HotpotQA's
 * normalisation (official EM), else 0. Every rule of budget, invalid output and forced finish is
 * the HotpotQA environment's own, which this one runs, one instance per hop count; `maxSteps` is
 * the longest episode of the longest question (H = 4).
 *
 * @example
 * const env = arcoGym();
 * const [task] = generateGymTasks({ hops: 2, count: 1, seed: 1 });
 * const episode = env.reset(task!);
 * episode.step(`Search[${task!.chain[0]!.subject}]`); // the first gold paragraph
 */
export function arcoGym(options: ArcoGymOptions = {}): Environment<GymTask> {
  const spare = options.spareSearches ?? 1;
  if (!Number.isInteger(spare) || spare < 0)
    throw new RlxarInputError("options.spareSearches", `expected an integer ≥ 0, got ${spare}`);
  // One HotpotQA environment per hop count, made up front: each keeps its tasks' indexes, and a
  // task always goes to the same one, so a task's pool is indexed once.
  const byHops = Array.from({ length: GYM_MAX_HOPS + 1 }, (_, hops) =>
    hotpotQa({ maxSearches: hops + spare, reward: "em", indexTitles: true, k: options.k, b: options.b }),
  );
  return {
    name: "arco-gym",
    grammar: hotpotGrammar,
    maxSteps: GYM_MAX_HOPS + spare + 1,
    description: describe(spare),
    taskId: (task) => task.id,
    reset(task) {
      if (!Number.isInteger(task.hops) || task.hops < 1 || task.hops > GYM_MAX_HOPS)
        throw new RlxarInputError(
          `task ${task.id}.hops`,
          `expected an integer in [1, ${GYM_MAX_HOPS}], got ${task.hops}`,
        );
      const question: HotpotQuestion = task;
      return byHops[task.hops]!.reset(question);
    },
  };
}
