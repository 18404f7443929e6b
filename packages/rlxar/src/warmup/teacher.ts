import {
  type MuSftExample,
  type MuSftOptions,
  muSftExamples,
  projectTeacherScores,
  type TrajectoryAnnotation,
} from "@rubric/arco-heads";
import { createRng } from "@rubric/core";
import { RlxarInputError } from "../errors.js";
import type { AgentView, Transition } from "../environment/environment.js";
import { type Episode, episodeTrajectory } from "../rollout/rollout.js";
import type { ActOptions, Policy, PolicyDecision, PolicySftExample } from "../policy/policy.js";
import type { HotpotParagraph } from "../hotpotqa/data.js";
import { indexParagraphs, type ParagraphIndex, type RetrievalOptions } from "../hotpotqa/retrieval.js";

/** What the teacher may know of a question and nobody else does: its gold answer and supporting titles. */
export interface GoldQuestion {
  readonly id: string;
  readonly answer: string;
  readonly supportingTitles: readonly string[];
  /** The question's pool; `queries` needs their text and sentences too (a `HotpotQuestion`'s). */
  readonly paragraphs: readonly { readonly title: string }[] | readonly HotpotParagraph[];
}

export interface TeacherOptions {
  /**
   * The chance of each mistake (default 0.25): a search for a distractor paragraph's title instead
   * of the next gold one, finishing before every gold paragraph is in, a wrong final answer. ARCO's
   * teacher is gpt-4o-mini sampled at T = 1, whose mistakes are what μ learns to score low; noise
   * stands in for them here.
   */
  readonly noise?: number;
  /**
   * The student's own queries for a view (e.g. the extractive policy's search candidates, in its
   * order). Given them, the teacher searches for a paragraph with the first query whose top-1
   * retrieval (`retrieval`, the environment's settings) is that paragraph, and by its title only
   * when none is: a teacher every search of which the student can write, so imitating it is not
   * capped by queries the student cannot form. Ours; ARCO's teacher is an LLM that writes free
   * queries its LLM student can also write.
   */
  readonly queries?: (view: AgentView) => readonly string[];
  /** How the environment retrieves (`indexTitles`, BM25's k and b); the same as the environment's. */
  readonly retrieval?: RetrievalOptions;
}

const SEARCH = /^Search\[(.*)\]$/;

/**
 * The warm-up teacher (ARCO: gpt-4o-mini at T = 1 with k = 3 rollouts per question): a policy
 * that knows each question's gold supporting titles and answer, searches for the gold paragraphs
 * by title, and finishes with the gold answer, making seeded mistakes at the `noise` rate so its
 * trajectories hold good and bad steps of every kind. It reads nothing but the view and the gold
 * of the view's task id; it is a stand-in for a strong LLM teacher, and every report says so.
 *
 * @example
 * const episodes = await rollout(hotpotQa(), train, goldTeacher(train), { temperature: 1, seed: 1, replicas: 3 });
 */
