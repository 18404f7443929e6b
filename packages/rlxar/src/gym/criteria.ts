import { projectTeacherScores, type TrajectoryAnnotation } from "@rubric/arco-heads";
import type { StepCritic } from "../critic/step-critic.js";
import { hindsightCritic } from "../critic/teacher-critic.js";
import type { AgentView, Transition } from "../environment/environment.js";
import { RlxarInputError } from "../errors.js";
import { type Episode, episodeTrajectory } from "../rollout/rollout.js";
import { type ChainReading, readChain } from "./candidates.js";
import { queryKey } from "../policy/log-linear/query-key.js";
import { readStatedRelation } from "./relations.js";

/** The step a criterion is checked against: what the agent saw, what it wrote, what came back. */
export interface GymCheckedStep {
  readonly view: AgentView;
  readonly transition: Transition;
}

/** Which steps a template is written for. */
export type GymStepClass = "search" | "finish" | "other";

/**
 * One template of the gym's criterion grammar: its text with slots (`{entity}` a name, `{n}` a
 * count), how a teacher fills the slots from the prefix alone (no gold), and the checker that
 * says whether a step meets the criterion *as written* — from the slot values the text carries,
 * so a criterion μ writes is checked for what it says, not for what the teacher would have said.
 */
export interface GymCriterionTemplate {
  readonly key: string;
  readonly text: string;
  readonly for: GymStepClass;
  /** The slot values for this step, read from the view before it; undefined when the template does not apply. */
  fill(reading: ChainReading, step: GymCheckedStep): Readonly<Record<string, string>> | undefined;
  check(slots: Readonly<Record<string, string>>, reading: ChainReading, step: GymCheckedStep): boolean;
}

const SEARCH = /^Search\[([\s\S]*)\]$/u;
const FINISH = /^Finish\[([\s\S]*)\]$/u;
const argument = (step: GymCheckedStep, pattern: RegExp) => pattern.exec(step.transition.actionText)?.[1]?.trim();

/** The query's words, lower-cased: a search "targets" a name when its words are some of the name's. */
const targets = (query: string, name: string) => {
  const words = new Set(queryKey(name).split(" "));
  const asked = queryKey(query)
    .split(" ")
    .filter((w) => w !== "");
  return asked.length > 0 && asked.every((w) => words.has(w));
};

const expectedSlot = (reading: ChainReading) =>
  reading.expected === undefined ? undefined : { entity: reading.expected };

/**
 * The gym's criterion grammar (ours: ARCO's criteria are free text from an LLM; the gym's are a
 * small grammar so that every criterion μ writes can be checked). Search steps have five
 * templates, Finish steps five, anything else (an invalid or forced step) five, so K ≤ 5 fills
 * from any step (ARCO's sensitivity runs K ∈ {1, 3, 5}); the order is the teacher's order of
 * importance, so the first three of each class are what K = 3 writes.
 */
