import type { ChatMessage } from "@rubric/core";
import { ArcoInputError } from "../errors.js";
import { criteriaTarget } from "../step/criteria.js";
import { type StepPromptOptions, stepPrompt } from "../step/prompt.js";
import type { Step } from "../step/step.js";
import { BOS_ID, EOS_ID } from "../tokenizer/byte-bpe.js";
import type { MuTokenizer } from "../tokenizer/tokenizer.js";

/**
 * How a step becomes the token ids μ reads, on both sides of the wire: the TypeScript side
 * tokenizes, the sidecar sees ids only. A small μ has no chat template, so the two messages are
 * joined under plain role lines; a model trained on these ids reads them the same way everywhere.
 */
export function promptText(messages: readonly ChatMessage[]): string {
  return `${messages.map((m) => `${m.role}:\n${m.content}`).join("\n\n")}\n\nassistant:\n`;
}

/** A step as μ reads it: `<bos>` + the prompt's ids, and the criteria's ids (EOS appended for training only). */
export interface StepIds {
  readonly prompt: number[];
  readonly criteria: number[];
}

/** Where a step's prompt had to give way to fit the model's positions. */
export interface PromptFit {
  readonly ids: number[];
  /** Earlier turns left out (oldest first) so the prompt fits; 0 when it fitted whole. */
  readonly droppedTurns: number;
}

/**
 * The prompt ids of `step`, at most `maxTokens` long. When the whole prompt does not fit, the
 * oldest turns of the history are left out (the action and the most recent turns matter most to
 * the step's criteria) and the result says how many; a prompt that does not fit with no history
 * at all is an `ArcoInputError` naming `path`.
 *
 * How many to leave out is found by bisection, not one turn at a time: each try re-tokenizes the
 * whole prompt, so dropping turns one by one was quadratic in the history (a step with 4,000
 * short turns took 51 s). Leaving out more turns never lengthens the prompt's text, so the
 * bisection finds the fewest turns to drop, in O(log n) tokenizations.
 */
export function fitPrompt(
  tokenizer: MuTokenizer,
  step: Step,
  maxTokens: number,
  options: StepPromptOptions = {},
  path = "step",
): PromptFit {
  const idsWithout = (dropped: number) => [
    BOS_ID,
    ...tokenizer.encode(promptText(stepPrompt({ ...step, history: step.history.slice(dropped) }, options))),
  ];
  const whole = idsWithout(0);
  if (whole.length <= maxTokens) return { ids: whole, droppedTurns: 0 };
  const bare = step.history.length === 0 ? whole : idsWithout(step.history.length);
  if (bare.length > maxTokens) {
    throw new ArcoInputError(
      path,
      `its prompt takes ${bare.length} tokens with no history, more than the ${maxTokens} this model leaves for a prompt`,
    );
  }
  // Invariant: dropping `tooFew` turns does not fit; dropping `enough` does, giving `fitted`.
  let tooFew = 0;
  let enough = step.history.length;
  let fitted = bare;
  while (enough - tooFew > 1) {
    const middle = tooFew + Math.floor((enough - tooFew) / 2);
    const ids = idsWithout(middle);
    if (ids.length <= maxTokens) {
      enough = middle;
      fitted = ids;
    } else {
      tooFew = middle;
    }
  }
  return { ids: fitted, droppedTurns: enough };
}

/**
 * The criteria's ids as μ writes them: the canonical `{"criteria":[…]}` text (see
 * `criteriaTarget`), with EOS when it is a training target. An empty list (the "no rubric"
 * ablation) is no tokens at all.
 */
export function criteriaIds(tokenizer: MuTokenizer, criteria: readonly string[], withEos = false): number[] {
  if (criteria.length === 0) return [];
  const ids = tokenizer.encode(criteriaTarget(criteria));
  return withEos ? [...ids, EOS_ID] : ids;
}
