import { type ChatMessage, choiceJson, formatZodIssues, type LanguageModel } from "@rubric/core";
import { z } from "zod";
import { AnnotationReplyError } from "../errors.js";
import { DEFAULT_MAX_OBSERVATION_CHARS, renderObservation } from "../step/observation.js";
import { criteriaCount, type PromptStyle, WORDING } from "../step/prompt.js";
import type { Trajectory } from "../step/step.js";
import { projectTeacherScores } from "./projection.js";

/** One step as the teacher annotated it. */
export interface AnnotatedStep {
  /** K criteria, as written. */
  readonly criteria: string[];
  /** The teacher's K scores as written (not clamped). */
  readonly raw: number[];
  /** The scores clamped and projected so that the trajectory's Σ_t mean_k = R. */
  readonly scores: number[];
}

/** A whole trajectory annotated: one entry per turn, in order. */
export interface TrajectoryAnnotation {
  readonly trajectory: string;
  readonly outcome: number;
  readonly steps: AnnotatedStep[];
  /** The uniform shift λ the projection added. */
  readonly shift: number;
}

/** How {@link annotateTrajectory} asks. */
export interface AnnotatorOptions {
  /** Criteria per step; 3 by default. */
  readonly k?: number;
  /** Observations cut to this many characters in the prompt ({@link DEFAULT_MAX_OBSERVATION_CHARS} by default). */
  readonly maxObservationChars?: number;
  /** The wording, as the step prompt's: `qa` (ARCO's; the default) or `generic`. */
  readonly style?: PromptStyle;
  /** What the budget counts; `Searches remaining` (qa) or `Steps remaining` (generic) by default. */
  readonly budgetLabel?: string;
  /** The agent's environment and actions, added to the system prompt. */
  readonly environment?: string;
  /** The reply's token budget; 128 per step by default, as ARCO's annotator. */
  readonly maxTokens?: number;
  readonly signal?: AbortSignal;
}

const SYSTEM =
  "You are an expert evaluator of multi-step agents. You see a whole finished trajectory and its " +
  "final reward, and for every step you write local, context-specific criteria and score the step " +
  "against each of them. Answer with JSON only.";

/**
 * ARCO's whole-trajectory annotation prompt, in our words: the question, every step with its
 * budget, action and observation, the reward R, and the contract: exactly K criteria and K scores
 * in [−1, 1] per step, with a scoring guide and the hard constraint that the per-step means sum
 * to R. Unlike the step prompt, the annotator sees each action's result: it judges in hindsight
 * what μ will learn to judge beforehand.
 *
 * @example
 * const [, user] = annotationPrompt(trajectory, { k: 3 });
 * user.content.includes("must sum to exactly 1"); // for a trajectory with outcome 1
 */
export function annotationPrompt(trajectory: Trajectory, options: AnnotatorOptions = {}): [ChatMessage, ChatMessage] {
  const k = criteriaCount(options.k);
  const maxChars = options.maxObservationChars ?? DEFAULT_MAX_OBSERVATION_CHARS;
  const wording = WORDING[options.style ?? "qa"];
  const label = options.budgetLabel ?? wording.budget;
  const steps = trajectory.turns
    .map(
      (turn, t) =>
        `Step ${t + 1} (${label.toLowerCase()} before it: ${turn.budgetLeft})\n` +
        `Action: ${turn.action}\nObservation: ${renderObservation(turn.observation, maxChars)}`,
    )
    .join("\n\n");
  const n = trajectory.turns.length;
  const user = [
    `${wording.task}: ${trajectory.task}`,
    "",
    `Trajectory (${n} step${n === 1 ? "" : "s"}):`,
    steps,
    "",
    `Final reward R = ${trajectory.outcome}`,
    "",
    `For every step, write exactly ${k} short criteria that step should be judged on, and score the step ` +
      `against each: ${k} scores in [-1, 1], one per criterion.`,
    "Scoring guide: +0.7 to +1.0 the step clearly advances the task; +0.3 to +0.7 it helps; " +
      "-0.3 to +0.3 neutral or unclear; -0.7 to -0.3 it hurts (a wasted or redundant step); " +
      "-1.0 to -0.7 it derails the task (an invalid action, a budget violation, a wrong final answer).",
    `Hard constraint: the mean of each step's ${k} scores, summed over all ${n} steps, must sum to exactly ` +
      `${trajectory.outcome}, the final reward.`,
    `Reply with JSON only: {"steps": [{"step": 1, "criteria": [${k} strings], "scores": [${k} numbers]}, …]}, ` +
      `one entry per step, ${n} in all, in order.`,
  ].join("\n");
  const system = options.environment === undefined ? SYSTEM : `${SYSTEM}\n\n${options.environment}`;
  return [
    { role: "system", content: system },
    { role: "user", content: user },
  ];
}