export const GYM_CRITERIA: readonly GymCriterionTemplate[] = [
  {
    key: "follows-chain",
    text: "Searches for {entity}, the entity the question needs next",
    for: "search",
    fill: expectedSlot,
    check: ({ entity }, reading, step) => {
      const query = argument(step, SEARCH);
      return query !== undefined && entity === reading.expected && targets(query, entity!);
    },
  },
  {
    key: "finds-paragraph",
    text: "Retrieves the paragraph about {entity}",
    for: "search",
    fill: expectedSlot,
    check: ({ entity }, _reading, step) =>
      step.transition.kind === "tool" && readStatedRelation(step.transition.observation)?.subject === entity,
  },
  {
    key: "whole-name",
    text: "Names {entity} in full, not by a word a look-alike shares",
    for: "search",
    fill: expectedSlot,
    check: ({ entity }, _reading, step) => {
      const query = argument(step, SEARCH);
      return query !== undefined && queryKey(query) === queryKey(entity!);
    },
  },
  {
    key: "new-query",
    text: "Does not repeat an earlier search",
    for: "search",
    fill: () => ({}),
    check: (_slots, reading, step) => {
      const query = argument(step, SEARCH);
      return query !== undefined && !reading.issued.has(queryKey(query));
    },
  },
  {
    key: "chain-open",
    text: "Searches while {n} of the relations are still unfound",
    for: "search",
    fill: (reading) => ({ n: String(Math.max(0, reading.hops - reading.found)) }),
    check: ({ n }, reading) => Number(n) === reading.hops - reading.found && reading.found < reading.hops,
  },
  {
    key: "answers-expected",
    text: "Answers with {entity}, the last entity the chain reached",
    for: "finish",
    fill: expectedSlot,
    check: ({ entity }, reading, step) => entity === reading.expected && argument(step, FINISH) === entity,
  },
  {
    key: "chain-complete",
    text: "Answers only after all {n} relations are found",
    for: "finish",
    fill: (reading) => ({ n: String(reading.hops) }),
    check: ({ n }, reading) => Number(n) === reading.hops && reading.found >= reading.hops,
  },
  {
    key: "answer-in-evidence",
    text: "Answers with a name the retrieved paragraphs hold",
    for: "finish",
    fill: () => ({}),
    check: (_slots, reading, step) => {
      const answer = argument(step, FINISH);
      const seen = new Set(reading.names.filter((name) => name !== reading.questionEntity));
      return answer !== undefined && seen.has(answer);
    },
  },
  {
    key: "answers-not-question",
    text: "Does not answer with {entity}, the entity the question names",
    for: "finish",
    fill: (reading) => (reading.questionEntity === undefined ? undefined : { entity: reading.questionEntity }),
    check: ({ entity }, _reading, step) => {
      const answer = argument(step, FINISH);
      return answer !== undefined && answer !== entity;
    },
  },
  {
    key: "searched-first",
    text: "Answers after at least one search",
    for: "finish",
    fill: () => ({}),
    check: (_slots, reading) => reading.issued.size > 0,
  },
  {
    key: "well-formed",
    text: "Writes a well-formed Search or Finish action",
    for: "other",
    fill: () => ({}),
    check: (_slots, _reading, step) => step.transition.kind === "tool" || step.transition.kind === "finish",
  },
  {
    key: "within-budget",
    text: "Acts within the search budget",
    for: "other",
    fill: () => ({}),
    check: (_slots, _reading, step) => step.transition.kind !== "violation",
  },
  {
    key: "moves-on",
    text: "Moves the chain toward an answer",
    for: "other",
    fill: () => ({}),
    check: (_slots, _reading, step) => step.transition.kind === "tool" || step.transition.kind === "finish",
  },
  {
    key: "names-entity",
    text: "Names an entity the question or the paragraphs hold",
    for: "other",
    fill: () => ({}),
    check: (_slots, reading, step) => reading.names.some((name) => step.transition.actionText.includes(name)),
  },
  {
    key: "closes-action",
    text: "Closes its action with a bracket",
    for: "other",
    fill: () => ({}),
    check: (_slots, _reading, step) => /\]\s*$/u.test(step.transition.actionText),
  },
];

/**
 * The gym's fixed criteria (ARCO's "w/o adaptive" ablation: one list for every step), the first
 * K of them: slot-free templates of each class, so the checkers score them on any step (a
 * criterion of another class than the step's is not met).
 */
export const GYM_FIXED_CRITERIA: readonly string[] = [
  "Does not repeat an earlier search",
  "Answers with a name the retrieved paragraphs hold",
  "Names an entity the question or the paragraphs hold",
  "Answers after at least one search",
  "Closes its action with a bracket",
];

function checkK(k: number): void {
  if (!Number.isInteger(k) || k < 1) throw new RlxarInputError("k", `expected an integer ≥ 1, got ${k}`);
}

