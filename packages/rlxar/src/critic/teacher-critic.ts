import { RlxarInputError } from "../errors.js";
import { teacherAnnotation } from "../warmup/teacher.js";
import type { StepCritic } from "./step-critic.js";

/**
 * The gold teacher as a critic: every step rated with the teacher's hindsight annotation
 * (`teacherAnnotation`: criteria naming what the step did, scores projected so that
 * Σ_t s_t = R). It reads the outcome and whether each search found a gold paragraph, so it is
 * what μ is trained to imitate, perfectly informed: a control for experiments, showing what the
 * dense phase does when step scores are right (ARCO's claim, with μ's capacity taken out of
 * it), never a method. Frozen; it rates whole episodes only (no `rateSteps`: it needs their
 * outcome).
 *
 * @example
 * await trainCoEvolution({ environment: hotpotQa(), train, policy, critic: teacherCritic(3) });
 */
export function teacherCritic(k = 3): StepCritic {
  if (!Number.isInteger(k) || k < 1) throw new RlxarInputError("k", `expected an integer ≥ 1, got ${k}`);
  return {
    coEvolves: false,
    version: 0,
    async rate(episodes) {
      return episodes.map((episode) =>
        teacherAnnotation(episode, k).steps.map((step) => ({
          criteria: step.criteria,
          scores: step.scores,
          s: step.scores.reduce((sum, x) => sum + x, 0) / step.scores.length,
        })),
      );
    },
    async freezeReference() {},
    async resume() {},
    async update() {
      throw new RlxarInputError("critic", "the teacher critic is frozen: it cannot be updated");
    },
  };
}
