/**
 * Hand-set gym policy weights that follow the chain by whole names and finish at its end: the
 * optimal policy, which succeeds on every task (`learning.test.ts` checks it).
 */
export const OPTIMAL_GYM_WEIGHTS: Readonly<Record<string, number>> = {
  "search:expected": 5,
  "search:full": 2,
  "search:repeat": -3,
  "search:chainComplete": -5,
  "finish:chainComplete": 10,
  "finish:expected": 3,
};
