/**
 * Your own environment for rlxar's rollouts and trainer: a key-value store the agent queries with
 * `Get[key]` before it answers with `Answer[value]`. Everything an environment owes the loop is
 * here: a grammar (tolerant `parse`, canonical `format`), episodes that step on a model's raw
 * output, a step kind for credit assignment, a reward, and a bound on the steps.
 *
 *   pnpm --filter @rubric/examples own-environment
 */
import { pathToFileURL } from "node:url";
import type { Turn } from "@rubric/arco-heads";
import {
  type ActionGrammar,
  type Environment,
  type EnvironmentEpisode,
  EpisodeDoneError,
  type Policy,
  type Transition,
  rollout,
} from "@rubric/rlxar";

/** A task: a question whose answer is the value at the end of a chain of keys. */
export interface LookupTask {
  readonly id: string;
  readonly question: string;
  readonly store: Readonly<Record<string, string>>;
  readonly answer: string;
}

const lookupGrammar: ActionGrammar = {
  forms: ["Get[key]", "Answer[value]"],
  // The first `Get[…]` or `Answer[…]` anywhere in the output, any case.
  parse: (output) => {
    const match = /\b(get|answer)\[([^\]\n]+)\]/iu.exec(output);
    if (match === null || match[2]!.trim() === "") return undefined;
    return { name: match[1]!.toLowerCase() === "get" ? "Get" : "Answer", argument: match[2]!.trim() };
  },
  format: (action) => `${action.name}[${action.argument}]`,
};

/** A key-value environment: `maxGets` lookups, then an answer; an unreadable output costs a lookup. */
export function keyValueLookup(maxGets = 3): Environment<LookupTask> {
  return {
    name: "key-value",
    grammar: lookupGrammar,
    // Each step but the last spends a lookup, so an episode ends within maxGets + 1 steps.
    maxSteps: maxGets + 1,
    description: "Find a value in a key-value store. Get[key] returns the key's value; Answer[value] ends the task.",
    taskId: (task) => task.id,
    reset(task): EnvironmentEpisode {
      const history: Turn[] = [];
      let left = maxGets;
      let done = false;
      const record = (transition: Transition): Transition => {
        history.push({ action: transition.actionText, observation: transition.observation });
        done = transition.done;
        return transition;
      };
      return {
        get done() {
          return done;
        },
        view() {
          if (done) throw new EpisodeDoneError(task.id);
          return {
            taskId: task.id,
            task: task.question,
            history: [...history],
            budgetLeft: left,
            mustFinish: left === 0,
          };
        },
        step(output) {
          if (done) throw new EpisodeDoneError(task.id);
          const action = lookupGrammar.parse(output);
          if (action?.name === "Answer") {
            const reward = action.argument === task.answer ? 1 : 0;
            return record({
              action,
              actionText: lookupGrammar.format(action),
              kind: "finish",
              observation: "Answered.",
              done: true,
              reward,
              info: { gold: task.answer },
            });
          }
          if (left === 0)
            return record({
              action,
              actionText: action === undefined ? output : lookupGrammar.format(action),
              kind: "violation",
              observation: "No lookups left; no answer given.",
              done: true,
              reward: 0,
              info: {},
            });
          left--;
          if (action === undefined)
            return record({
              action,
              actionText: output,
              kind: "invalid",
              observation: "Write Get[key] or Answer[value].",
              done: false,
              reward: 0,
              info: {},
            });
          const value = Object.hasOwn(task.store, action.argument) ? task.store[action.argument] : undefined;
          return record({
            action,
            actionText: lookupGrammar.format(action),
            kind: "tool",
            observation: value === undefined ? `No key ${action.argument}.` : value,
            done: false,
            reward: 0,
            info: { key: action.argument, found: value !== undefined },
          });
        },
      };
    },
  };
}

export const tasks: LookupTask[] = [
  {
    id: "t1",
    question: "Where does Ada live? (start at key ada)",
    store: { ada: "city-7", "city-7": "Lyon" },
    answer: "Lyon",
  },
  {
    id: "t2",
    question: "Where does Bo live? (start at key bo)",
    store: { bo: "city-2", "city-2": "Oslo" },
    answer: "Oslo",
  },
];

/** A policy that follows the chain of keys: Get the last observation (or the start key), then answer. */
export const chainFollower: Policy = {
  name: "chain-follower",
  act: async (views) =>
    views.map((view) => {
      const start = /key (\w+)/u.exec(view.task)![1]!;
      const last = view.history.at(-1)?.observation;
      if (view.history.length < 2) return { text: `Get[${last ?? start}]` };
      return { text: `Answer[${last}]` };
    }),
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const episodes = await rollout(keyValueLookup(), tasks, chainFollower, { temperature: 0, seed: 1 });
  for (const episode of episodes)
    console.log(
      `${episode.taskId}: reward ${episode.reward}: ${episode.steps.map((s) => s.transition.actionText).join(" → ")}`,
    );
}
