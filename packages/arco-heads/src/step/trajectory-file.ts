import { z } from "zod";
import type { TrajectoryAnnotation } from "../annotation/annotator.js";
import { projectTeacherScores } from "../annotation/projection.js";
import { ArcoInputError } from "../errors.js";
import { readRecords } from "../records/read-records.js";
import type { Trajectory } from "./step.js";

/**
 * One step of an agent's logged run: what it did and what came back. `budgetLeft` is optional (a
 * log rarely records it; {@link trajectoryOf} derives it from the run's budget), and a teacher's
 * `criteria` with their `scores` in [−1, 1] may come along, for a warm-up before μ learns from
 * outcomes alone.
 */
export const AgentStepSchema = z
  .strictObject({
    action: z.string(),
    observation: z.string(),
    budgetLeft: z.int().min(0).optional(),
    criteria: z.array(z.string()).min(1).optional(),
    scores: z.array(z.number().min(-1).max(1)).min(1).optional(),
  })
  .superRefine((step, context) => {
    if ((step.criteria === undefined) !== (step.scores === undefined))
      context.addIssue({
        code: "custom",
        path: [step.criteria === undefined ? "criteria" : "scores"],
        message: "criteria and scores come together (a teacher's annotation) or not at all",
      });
    else if (step.criteria !== undefined && step.criteria.length !== step.scores!.length)
      context.addIssue({
        code: "custom",
        path: ["scores"],
        message: `expected one score per criterion (${step.criteria.length}), got ${step.scores!.length}`,
      });
  });
export type AgentStep = z.infer<typeof AgentStepSchema>;

/**
 * One line of a trajectories file (`rubric mu train --trajectories`): a finished run of any
 * multi-step agent, its steps in order and its outcome R ∈ [0, 1] (1 = the task was done). `budget`
 * is what the agent may spend in all (steps, tool calls, searches), if the log knows it.
 */
export const TrajectoryRecordSchema = z
  .strictObject({
    id: z.string().min(1),
    task: z.string(),
    steps: z.array(AgentStepSchema).min(1),
    outcome: z.number().min(0).max(1),
    budget: z.int().min(1).optional(),
  })
  .superRefine((record, context) => {
    const annotated = record.steps.filter((step) => step.criteria !== undefined).length;
    if (annotated !== 0 && annotated !== record.steps.length)
      context.addIssue({
        code: "custom",
        path: ["steps"],
        message: `${annotated} of ${record.steps.length} steps carry criteria: a teacher's annotation covers every step or none`,
      });
  });
export type TrajectoryRecord = z.infer<typeof TrajectoryRecordSchema>;

/**
 * The trajectories of a JSON-lines file, one `{id, task, steps: [{action, observation}], outcome}`
 * per line. Every bad line (and any repeated id) is listed, numbered, in one `ArcoFileError`
 * naming `source`.
 *
 * @example
 * const runs = readTrajectories(readFileSync("runs.jsonl", "utf8"), "runs.jsonl");
 */
export function readTrajectories(text: string, source: string): TrajectoryRecord[] {
  return readRecords(text, TrajectoryRecordSchema, source, (record) => record.id);
}

/**
 * The budget assumed for runs whose log gives none: the longest run's step count, so the last
 * step of that run sees 1 left. A log that does know its agent's limit should say so (`budget`).
 */
export function inferredBudget(records: readonly TrajectoryRecord[]): number {
  return Math.max(1, ...records.map((record) => record.steps.length));
}

/**
 * A logged run as μ reads it: each step's `budgetLeft` as logged, else the run's `budget` (or
 * `budget` given here) less the steps before it, never below 0.
 *
 * @example
 * trajectoryOf({ id: "r1", task: "Fix the test", outcome: 1, steps: [
 *   { action: "run_tests()", observation: "1 failed" }, { action: "edit(a.py)", observation: "ok" },
 * ] }, 5).turns.map((turn) => turn.budgetLeft); // [5, 4]
 */
export function trajectoryOf(record: TrajectoryRecord, budget?: number): Trajectory {
  const total = record.budget ?? budget;
  return {
    id: record.id,
    task: record.task,
    outcome: record.outcome,
    turns: record.steps.map((step, t) => {
      const budgetLeft = step.budgetLeft ?? (total === undefined ? undefined : Math.max(0, total - t));
      if (budgetLeft === undefined)
        throw new ArcoInputError(
          `${record.id}.steps[${t}].budgetLeft`,
          "absent, and neither the run nor the call gives a budget to count it from",
        );
      return { action: step.action, observation: step.observation, budgetLeft };
    }),
  };
}

/**
 * The teacher's annotation a record carries (every step's criteria and scores), its scores
 * projected onto the outcome as ARCO projects its annotator's (Σ_t mean_k = R); `undefined` when
 * the record carries none. Every step must hold K criteria: another count is an `ArcoInputError`
 * naming the step.
 */
export function annotationOf(record: TrajectoryRecord, k: number): TrajectoryAnnotation | undefined {
  if (record.steps[0]?.criteria === undefined) return undefined;
  const scores = record.steps.map((step, t) => {
    if (step.criteria!.length !== k)
      throw new ArcoInputError(
        `${record.id}.steps[${t}].criteria`,
        `expected ${k} criteria (K of this μ), got ${step.criteria!.length}`,
      );
    return step.scores!;
  });
  const { projected, shift } = projectTeacherScores(scores, record.outcome);
  return {
    trajectory: record.id,
    outcome: record.outcome,
    steps: record.steps.map((step, t) => ({ criteria: step.criteria!, raw: step.scores!, scores: projected[t]! })),
    shift,
  };
}
