import { type ChatMessage, definedFields } from "@rubric/core";
import { z } from "zod";
import { ArcoInputError } from "../errors.js";
import { DEFAULT_MAX_OBSERVATION_CHARS, renderObservation } from "./observation.js";
import type { Step } from "./step.js";

/**
 * The prompt's wording: `qa`, ARCO's question-answering agent ("Question:", search-flavoured
 * example dimensions, "Searches remaining"); `generic`, any other multi-step agent ("Task:",
 * dimensions that fit tool calls, code edits or dialogue turns, "Steps remaining").
 */
export const PROMPT_STYLES = ["qa", "generic"] as const;
export type PromptStyle = (typeof PROMPT_STYLES)[number];

/**
 * Where the action stands in the user message: `arco`, ARCO's order (the action to evaluate,
 * then the instructions for the criteria); `action-last` (ours), the instructions first and the
 * action last, so the prompt's last tokens are the action's own and a score head that reads the
 * last position (`pooling: "last"`) reads the state at the action, not at the instructions'
 * fixed words.
 */
export const PROMPT_LAYOUTS = ["arco", "action-last"] as const;
export type PromptLayout = (typeof PROMPT_LAYOUTS)[number];

/**
 * The step prompt's settings that belong to a trained μ: it learns to read one wording, so the
 * model directory's manifest keeps them (`prompt`) and every backend reads them from there. A μ
 * scored with another wording than it was trained on gives other scores (a step scored −0.023
 * from the CLI and +0.106 through the API, before these travelled with the model).
 */
export const StepPromptSettingsSchema = z.strictObject({
  style: z.enum(PROMPT_STYLES).optional(),
  /** A description of the agent's environment and actions, added to the system prompt. */
  environment: z.string().optional(),
  /** What the budget counts, written before the number. */
  budgetLabel: z.string().min(1).optional(),
  /** Each history observation cut to this many characters. */
  maxObservationChars: z.int().min(1).optional(),
  /** Where the action stands (`PROMPT_LAYOUTS`); absent: ARCO's order. */
  layout: z.enum(PROMPT_LAYOUTS).optional(),
});
export type StepPromptSettings = z.infer<typeof StepPromptSettingsSchema>;

/** How a step is written for μ. */
export interface StepPromptOptions {
  /** Criteria per step; 3 by default, as in ARCO. */
  readonly k?: number;
  /** The wording; `qa` (ARCO's) by default. */
  readonly style?: PromptStyle;
  /** Each history observation cut to this many characters ({@link DEFAULT_MAX_OBSERVATION_CHARS} by default). */
  readonly maxObservationChars?: number;
  /** What the budget counts, written before the number; `Searches remaining` (qa) or `Steps remaining` (generic) by default. */
  readonly budgetLabel?: string;
  /** A description of the agent's environment and actions, added to the system prompt (ARCO injects its task description there). */
  readonly environment?: string;
  /** Where the action stands ({@link PROMPT_LAYOUTS}); `arco` by default. */
  readonly layout?: PromptLayout;
}

/**
 * `options` over a model's saved `settings`: a field given in `options` wins, an absent (or
 * `undefined`) one falls back to the saved value. How every backend reads a manifest's `prompt`.
 */
export function withPromptSettings(
  settings: StepPromptSettings | undefined,
  options: StepPromptOptions,
): StepPromptOptions {
  return definedFields({
    k: options.k,
    style: options.style ?? settings?.style,
    environment: options.environment ?? settings?.environment,
    budgetLabel: options.budgetLabel ?? settings?.budgetLabel,
    maxObservationChars: options.maxObservationChars ?? settings?.maxObservationChars,
    layout: options.layout ?? settings?.layout,
  });
}

/** The words that change between the two styles (the annotator's prompt reads the same). */
export const WORDING: Record<
  PromptStyle,
  { readonly task: string; readonly budget: string; readonly dimensions: string; readonly finished: string }
> = {
  qa: {
    task: "Question",
    budget: "Searches remaining",
    dimensions:
      "how well a query targets what is still unknown, planning, gathering evidence, readiness to answer, redundancy",
    finished: "spends budget when none is left",
  },
  generic: {
    task: "Task",
    budget: "Steps remaining",
    dimensions:
      "progress toward the task, correctness of the action, use of what earlier observations showed, " +
      "efficiency, readiness to finish",
    finished: "acts when no budget is left",
  },
};

/**
 * ARCO's evaluator system prompt, in our words (the reference describes its prompts; it is not
 * copied): μ writes local criteria for one step, not a rationale, as JSON only.
 */
const SYSTEM =
  "You are an expert evaluator of an agent's steps. For the step you are shown, write local, " +
  "context-specific criteria (the dimensions, rules or principles this step should be judged on), " +
  "not a rationale and not a verdict. Answer with JSON only.";

/**
 * The step prompt μ reads: the question, every earlier action with its observation (`(none)` at
 * the first step), the budget left before this action, and the action — never the action's own
 * result. The user text asks for exactly K criteria as `{"criteria": [...]}`, with ARCO's two
 * special cases (a malformed action is judged as an invalid action; acting with no budget left as
 * a budget violation).
 *
 * Where ours differs from ARCO's `step.txt`: observations are cut to `maxObservationChars` (see
 * {@link DEFAULT_MAX_OBSERVATION_CHARS}); the budget label and a `generic` style (for agents that
 * do not search) are options, so a coding agent's steps do not read as questions; the wording is ours.
 *
 * @example
 * const [system, user] = stepPrompt({ task: "Who wrote X?", history: [], budgetLeft: 3, action: "Search[X author]" });
 * user.content.includes("Searches remaining before this action: 3"); // true
 */
export function stepPrompt(step: Step, options: StepPromptOptions = {}): [ChatMessage, ChatMessage] {
  const k = criteriaCount(options.k);
  const maxChars = options.maxObservationChars ?? DEFAULT_MAX_OBSERVATION_CHARS;
  const wording = WORDING[options.style ?? "qa"];
  const label = options.budgetLabel ?? wording.budget;
  const history =
    step.history.length === 0
      ? "(none)"
      : step.history
          .map((turn) => `Action: ${turn.action}\nObservation: ${renderObservation(turn.observation, maxChars)}`)
          .join("\n");
  const action = `Action to evaluate: ${step.action}`;
  const instructions = [
    `Write exactly ${k} short criteria on which this action should be judged (for example: ${wording.dimensions}). ` +
      `If the action is malformed, judge it as an invalid action; if it ${wording.finished}, ` +
      "judge it as a budget violation.",
    `Reply with JSON only: {"criteria": [${Array.from({ length: k }, (_, i) => `"criterion ${i + 1}"`).join(", ")}]}`,
  ];
  const user = [
    `${wording.task}: ${step.task}`,
    "",
    `Trajectory so far:\n${history}`,
    "",
    `${label} before this action: ${step.budgetLeft}`,
    "",
    ...((options.layout ?? "arco") === "arco" ? [action, "", ...instructions] : [...instructions, "", action]),
  ].join("\n");
  const system = options.environment === undefined ? SYSTEM : `${SYSTEM}\n\n${options.environment}`;
  return [
    { role: "system", content: system },
    { role: "user", content: user },
  ];
}

/** K from an option: an integer ≥ 1, 3 when absent. */
export function criteriaCount(k: number | undefined, path = "k"): number {
  const value = k ?? 3;
  if (!Number.isInteger(value) || value < 1) throw new ArcoInputError(path, `expected an integer ≥ 1, got ${value}`);
  return value;
}
