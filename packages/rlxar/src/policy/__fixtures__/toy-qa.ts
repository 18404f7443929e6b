import type { Turn } from "@rubric/arco-heads";
import type {
  ActionGrammar,
  AgentView,
  Environment,
  EnvironmentEpisode,
  ParsedAction,
  Transition,
} from "../../environment/environment.js";
import { EpisodeDoneError } from "../../errors.js";

/**
 * A small Search/Finish environment for the policy tests (the real HotpotQA one lives in
 * `hotpotqa/`): a question, a fixed paragraph pool searched by word overlap, a budget of searches
 * where an invalid output costs one, and a forced finish at 0.
 */
export interface ToyTask {
  readonly id: string;
  readonly question: string;
  readonly answer: string;
  readonly paragraphs: readonly string[];
}

const ACTION = /\b(Search|Finish)\[([^\]\n]*)[\])]/;

export const toyGrammar: ActionGrammar = {
  forms: ["Search[query]", "Finish[answer]"],
  parse(output: string): ParsedAction | undefined {
    const match = ACTION.exec(output);
    if (match === null) return undefined;
    return { name: match[1] as string, argument: (match[2] as string).trim() };
  },
  format: (action) => `${action.name}[${action.argument}]`,
};

function overlap(query: string, paragraph: string): number {
  const words = new Set(paragraph.toLowerCase().split(/\W+/));
  return query
    .toLowerCase()
    .split(/\W+/)
    .filter((w) => w.length > 0 && words.has(w)).length;
}

export function toyQa(budget = 2): Environment<ToyTask> {
  return {
    name: "toy-qa",
    grammar: toyGrammar,
    maxSteps: budget + 1,
    description: "Answer the question by searching a small pool of paragraphs.",
    taskId: (task) => task.id,
    reset(task): EnvironmentEpisode {
      const history: Turn[] = [];
      let left = budget;
      let done = false;
      const view = (): AgentView => {
        if (done) throw new EpisodeDoneError(task.id);
        return {
          taskId: task.id,
          task: task.question,
          history: [...history],
          budgetLeft: left,
          mustFinish: left === 0,
        };
      };
      const end = (t: Omit<Transition, "info">): Transition => {
        if (!t.done) history.push({ action: t.actionText, observation: t.observation });
        done = t.done;
        return { ...t, info: {} };
      };
      return {
        get done() {
          return done;
        },
        view,
        step(output: string): Transition {
          if (done) throw new EpisodeDoneError(task.id);
          const action = toyGrammar.parse(output);
          if (action === undefined) {
            // With no budget left to charge, an invalid output ends the episode unanswered.
            const spent = left === 0;
            left = Math.max(0, left - 1);
            return end({
              action,
              actionText: output,
              kind: "invalid",
              observation: "Invalid action.",
              done: spent,
              reward: 0,
            });
          }
          const actionText = toyGrammar.format(action);
          if (action.name === "Finish") {
            const reward = action.argument.toLowerCase() === task.answer.toLowerCase() ? 1 : 0;
            return end({ action, actionText, kind: "finish", observation: "Episode finished.", done: true, reward });
          }
          if (left === 0) {
            return end({
              action,
              actionText,
              kind: "violation",
              observation: "Forced finish violation.",
              done: true,
              reward: 0,
            });
          }
          left--;
          const best = [...task.paragraphs].sort(
            (a, b) => overlap(action.argument, b) - overlap(action.argument, a),
          )[0];
          return end({ action, actionText, kind: "tool", observation: best ?? "", done: false, reward: 0 });
        },
      };
    },
  };
}

export const TOY_TASKS: readonly ToyTask[] = [
  {
    id: "q1",
    question: "Which river flows through the capital of Norland?",
    answer: "Aln",
    paragraphs: ["Vessby is the capital of Norland.", "Vessby lies on the river Aln."],
  },
  {
    id: "q2",
    question: "Is Mount Orr taller than Mount Bel?",
    answer: "yes",
    paragraphs: ["Mount Orr is 3,100 m high.", "Mount Bel is 2,400 m high."],
  },
];
