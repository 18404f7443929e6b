import { ChatMessageSchema, toJsonLines } from "@rubric/core";
import { z } from "zod";
import { ArcoInputError } from "../errors.js";
import { readRecords } from "../records/read-records.js";
import { criteriaTarget } from "../step/criteria.js";
import { type StepPromptOptions, stepPrompt } from "../step/prompt.js";
import { stepsOf, type Trajectory } from "../step/step.js";
import type { TrajectoryAnnotation } from "./annotator.js";
import { DEFAULT_DECOMPOSITION_TOLERANCE, decompositionGap } from "./projection.js";

/**
 * One μ-SFT example: a step prompt and what μ should answer to it. The sidecar's `mu.sft` trains
 * CE on `target` (plus EOS) after `messages`, and 10 × MSE of the score head's d_t against `scores`.
 */
export const MuSftExampleSchema = z.strictObject({
  /** `<trajectory id>#<step index>`, unique in a file. */
  id: z.string().min(1),
  trajectory: z.string().min(1),
  /** 0-based step index in the trajectory. */
  step: z.int().min(0),
  /** The step prompt: system then user (see `stepPrompt`). */
  messages: z.array(ChatMessageSchema).min(1),
  /** The generation target, `{"criteria":[…]}` (see `criteriaTarget`). */
  target: z.string(),
  /** The K criteria of `target`. */
  criteria: z.array(z.string()).min(1),
  /** The K projected teacher scores, the score head's regression target. */
  scores: z.array(z.number().min(-1).max(1)).min(1),
  /** The trajectory's outcome R. */
  outcome: z.number(),
});
export type MuSftExample = z.infer<typeof MuSftExampleSchema>;

/** How {@link muSftExamples} selects and writes. */
export interface MuSftOptions extends StepPromptOptions {
  /** Keep trajectories with |Σ_t mean − R| below this; 0.05 by default (ARCO). */
  readonly tolerance?: number;
}

/** What {@link muSftExamples} made of one trajectory. */
export interface MuSftSelection {
  readonly examples: MuSftExample[];
  /** Why the trajectory gave no examples: ARCO keeps only multi-step trajectories whose scores decompose R. */
  readonly skipped?: "single-step" | "decomposition";
}

/**
 * The μ-SFT examples of one annotated trajectory, selected as ARCO selects them: the trajectory
 * must have more than one step and its (projected) scores must decompose R to within
 * `tolerance`; a step whose criteria are all empty is dropped. Each example's prompt is the RL
 * step prompt, so μ is fine-tuned on exactly what it will later read.
 *
 * @example
 * const annotation = await annotateTrajectory(teacher, trajectory);
 * const { examples } = muSftExamples(trajectory, annotation);
 * appendFileSync("mu-sft.jsonl", muSftJsonLines(examples));
 */
export function muSftExamples(
  trajectory: Trajectory,
  annotation: TrajectoryAnnotation,
  options: MuSftOptions = {},
): MuSftSelection {
  if (annotation.trajectory !== trajectory.id) {
    throw new ArcoInputError(
      "annotation.trajectory",
      `expected ${JSON.stringify(trajectory.id)}, got ${JSON.stringify(annotation.trajectory)}`,
    );
  }
  if (annotation.steps.length !== trajectory.turns.length) {
    throw new ArcoInputError(
      "annotation.steps",
      `expected ${trajectory.turns.length} steps (one per turn), got ${annotation.steps.length}`,
    );
  }
  if (trajectory.turns.length < 2) return { examples: [], skipped: "single-step" };
  const scores = annotation.steps.map((step) => step.scores);
  const tolerance = options.tolerance ?? DEFAULT_DECOMPOSITION_TOLERANCE;
  if (!(decompositionGap(scores, trajectory.outcome) < tolerance)) return { examples: [], skipped: "decomposition" };

  const examples: MuSftExample[] = [];
  stepsOf(trajectory).forEach((step, t) => {
    const { criteria, scores: target } = annotation.steps[t]!;
    if (criteria.every((c) => c.trim() === "")) return;
    examples.push({
      id: `${trajectory.id}#${t}`,
      trajectory: trajectory.id,
      step: t,
      messages: stepPrompt(step, { ...options, k: criteria.length }),
      target: criteriaTarget(criteria),
      criteria,
      scores: target,
      outcome: trajectory.outcome,
    });
  });
  return { examples };
}

/**
 * μ-SFT examples as JSON lines, one per line, newline-terminated (append-safe).
 *
 * @example
 * writeFileSync("mu-sft.jsonl", muSftJsonLines(examples));
 */
export function muSftJsonLines(examples: readonly MuSftExample[]): string {
  return toJsonLines(examples.map((example) => MuSftExampleSchema.parse(example)));
}

/**
 * The examples of a μ-SFT JSON-lines file; an `ArcoFileError` lists every bad line and repeated id.
 *
 * @example
 * const examples = readMuSftExamples(readInputText("mu-sft.jsonl"), "mu-sft.jsonl");
 */
export function readMuSftExamples(text: string, source: string): MuSftExample[] {
  return readRecords(text, MuSftExampleSchema, source, (example) => example.id);
}