export function goldTeacher(questions: readonly GoldQuestion[], options: TeacherOptions = {}): Policy {
  const noise = options.noise ?? 0.25;
  if (!(noise >= 0 && noise <= 1)) throw new RlxarInputError("noise", `expected a number in [0, 1], got ${noise}`);
  const gold = new Map(questions.map((q) => [q.id, q]));
  const indexes = new Map<string, ParagraphIndex>();
  const indexOf = (question: GoldQuestion): ParagraphIndex => {
    let index = indexes.get(question.id);
    if (index === undefined) {
      const paragraphs = question.paragraphs as readonly HotpotParagraph[];
      const bad = paragraphs.findIndex((p) => typeof p.text !== "string" || !Array.isArray(p.sentences));
      if (bad !== -1)
        throw new RlxarInputError(
          `questions[${questions.indexOf(question)}].paragraphs[${bad}]`,
          "the teacher's `queries` option retrieves, so every paragraph needs its text and sentences",
        );
      index = indexParagraphs(paragraphs, options.retrieval);
      indexes.set(question.id, index);
    }
    return index;
  };
  /** The student's first query that retrieves one of `titles` top-1, and which. */
  const phrase = (view: AgentView, question: GoldQuestion, titles: readonly string[]) => {
    if (options.queries === undefined || titles.length === 0) return undefined;
    const index = indexOf(question);
    for (const query of options.queries(view)) {
      const title = index.search(query)?.paragraph.title;
      if (title !== undefined && titles.includes(title)) return { query, title };
    }
    return undefined;
  };
  return {
    name: `gold-teacher(noise ${noise})`,
    async act(views: readonly AgentView[], act: ActOptions): Promise<PolicyDecision[]> {
      return views.map((view, i) => {
        const question = gold.get(view.taskId);
        if (question === undefined)
          throw new RlxarInputError(`views[${i}].taskId`, `no gold for task ${JSON.stringify(view.taskId)}`);
        const rng = createRng(act.seeds[i]!);
        const queries = view.history.flatMap((turn) => SEARCH.exec(turn.action)?.[1] ?? []);
        // What has been searched, as titles: a query in the student's words counts as the title it retrieved.
        const searched = new Set(
          options.queries === undefined
            ? queries
            : [...queries, ...queries.flatMap((q) => indexOf(question).search(q)?.paragraph.title ?? [])],
        );
        const missing = question.supportingTitles.filter((title) => !searched.has(title));
        const mistake = () => rng.next() < noise;
        const finish = (): PolicyDecision => {
          if (!mistake()) return { text: `Finish[${question.answer}]` };
          // A wrong answer of the kind a model gives: another paragraph's subject.
          const others = question.paragraphs.map((p) => p.title).filter((t) => t !== question.answer);
          return { text: `Finish[${others[rng.int(others.length)] ?? "unknown"}]` };
        };
        if (view.mustFinish || missing.length === 0) return finish();
        if (view.history.length > 0 && mistake()) return finish(); // gives up early
        if (mistake()) {
          const distractors = question.paragraphs
            .map((p) => p.title)
            .filter((t) => !question.supportingTitles.includes(t) && !searched.has(t));
          if (distractors.length > 0) {
            const chosen = distractors[rng.int(distractors.length)]!;
            return { text: `Search[${phrase(view, question, [chosen])?.query ?? chosen}]` };
          }
        }
        return { text: `Search[${phrase(view, question, missing)?.query ?? missing[0]}]` };
      });
    },
  };
}

/** The teacher's written criteria and raw scores for one step, before the projection. */
interface StepJudgement {
  readonly criteria: string[];
  readonly raw: number[];
}

/** What a search step's info says of its result (the HotpotQA environment's `supporting` and `title`). */
function retrieved(transition: Transition): { supporting: boolean; title?: string } {
  const { supporting, title } = transition.info as { supporting?: unknown; title?: unknown };
  return { supporting: supporting === true, ...(typeof title === "string" ? { title } : {}) };
}

/**
 * K criteria and raw scores for every step of an episode, as a teacher that saw the whole
 * trajectory and its outcome writes them (ARCO's annotator prompt asks the same: per step, K
 * step-specific criteria and K scores in [−1, 1]). The criteria name what the step did, so μ has
 * step-specific text to learn; the scores say how well it did it.
 */
