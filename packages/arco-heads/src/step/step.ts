import { z } from "zod";

/** One earlier turn of the agent: what it did and what the environment answered. */
export const TurnSchema = z.strictObject({
  action: z.string(),
  observation: z.string(),
});
export type Turn = z.infer<typeof TurnSchema>;

/**
 * The unit μ scores: a task, every earlier turn with its observation, the budget left before
 * this action, and the action itself — never the action's own result, so μ judges the action
 * causally, as ARCO does. Any multi-step agent fits: `budgetLeft` is whatever the agent's budget
 * counts (searches in ARCO's QA environment, tool calls, turns).
 */
export const StepSchema = z.strictObject({
  task: z.string(),
  history: z.array(TurnSchema),
  budgetLeft: z.int().min(0),
  action: z.string(),
});
export type Step = z.infer<typeof StepSchema>;

/**
 * A finished trajectory as an annotator or trainer sees it: each turn with the budget left before
 * its action, and the outcome R (ARCO's exact match, 0 or 1).
 */
export const TrajectorySchema = z.strictObject({
  id: z.string().min(1),
  task: z.string(),
  turns: z.array(TurnSchema.extend({ budgetLeft: z.int().min(0) })).min(1),
  outcome: z.number(),
});
export type Trajectory = z.infer<typeof TrajectorySchema>;

/**
 * The steps of a trajectory, one per turn: step t sees turns 0…t−1 whole and turn t's action.
 *
 * @example
 * stepsOf({ id: "q1", task: "Who?", outcome: 1, turns: [
 *   { action: "Search[a]", observation: "A is…", budgetLeft: 3 },
 *   { action: "Finish[b]", observation: "", budgetLeft: 2 },
 * ] })[1];
 * // { task: "Who?", history: [{ action: "Search[a]", observation: "A is…" }], budgetLeft: 2, action: "Finish[b]" }
 */
export function stepsOf(trajectory: Trajectory): Step[] {
  const history = trajectory.turns.map(({ action, observation }) => ({ action, observation }));
  return trajectory.turns.map((turn, t) => ({
    task: trajectory.task,
    history: history.slice(0, t),
    budgetLeft: turn.budgetLeft,
    action: turn.action,
  }));
}
