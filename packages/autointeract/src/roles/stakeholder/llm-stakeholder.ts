import type { ChatMessage, FlatRubric, LanguageModel, StagedRubric } from "@rubric/core";
import type { DialogueState, Question } from "../../dialogue/dialogue.js";
import type { Answer, Stakeholder } from "./stakeholder.js";
import { preferenceOutline } from "./outline.js";

export interface LlmStakeholderOptions {
  /** The hidden preferences: the stakeholder's true utility. */
  readonly rubric: FlatRubric | StagedRubric;
  /** How this person talks, e.g. "a busy CFO who answers in one short sentence". */
  readonly persona?: string;
  readonly maxTokens?: number;
  readonly seed?: number;
}

/**
 * A stakeholder played by a language model. It knows its preferences only as an outline (see
 * `preferenceOutline`), answers in a few natural sentences, and never recites a rubric. Every
 * call builds its messages from the dialogue state, so one object can serve concurrent episodes.
 */
export function llmStakeholder(model: LanguageModel, options: LlmStakeholderOptions): Stakeholder {
  const system =
    `You commissioned a piece of work and a manager is asking you questions before briefing a worker.\n` +
    `What you care about, in your own mind:\n${preferenceOutline(options.rubric)}\n\n` +
    `Answer each question in one to three natural sentences, as yourself${options.persona ? ` (${options.persona})` : ""}. ` +
    `Do not list these points or mention a rubric, scores or points; say what matters to you when asked.`;
  return {
    name: `llm-stakeholder:${model.modelId}`,
    async answer(question: Question, state: DialogueState): Promise<Answer> {
      const messages: ChatMessage[] = [
        { role: "system", content: system },
        { role: "user", content: `The task: ${state.task.prompt}` },
        { role: "assistant", content: "Understood." },
      ];
      for (const e of state.exchanges)
        messages.push({ role: "user", content: e.question.text }, { role: "assistant", content: e.answer });
      messages.push({ role: "user", content: question.text });
      const response = await model.generate({
        messages,
        temperature: 0.7,
        seed: (options.seed ?? 0) + state.exchanges.length,
        maxTokens: options.maxTokens ?? 160,
        signal: state.signal,
      });
      return {
        text: (response.choices[0]?.text ?? "").trim(),
        usage: response.usage,
        model: model.modelId,
        costUsd: response.costUsd,
      };
    },
  };
}