const classOf = (step: GymCheckedStep): GymStepClass =>
  step.transition.kind === "tool" ? "search" : step.transition.kind === "finish" ? "finish" : "other";

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&");
const SLOT_PATTERNS: Readonly<Record<string, string>> = { entity: "[A-Z][a-z]+ [A-Z][a-z]+", n: "\\d+" };
const READERS = GYM_CRITERIA.map((template) => {
  const slots: string[] = [];
  const source = escapeRegExp(template.text).replace(/\\\{(\w+)\\\}/gu, (_, slot: string) => {
    slots.push(slot);
    return `(${SLOT_PATTERNS[slot]})`;
  });
  return { template, slots, pattern: new RegExp(`^${source}$`, "u") };
});

/** A criterion read back into its template and slot values; undefined when it is not one of the grammar's. */
export interface ReadCriterion {
  readonly key: string;
  readonly slots: Readonly<Record<string, string>>;
}

/** Reads a criterion's text against the grammar (whitespace at the ends ignored). */
export function readGymCriterion(text: string): ReadCriterion | undefined {
  const trimmed = text.trim();
  for (const { template, slots, pattern } of READERS) {
    const match = pattern.exec(trimmed);
    if (match !== null)
      return { key: template.key, slots: Object.fromEntries(slots.map((s, i) => [s, match[i + 1]!])) };
  }
  return undefined;
}

/**
 * The checker's verdict on a criterion for a step: true when the step meets it as written, false
 * when it does not, undefined when the text is not one of the grammar's (μ wrote something else).
 * A criterion written for another kind of step (a Finish criterion on a search) is not met.
 *
 * @example
 * checkGymCriterion("Names Zorvex Labs in full, not by a word a look-alike shares", step); // false for Search[Zorvex]
 */
export function checkGymCriterion(text: string, step: GymCheckedStep): boolean | undefined {
  const read = readGymCriterion(text);
  if (read === undefined) return undefined;
  const template = GYM_CRITERIA.find((t) => t.key === read.key)!;
  if (template.for !== classOf(step)) return false;
  return template.check(read.slots, readChain(step.view), step);
}

/** The first `k` criteria the grammar writes for a step, slots filled from the prefix, with the checker's verdicts. */
export function gymStepCriteria(step: GymCheckedStep, k: number): { criteria: string[]; verdicts: boolean[] } {
  checkK(k);
  const reading = readChain(step.view);
  const kind = classOf(step);
  const filled = GYM_CRITERIA.filter((t) => t.for === kind).flatMap((template) => {
    const slots = template.fill(reading, step);
    if (slots === undefined) return [];
    const text = template.text.replace(/\{(\w+)\}/gu, (_, slot: string) => slots[slot]!);
    return [{ text, verdict: template.check(slots, reading, step) }];
  });
  if (k > filled.length)
    throw new RlxarInputError("k", `the gym's grammar writes ${filled.length} criteria for this step, got k = ${k}`);
  const chosen = filled.slice(0, k);
  return { criteria: chosen.map((c) => c.text), verdicts: chosen.map((c) => c.verdict) };
}

/**
 * The gym teacher's annotation of an episode (the warm-up's targets for μ): per step, the first K
 * criteria of the grammar with slots copied from the prefix, each scored +0.8 when its checker
 * says the step meets it and −0.8 when not, then projected (a uniform shift, then clamping) so
 * that Σ_t mean_k = R, as ARCO's warm-up projects its annotator's.
 *
 * @example
 * const annotation = gymTeacherAnnotation(episode, 3); // annotation.steps[t].criteria, .scores
 */
export function gymTeacherAnnotation(episode: Episode, k = 3): TrajectoryAnnotation {
  return annotated(
    episode,
    episode.steps.map((step) => gymStepCriteria(step, k)),
  );
}

/**
 * The warm-up's targets for a μ with fixed criteria (ARCO's "w/o adaptive"): every step scored on
 * the first K of {@link GYM_FIXED_CRITERIA} by their checkers, ±0.8 by verdict, projected so that
 * Σ_t mean_k = R as {@link gymTeacherAnnotation}'s are.
 */