function judge(episode: Episode, k: number): StepJudgement[] {
  const supportingSeen: string[] = [];
  const queries = new Set<string>();
  return episode.steps.map((step) => {
    const { transition } = step;
    let pool: [string, number][];
    if (transition.kind === "tool") {
      const query = transition.action?.argument ?? "";
      const repeat = queries.has(query);
      queries.add(query);
      const { supporting, title } = retrieved(transition);
      if (supporting && title !== undefined) supportingSeen.push(title);
      const hop = supportingSeen.length <= 1 ? "first" : "second";
      pool = supporting
        ? [
            [`Query names ${title ?? query}, a paragraph the question needs`, 0.8],
            [`Retrieves evidence for the ${hop} hop`, 0.7],
            ["Does not repeat an earlier search", repeat ? -0.6 : 0.5],
            ["Keeps the query short and specific", 0.4],
            ["Builds on what was already found", supportingSeen.length > 1 ? 0.6 : 0.2],
          ]
        : [
            [`Query targets ${query}, which the question does not need`, -0.6],
            ["Retrieves evidence for a hop of the question", -0.7],
            ["Does not repeat an earlier search", repeat ? -0.8 : 0.2],
            ["Keeps the query short and specific", 0.1],
            ["Builds on what was already found", -0.3],
          ];
    } else if (transition.kind === "finish") {
      const correct = episode.reward > 0;
      const evidence = supportingSeen.length;
      pool = [
        [`Answer ${transition.action?.argument ?? ""} matches the gathered evidence`, correct ? 0.9 : -0.9],
        ["Answers only once both hops are found", evidence >= 2 ? 0.6 : -0.4],
        ["Gives the answer in the form the question asks", correct ? 0.7 : -0.3],
        ["Ends without wasting budget", 0.3],
        ["Answers the question that was asked", correct ? 0.8 : -0.6],
      ];
    } else {
      pool = [
        [transition.kind === "invalid" ? "Writes a well-formed action" : "Finishes when no searches remain", -0.9],
        ["Spends budget on evidence", -0.7],
        ["Moves toward an answer", -0.6],
        ["Follows the action format", -0.8],
        ["Uses the budget it has", -0.5],
      ];
    }
    if (k > pool.length)
      throw new RlxarInputError("k", `the gold teacher writes at most ${pool.length} criteria per step, got k = ${k}`);
    const chosen = pool.slice(0, k);
    return { criteria: chosen.map(([c]) => c), raw: chosen.map(([, s]) => s) };
  });
}

/**
 * The teacher's annotation of an episode: K criteria and scores per step, the scores clamped and
 * projected (a uniform shift, then clamping) so that Σ_t mean_k = R, as ARCO's warm-up projects
 * its annotator's.
 */
export function teacherAnnotation(episode: Episode, k = 3): TrajectoryAnnotation {
  const judged = judge(episode, k);
  const { projected, shift } = projectTeacherScores(
    judged.map((j) => j.raw),
    episode.reward,
  );
  return {
    trajectory: episodeTrajectory(episode).id,
    outcome: episode.reward,
    shift,
    steps: judged.map((j, t) => ({ criteria: j.criteria, raw: j.raw, scores: projected[t]! })),
  };
}

/** The warm-up's two training sets and what was kept. */
export interface WarmupData {
  /** π SFT: each step of a successful (R = 1) trajectory with more than one step. */
  readonly policy: PolicySftExample[];
  /** μ SFT: each step of a multi-step trajectory whose projected scores decompose R. */
  readonly mu: MuSftExample[];
  readonly counts: {
    readonly trajectories: number;
    readonly successful: number;
    readonly policyTrajectories: number;
    readonly muTrajectories: number;
    readonly singleStep: number;
    readonly notDecomposed: number;
  };
}

/**
 * ARCO's warm-up data from annotated episodes: π is fine-tuned on the steps of trajectories with
 * R ≥ 1 and more than one step; μ on every step of multi-step trajectories whose annotation
 * decomposes R (|Σ_t mean − R| < 0.05), target the criteria text plus the K projected scores.
 */
export function warmupData(
  episodes: readonly Episode[],
  annotations: readonly TrajectoryAnnotation[],
  options: MuSftOptions = {},
): WarmupData {
  if (annotations.length !== episodes.length) {
    throw new RlxarInputError(
      "annotations",
      `expected one per episode (${episodes.length}), got ${annotations.length}`,
    );
  }
  const policy: PolicySftExample[] = [];
  const mu: MuSftExample[] = [];
  let policyTrajectories = 0;
  let muTrajectories = 0;
  let singleStep = 0;
  let notDecomposed = 0;
  episodes.forEach((episode, e) => {
    if (episode.reward >= 1 && episode.steps.length > 1) {
      policyTrajectories++;
      for (const step of episode.steps) policy.push({ view: step.view, text: step.transition.actionText });
    }
    const selection = muSftExamples(episodeTrajectory(episode), annotations[e]!, options);
    if (selection.skipped === "single-step") singleStep++;
    else if (selection.skipped === "decomposition") notDecomposed++;
    else muTrajectories++;
    mu.push(...selection.examples);
  });
  return {
    policy,
    mu,
    counts: {
      trajectories: episodes.length,
      successful: episodes.filter((e) => e.reward >= 1).length,
      policyTrajectories,
      muTrajectories,
      singleStep,
      notDecomposed,
    },
  };
}