const ReplySchema = z.object({
  steps: z.array(
    z.object({
      step: z.int().min(1),
      criteria: z.array(z.string()),
      scores: z.array(z.number()),
    }),
  ),
});

/** The JSON schema sent as `response_format`, for servers that enforce one. */
function replyJsonSchema(k: number, n: number): Record<string, unknown> {
  return {
    type: "object",
    additionalProperties: false,
    required: ["steps"],
    properties: {
      steps: {
        type: "array",
        minItems: n,
        maxItems: n,
        items: {
          type: "object",
          additionalProperties: false,
          required: ["step", "criteria", "scores"],
          properties: {
            step: { type: "integer", minimum: 1 },
            criteria: { type: "array", minItems: k, maxItems: k, items: { type: "string" } },
            scores: { type: "array", minItems: k, maxItems: k, items: { type: "number" } },
          },
        },
      },
    },
  };
}

/**
 * Annotates a whole trajectory with a teacher model: one call (temperature 0) with
 * {@link annotationPrompt}, the reply read by zod, then the scores projected onto the outcome
 * ({@link projectTeacherScores}). A reply that is not exactly one entry per step, numbered in
 * order, each with K criteria and K scores, is an `AnnotationReplyError` naming every faulty step
 * and field. ARCO instead gives every step R/n when parsing fails; we refuse, because μ would
 * then learn uniform scores and no criteria as if a teacher had written them.
 *
 * @example
 * const annotation = await annotateTrajectory(openAICompatible({ baseUrl, model: "gpt-4o" }), trajectory);
 * annotation.steps[0]?.criteria; // ["Targets the first hop", …]
 */
export async function annotateTrajectory(
  model: LanguageModel,
  trajectory: Trajectory,
  options: AnnotatorOptions = {},
): Promise<TrajectoryAnnotation> {
  const k = criteriaCount(options.k);
  const n = trajectory.turns.length;
  const response = await model.generate({
    messages: annotationPrompt(trajectory, options),
    responseFormat: { type: "json-schema", name: "trajectory_annotation", schema: replyJsonSchema(k, n) },
    temperature: 0,
    maxTokens: options.maxTokens ?? 128 * n,
    signal: options.signal,
  });
  const choice = response.choices[0];
  const value = choiceJson(choice);
  const fail = (problems: string[]) => new AnnotationReplyError(trajectory.id, problems);
  if (value === undefined) throw fail([`(root): no JSON in the reply ${JSON.stringify(choice?.text ?? "")}`]);
  const parsed = ReplySchema.safeParse(value);
  if (!parsed.success) throw fail(parsed.error.issues.map((issue) => formatZodIssues([issue])));

  const reply = parsed.data.steps;
  const problems: string[] = [];
  if (reply.length !== n) problems.push(`steps: expected ${n} entries (one per step), got ${reply.length}`);
  reply.forEach((entry, t) => {
    if (entry.step !== t + 1) problems.push(`steps[${t}].step: expected ${t + 1}, got ${entry.step}`);
    if (entry.criteria.length !== k)
      problems.push(`steps[${t}].criteria: expected ${k} criteria, got ${entry.criteria.length}`);
    if (entry.scores.length !== k)
      problems.push(`steps[${t}].scores: expected ${k} scores, got ${entry.scores.length}`);
  });
  if (problems.length > 0) throw fail(problems);

  const { projected, shift } = projectTeacherScores(
    reply.map((entry) => entry.scores),
    trajectory.outcome,
  );
  return {
    trajectory: trajectory.id,
    outcome: trajectory.outcome,
    steps: reply.map((entry, t) => ({ criteria: entry.criteria, raw: entry.scores, scores: projected[t]! })),
    shift,
  };
}
