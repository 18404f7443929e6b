import { drGrpoObjective, groupAdvantages, grpoObjective, gspoObjective } from "@rubric/core";

/** GSPO (sequence-level ratio, the paper's), or GRPO / Dr.GRPO (token-level ratios) for comparison. */
export type Objective = "gspo" | "grpo" | "dr-grpo";

export const OBJECTIVES: readonly Objective[] = ["gspo", "grpo", "dr-grpo"];

/**
 * Group advantages for an objective, from @rubric/core: Dr.GRPO centres rewards without dividing
 * by their standard deviation (its point: no difficulty bias); GSPO and GRPO normalise.
 */
export function advantagesFor(objective: Objective, rewards: readonly number[]): number[] {
  return groupAdvantages(rewards, { normalize: objective === "dr-grpo" ? "none" : "std" });
}

/** The clipped policy-gradient objective by name (loss, ratios, clipped fraction and ∂loss/∂logpNew), all from @rubric/core. */
export function clippedObjective(
  objective: Objective,
  input: { logpNew: number[][]; logpOld: number[][]; advantages: readonly number[]; epsLow: number; epsHigh: number },
) {
  const args = {
    logpNew: input.logpNew,
    logpOld: input.logpOld,
    advantages: [...input.advantages],
    epsLow: input.epsLow,
    epsHigh: input.epsHigh,
  };
  if (objective === "gspo") return gspoObjective(args);
  return objective === "grpo" ? grpoObjective(args) : drGrpoObjective(args);
}