export function gymFixedAnnotation(episode: Episode, k = 3): TrajectoryAnnotation {
  checkK(k);
  if (k > GYM_FIXED_CRITERIA.length)
    throw new RlxarInputError("k", `the gym has ${GYM_FIXED_CRITERIA.length} fixed criteria, got k = ${k}`);
  const criteria = GYM_FIXED_CRITERIA.slice(0, k);
  return annotated(
    episode,
    episode.steps.map((step) => ({ criteria, verdicts: criteria.map((c) => checkGymCriterion(c, step) === true) })),
  );
}

/** Verdicts as ±0.8, projected so that Σ_t mean_k = R. */
function annotated(
  episode: Episode,
  judged: readonly { readonly criteria: readonly string[]; readonly verdicts: readonly boolean[] }[],
): TrajectoryAnnotation {
  const raw = judged.map((j) => j.verdicts.map((met) => (met ? 0.8 : -0.8)));
  const { projected, shift } = projectTeacherScores(raw, episode.reward);
  return {
    trajectory: episodeTrajectory(episode).id,
    outcome: episode.reward,
    shift,
    steps: judged.map((j, t) => ({ criteria: [...j.criteria], raw: raw[t]!, scores: projected[t]! })),
  };
}

/** How often a critic's dimension scores agree with the checkers (ARCO's action-grounding probe measures the like: 42–55 %). */
export interface CriterionValidity {
  /** Criteria that read as the grammar's and were scored. */
  readonly checked: number;
  /** Of those, how many the score's sign agrees with (score > 0 and met, or score ≤ 0 and not met). */
  readonly agreed: number;
  /** agreed / checked; null when nothing could be checked. */
  readonly validity: number | null;
  /** Criteria that are not the grammar's (free text μ wrote): no verdict. */
  readonly unread: number;
}

/**
 * Criterion validity of a critic's ratings: for every criterion of every step that reads as the
 * grammar's, does its dimension score's sign agree with the checker's verdict on that step?
 *
 * @example
 * criterionValidity(episodes, await critic.rate(episodes)).validity; // 1 for the teacher's own raw scores
 */
export function criterionValidity(
  episodes: readonly Episode[],
  ratings: readonly (readonly { readonly criteria: readonly string[]; readonly scores: readonly number[] }[])[],
): CriterionValidity {
  if (ratings.length !== episodes.length)
    throw new RlxarInputError("ratings", `expected one list per episode (${episodes.length}), got ${ratings.length}`);
  let checked = 0;
  let agreed = 0;
  let unread = 0;
  episodes.forEach((episode, e) => {
    const steps = ratings[e]!;
    if (steps.length !== episode.steps.length)
      throw new RlxarInputError(`ratings[${e}]`, `expected ${episode.steps.length} steps, got ${steps.length}`);
    steps.forEach((rating, t) => {
      rating.criteria.forEach((criterion, c) => {
        const verdict = checkGymCriterion(criterion, episode.steps[t]!);
        if (verdict === undefined) {
          unread++;
          return;
        }
        checked++;
        if (rating.scores[c]! > 0 === verdict) agreed++;
      });
    });
  });
  return { checked, agreed, validity: checked === 0 ? null : agreed / checked, unread };
}

/**
 * The gym teacher's hindsight scores as a critic (a control, the gym's counterpart of HotpotQA's
 * `teacherCritic`): each step rated by `gymTeacherAnnotation` — the grammar's first K criteria,
 * the checkers' verdicts, projected so that Σ_t s_t = R. Frozen, and like every hindsight critic
 * (`hindsightCritic`) it rates whole episodes only: it needs their outcome.
 *
 * @example
 * await trainCoEvolution({ environment: arcoGym(), train, policy, critic: gymTeacherCritic(3), settings });
 */
export function gymTeacherCritic(k = 3): StepCritic {
  checkK(k);
  return hindsightCritic("the gym teacher's critic", (episode) => gymTeacherAnnotation(episode, k));
}
