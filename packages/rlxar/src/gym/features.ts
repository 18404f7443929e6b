import type { ChainReading, GymCandidate, NameRoles } from "./candidates.js";

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
