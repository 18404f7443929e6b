import { renderObservation } from "@rubric/arco-heads";
import type { ChatMessage } from "@rubric/core";
import type { AgentView, Environment } from "../environment/environment.js";

/** What the policy prompts need of an environment: its description and its actions' written forms. */
export type PromptEnvironment = Pick<Environment<unknown>, "description" | "grammar">;

export interface PolicyPromptOptions {
  /**
   * Observations in the history cut to this many characters (arco-heads' `renderObservation`).
   * Default `Infinity`: ARCO shows them whole; a small policy with few positions wants them cut.
   */
  readonly maxObservationChars?: number;
}

/**
 * The policy's system prompt, after ARCO's (described in its reference notes, worded here): the
 * environment's description, its action forms, and the house rules its model was trained under:
 * a short reply with one action line, short search phrases, no repeated search, yes/no questions
 * answered with the bare word, answers short but complete.
 *
 * @example
 * policySystemPrompt(env).split("\n")[0]; // the environment's description
 */
export function policySystemPrompt(environment: PromptEnvironment): string {
  const forms = environment.grammar.forms.map((form) => `  ${form}`).join("\n");
  return [
    environment.description.trim(),
    "",
    "Reply with exactly one of these actions, on one line:",
    forms,
    "",
    "Rules:",
    "- Keep the whole reply under 64 tokens; the last line must be the action.",
    "- Search with a short phrase (an entity or a key fact), not a full sentence.",
    "- Never repeat a search you already made; change the phrase or finish.",
    "- When the question asks yes or no, answer Finish[yes] or Finish[no].",
    "- Make the final answer concise but complete: the entity, date or number asked for, nothing more.",
  ].join("\n");
}

/**
 * The history as the turn prompt shows it: `Action: …` / `Observation: …` lines, or `(none)`.
 *
 * @example
 * historyText({ ...view, history: [{ action: "Search[Dune]", observation: "Dune is a novel." }] });
 * // "Action: Search[Dune]\nObservation: Dune is a novel."
 */
export function historyText(view: AgentView, options: PolicyPromptOptions = {}): string {
  if (view.history.length === 0) return "(none)";
  const cut = options.maxObservationChars ?? Number.POSITIVE_INFINITY;
  return view.history
    .map((turn) => `Action: ${turn.action}\nObservation: ${renderObservation(turn.observation, cut)}`)
    .join("\n");
}

/** `1 search` / `N searches`, as ARCO's turn prompt counts the budget. */
function searchesLeft(n: number): string {
  return `${n} ${n === 1 ? "search" : "searches"}`;
}

/**
 * The user message of an ordinary turn: the question, the history, the searches left.
 *
 * @example
 * policyTurnPrompt({ taskId: "q", task: "Who?", history: [], budgetLeft: 1, mustFinish: false });
 * // "Question: Who?\n\nHistory:\n(none)\n\nYou have 1 search remaining.\nWrite your next action."
 */
export function policyTurnPrompt(view: AgentView, options: PolicyPromptOptions = {}): string {
  return [
    `Question: ${view.task}`,
    "",
    "History:",
    historyText(view, options),
    "",
    `You have ${searchesLeft(view.budgetLeft)} remaining.`,
    "Write your next action.",
  ].join("\n");
}

/**
 * The user message once the budget is spent (ARCO's forced-finish prompt, which replaces the turn
 * prompt): the same question and history, and the order to answer now with Finish, since a search
 * would end the episode without an answer.
 *
 * @example
 * policyForcedFinishPrompt({ ...view, budgetLeft: 0, mustFinish: true }); // "… reply with Finish[answer] only. …"
 */
export function policyForcedFinishPrompt(view: AgentView, options: PolicyPromptOptions = {}): string {
  return [
    `Question: ${view.task}`,
    "",
    "History:",
    historyText(view, options),
    "",
    "You have 0 searches remaining. You must answer now: reply with Finish[answer] only.",
    "Another search is a violation and ends the episode with no answer.",
  ].join("\n");
}

/**
 * The chat a policy reads for one view: the system prompt, then the turn prompt, or the
 * forced-finish prompt when the environment insists on an answer (`view.mustFinish`).
 *
 * @example
 * const messages = policyMessages(env, { taskId: "q1", task: "Who wrote Dune?", history: [], budgetLeft: 3, mustFinish: false });
 * messages[1].content; // "Question: Who wrote Dune?\n\nHistory:\n(none)\n\nYou have 3 searches remaining.\n…"
 */
export function policyMessages(
  environment: PromptEnvironment,
  view: AgentView,
  options: PolicyPromptOptions = {},
): ChatMessage[] {
  return [
    { role: "system", content: policySystemPrompt(environment) },
    {
      role: "user",
      content: view.mustFinish ? policyForcedFinishPrompt(view, options) : policyTurnPrompt(view, options),
    },
  ];
}
