import type { ChatMessage } from "@rubric/core";
import { ArcoInputError } from "../errors.js";
import { DEFAULT_MAX_OBSERVATION_CHARS, renderObservation } from "./observation.js";
import type { Step } from "./step.js";

/** How a step is written for μ. */
export interface StepPromptOptions {
  /** Criteria per step; 3 by default, as in ARCO. */
  readonly k?: number;
  /** Each history observation cut to this many characters ({@link DEFAULT_MAX_OBSERVATION_CHARS} by default). */
  readonly maxObservationChars?: number;
  /** What the budget counts, written before the number; `Searches remaining` by default (ARCO's QA agent). */
  readonly budgetLabel?: string;
  /** A description of the agent's environment and actions, added to the system prompt (ARCO injects its task description there). */
  readonly environment?: string;
}

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
 * {@link DEFAULT_MAX_OBSERVATION_CHARS}); the budget label is an option so non-search agents read
 * naturally; the wording is ours.
 *
 * @example
 * const [system, user] = stepPrompt({ task: "Who wrote X?", history: [], budgetLeft: 3, action: "Search[X author]" });
 * user.content.includes("Searches remaining before this action: 3"); // true
 */
export function stepPrompt(step: Step, options: StepPromptOptions = {}): [ChatMessage, ChatMessage] {
  const k = criteriaCount(options.k);
  const maxChars = options.maxObservationChars ?? DEFAULT_MAX_OBSERVATION_CHARS;
  const label = options.budgetLabel ?? "Searches remaining";
  const history =
    step.history.length === 0
      ? "(none)"
      : step.history
          .map((turn) => `Action: ${turn.action}\nObservation: ${renderObservation(turn.observation, maxChars)}`)
          .join("\n");
  const user = [
    `Question: ${step.task}`,
    "",
    `Trajectory so far:\n${history}`,
    "",
    `${label} before this action: ${step.budgetLeft}`,
    "",
    `Action to evaluate: ${step.action}`,
    "",
    `Write exactly ${k} short criteria on which this action should be judged (for example: how well a query ` +
      "targets what is still unknown, planning, gathering evidence, readiness to answer, redundancy). " +
      "If the action is malformed, judge it as an invalid action; if it spends budget when none is left, " +
      "judge it as a budget violation.",
    `Reply with JSON only: {"criteria": [${Array.from({ length: k }, (_, i) => `"criterion ${i + 1}"`).join(", ")}]}`,
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
