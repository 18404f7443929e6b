import type { Turn } from "@rubric/arco-heads";
import type { AgentView, Environment, EnvironmentEpisode, Transition } from "../environment/environment.js";
import { EpisodeDoneError, RlxarInputError } from "../errors.js";
import type { HotpotQuestion } from "./data.js";
import { hotpotGrammar } from "./grammar.js";
import { arcoExactMatch, exactMatch, f1Score } from "./metrics.js";
import { type ParagraphIndex, type RetrievalOptions, indexParagraphs } from "./retrieval.js";

/** Which score of the answer a Finish earns. */
export type HotpotReward = "arco-em" | "em" | "f1";

/** Options of {@link hotpotQa}; the defaults are ARCO's. */
export interface HotpotQaOptions extends RetrievalOptions {
  /** Searches per episode (default 3, ARCO's `max_steps`). An invalid output spends one too. */
  readonly maxSearches?: number;
  /** The Finish step's reward: ARCO's EM variant (default), the official EM, or token F1. */
  readonly reward?: HotpotReward;
}

/** The observations the agent reads; μ and the annotator read them in the history too. */
export const HOTPOT_OBSERVATIONS = {
  invalid: "Invalid action: write exactly one Search[query] or Finish[answer]. No retrieval was executed.",
  invalidAtZero: "Invalid action with 0 searches remaining: only Finish[answer] was accepted. No answer submitted.",
  violation: "Forced finish violation: a Search with 0 searches remaining. No answer submitted.",
  noMatch: (query: string) => `No paragraph matched the query ${JSON.stringify(query)}.`,
  finished: "Answer submitted.",
} as const;

function describe(maxSearches: number): string {
  return `Answer a multi-hop question by searching a closed pool of Wikipedia paragraphs: the question's own
ten, its gold paragraphs among distractors. Each turn write one action on one line.
- Search[query] spends one of your ${maxSearches} searches and returns the text of the single paragraph that
  best matches the query (without its title); a paragraph that matches nothing returns a note instead.
  Search for one entity or fact at a time, in a few words, and never repeat a search.
- Finish[answer] submits a short, complete answer and ends the episode at no cost; answer yes/no
  questions with Finish[yes] or Finish[no].
Output that is neither spends a search and retrieves nothing. With no searches left only Finish is
accepted: anything else ends the episode without an answer, and an episode without an answer earns 0.`;
}

const REWARDS: Readonly<Record<HotpotReward, (prediction: string, gold: string) => number>> = {
  "arco-em": arcoExactMatch,
  em: exactMatch,
  f1: f1Score,
};

/**
 * ARCO's multi-hop QA environment over HotpotQA's distractor setting: each question is a closed
 * pool of its own paragraphs, `Search[query]` returns the top-1 paragraph's text by BM25 (ARCO:
 * SimCSE cosine; see {@link indexParagraphs}), `Finish[answer]` ends the episode with the answer's
 * score as its reward.
 *
 * The budget, as ARCO keeps it: `maxSearches` (3) counts searches, and Finish costs nothing. An
 * output the grammar cannot read is recorded (kind `invalid`, "… No retrieval was executed.") and
 * costs one search too. At 0 searches the view says `mustFinish` (the policy shows its
 * forced-finish prompt); a Search then ends the episode with reward 0 (kind `violation`), and so
 * does an unreadable output, since there is no search left to charge it to: ARCO's text names no
 * fourth case, and letting the agent go on would let an episode run forever. Every step before
 * the last thus spends one unit, so an episode has at most `maxSearches + 1` steps (`maxSteps`).
 *
 * A question's index is built the first time one of its episodes starts and kept for as long as
 * the question object lives, so a group of rollouts shares it.
 *
 * @example
 * const env = hotpotQa();
 * const episode = env.reset(loadHotpotQa("dev.jsonl")[0]!);
 * episode.step("Search[Sergei Aleksandrovich Tokarev]"); // kind "tool", his paragraph's text
 * episode.step("Finish[1755]"); // kind "finish", reward 1, done
 */
