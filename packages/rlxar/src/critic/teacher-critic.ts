import type { TrajectoryAnnotation } from "@rubric/arco-heads";
import { RlxarInputError } from "../errors.js";
import type { Episode } from "../rollout/rollout.js";
import { teacherAnnotation } from "../warmup/teacher.js";
import type { StepCritic, StepRating } from "./step-critic.js";

/**
 * A critic that never learns (a control, or a user's fixed judge): it rates with `rate` and
 * nothing else — no reference to freeze, nothing to resume, and `update` refuses, naming it.
 *
 * @example
 * const uniform = frozenCritic("a uniform critic", async (episodes) =>
 *   episodes.map((e) => e.steps.map(() => ({ criteria: [], scores: [e.reward / e.steps.length], s: e.reward / e.steps.length }))));
 */
export function frozenCritic(
  name: string,
  rate: (episodes: readonly Episode[]) => Promise<StepRating[][]>,
): StepCritic {
  return {
    coEvolves: false,
    version: 0,
    rate,
    async freezeReference() {},
    async resume() {},
    async update() {
      throw new RlxarInputError("critic", `${name} is frozen: it cannot be updated`);
    },
  };
}

/**
 * A frozen critic from a hindsight annotator: every step rated with its annotation's criteria
 * and projected scores, s_t their mean. It needs each episode's outcome, so it rates whole
 * episodes only (no `rateSteps`).
 */
export function hindsightCritic(name: string, annotate: (episode: Episode) => TrajectoryAnnotation): StepCritic {
  return frozenCritic(name, async (episodes) =>
    episodes.map((episode) =>
      annotate(episode).steps.map((step) => ({
        criteria: step.criteria,
        scores: step.scores,
        s: step.scores.reduce((sum, x) => sum + x, 0) / step.scores.length,
      })),
    ),
  );
}

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
  return hindsightCritic("the teacher critic", (episode) => teacherAnnotation(episode, k));
}
