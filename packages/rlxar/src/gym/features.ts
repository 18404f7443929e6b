import type { Episode } from "../rollout/rollout.js";
import { type ChainReading, type GymCandidate, gymCandidates, type NameRoles, readChain } from "./candidates.js";

const ROLES: readonly (keyof NameRoles)[] = [
  "expected",
  "question",
  "lastSubject",
  "lastObject",
  "earlierObject",
  "retrieved",
  "aside",
];

/**
 * The gym policy's named features φ(a, view), each 0 or 1, in weight order. Searches and Finishes
 * have disjoint features, so each kind's cues weigh searching against finishing. The state
 * indicators (the chain is complete, the last search went off it) sit on one kind's actions each,
 * so a linear softmax can say "search the entity the chain needs next, by its whole name, until
 * every relation is found; then finish with it" — the optimal policy — and equally "search a word
 * of it alone", a careless teacher's habit.
 *
 * @example
 * gymPolicy().featureWeights()["search:expected"]; // 0 before training
 */
export const GYM_FEATURE_NAMES: readonly string[] = [
  "search",
  "search:chainComplete",
  "search:lastOffChain",
  "search:full",
  "search:first-word",
  "search:last-word",
  "search:repeat",
  ...ROLES.map((role) => `search:${role}`),
  "finish",
  "finish:chainComplete",
  "finish:lastOffChain",
  "finish:mustFinish",
  ...ROLES.map((role) => `finish:${role}`),
];

const INDEX = new Map(GYM_FEATURE_NAMES.map((name, i) => [name, i]));

const at = (name: string) => INDEX.get(name)!;

/** φ of every candidate, row-major: `candidates.length` rows of `GYM_FEATURE_NAMES.length` values. */
export function gymFeatureMatrix(candidates: readonly GymCandidate[], reading: ChainReading): Float64Array {
  const width = GYM_FEATURE_NAMES.length;
  const matrix = new Float64Array(candidates.length * width);
  const complete = reading.hops > 0 && reading.found >= reading.hops ? 1 : 0;
  const offChain = reading.last !== undefined && !reading.lastOnChain ? 1 : 0;
  candidates.forEach((c, i) => {
    const row = matrix.subarray(i * width, (i + 1) * width);
    const kind = c.kind;
    row[at(kind)] = 1;
    row[at(`${kind}:chainComplete`)] = complete;
    row[at(`${kind}:lastOffChain`)] = offChain;
    for (const role of ROLES) row[at(`${kind}:${role}`)] = c.roles[role] ? 1 : 0;
    if (c.kind === "search") {
      row[at(`search:${c.form}`)] = 1;
      row[at("search:repeat")] = c.repeat ? 1 : 0;
    } else row[at("finish:mustFinish")] = reading.mustFinish ? 1 : 0;
  });
  return matrix;
}

/**
 * φ of the action each step of an episode took (`GYM_FEATURE_NAMES`, the policy's own features),
 * one row per step: what a critic over the policy's features reads (`featureCritic`). A step whose
 * action is none of the view's candidates (an invalid action) is a row of zeros.
 *
 * @example
 * gymStepFeatures(episode)[0]![GYM_FEATURE_NAMES.indexOf("search:full")]; // 1 when the first search named the whole name
 */
export function gymStepFeatures(episode: Episode): number[][] {
  const width = GYM_FEATURE_NAMES.length;
  return episode.steps.map((step) => {
    const { reading, candidates } = gymCandidates(step.view);
    const taken = candidates.findIndex((candidate) => candidate.text === step.transition.actionText);
    if (taken === -1) return new Array<number>(width).fill(0);
    return Array.from(gymFeatureMatrix(candidates, reading).subarray(taken * width, (taken + 1) * width));
  });
}

/**
 * The features the action's text shows without the prefix (ARCO's "no prefix" ablation, for a
 * feature critic): its kind and, for a search, whether it names a whole name or one word of it.
 * The others (a role in the chain, a repeat, the chain's state) need the history to read.
 */
export const GYM_ACTION_FEATURE_NAMES: readonly string[] = [
  "search",
  "search:full",
  "search:first-word",
  "search:last-word",
  "finish",
];

const ACTION_COLUMNS = GYM_ACTION_FEATURE_NAMES.map(at);

/**
 * {@link gymStepFeatures} restricted to {@link GYM_ACTION_FEATURE_NAMES}: what a critic that
 * does not see the prefix can read of each step.
 *
 * @example
 * gymActionFeatures(episode)[0]; // [1, 1, 0, 0, 0]: a search by a whole name
 */
export function gymActionFeatures(episode: Episode): number[][] {
  return gymStepFeatures(episode).map((row) => ACTION_COLUMNS.map((column) => row[column]!));
}

/**
 * ψ of a gym state, read from the view alone (no gold): how much of the chain is found, whether
 * it is complete, whether the last search went off it, and the slack — searches left minus hops
 * still to find, one-hot (below 0 the chain can no longer be completed; at 0 every search left
 * must hit) — and the forced Finish. What a state value `V(h_t)` reads (`featureCritic` with
 * `objective: "value-difference"`).
 */
export const GYM_STATE_FEATURE_NAMES: readonly string[] = [
  "found",
  "complete",
  "lastOffChain",
  "slack<0",
  "slack=0",
  "slack=1",
  "slack≥2",
  "mustFinish",
];

/**
 * ψ (`GYM_STATE_FEATURE_NAMES`) of the state each step of an episode started from.
 *
 * @example
 * gymStateFeatures(episode)[0]; // [0, 0, 0, 0, 0, 1, 0, 0]: nothing found, one search to spare
 */
export function gymStateFeatures(episode: Episode): number[][] {
  return episode.steps.map((step) => {
    const reading = readChain(step.view);
    const toFind = Math.max(0, reading.hops - reading.found);
    const slack = reading.budgetLeft - toFind;
    return [
      reading.hops === 0 ? 0 : reading.found / reading.hops,
      toFind === 0 && reading.hops > 0 ? 1 : 0,
      reading.last !== undefined && !reading.lastOnChain ? 1 : 0,
      slack < 0 ? 1 : 0,
      slack === 0 ? 1 : 0,
      slack === 1 ? 1 : 0,
      slack >= 2 ? 1 : 0,
      reading.mustFinish ? 1 : 0,
    ];
  });
}