export function hotpotQa(options: HotpotQaOptions = {}): Environment<HotpotQuestion> {
  const maxSearches = options.maxSearches ?? 3;
  if (!Number.isInteger(maxSearches) || maxSearches < 0)
    throw new RlxarInputError("options.maxSearches", `expected an integer ≥ 0, got ${maxSearches}`);
  const reward = options.reward ?? "arco-em";
  if (!Object.hasOwn(REWARDS, reward))
    throw new RlxarInputError("options.reward", `expected arco-em, em or f1, got ${JSON.stringify(reward)}`);
  // Checks k and b now rather than at the first episode.
  indexParagraphs([], options);
  const indexes = new WeakMap<HotpotQuestion, ParagraphIndex>();
  const indexOf = (question: HotpotQuestion) => {
    let index = indexes.get(question);
    if (index === undefined) {
      index = indexParagraphs(question.paragraphs, options);
      indexes.set(question, index);
    }
    return index;
  };
  return {
    name: "hotpotqa",
    grammar: hotpotGrammar,
    maxSteps: maxSearches + 1,
    description: describe(maxSearches),
    taskId: (question) => question.id,
    reset: (question) => episode(question, indexOf(question), maxSearches, REWARDS[reward]),
  };
}

function episode(
  question: HotpotQuestion,
  index: ParagraphIndex,
  maxSearches: number,
  score: (prediction: string, gold: string) => number,
): EnvironmentEpisode {
  const history: Turn[] = [];
  let searchesLeft = maxSearches;
  let done = false;
  const supporting = new Set(question.supportingTitles);
  const end = (transition: Omit<Transition, "reward"> & { reward?: number }): Transition => {
    history.push({ action: transition.actionText, observation: transition.observation });
    done = transition.done;
    return { ...transition, reward: transition.reward ?? 0 };
  };
  return {
    get done() {
      return done;
    },
    view(): AgentView {
      if (done) throw new EpisodeDoneError(question.id);
      return {
        taskId: question.id,
        task: question.question,
        history: history.map((turn) => ({ ...turn })),
        budgetLeft: searchesLeft,
        mustFinish: searchesLeft === 0,
      };
    },
    step(output) {
      if (done) throw new EpisodeDoneError(question.id);
      const action = hotpotGrammar.parse(output);
      if (action === undefined) {
        const spent = searchesLeft === 0;
        if (!spent) searchesLeft--;
        return end({
          action,
          actionText: output,
          kind: "invalid",
          observation: spent ? HOTPOT_OBSERVATIONS.invalidAtZero : HOTPOT_OBSERVATIONS.invalid,
          done: spent,
          info: {},
        });
      }
      const actionText = hotpotGrammar.format(action);
      if (action.name === "Finish") {
        const answer = action.argument;
        const gold = question.answer;
        const em = exactMatch(answer, gold);
        const arcoEm = arcoExactMatch(answer, gold);
        const f1 = f1Score(answer, gold);
        return end({
          action,
          actionText,
          kind: "finish",
          observation: HOTPOT_OBSERVATIONS.finished,
          done: true,
          reward: score(answer, gold),
          info: { answer, gold, em, arcoEm, f1 },
        });
      }
      const query = action.argument;
      if (searchesLeft === 0)
        return end({
          action,
          actionText,
          kind: "violation",
          observation: HOTPOT_OBSERVATIONS.violation,
          done: true,
          info: { query },
        });
      searchesLeft--;
      const hit = index.search(query);
      return end({
        action,
        actionText,
        kind: "tool",
        observation: hit === undefined ? HOTPOT_OBSERVATIONS.noMatch(query) : hit.paragraph.text,
        done: false,
        info:
          hit === undefined
            ? { query, title: null, paragraph: null, supporting: false }
            : {
                query,
                title: hit.paragraph.title,
                paragraph: hit.index,
                supporting: supporting.has(hit.paragraph.title),
              },
      });
    },
  };
}
