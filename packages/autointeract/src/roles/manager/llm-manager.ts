import {
  FlatRubricSchema,
  type ChatMessage,
  type FlatRubric,
  type GenerateResponse,
  type LanguageModel,
  type TokenUsage,
} from "@rubric/core";
import { choiceJson, formatZodIssues } from "@rubric/core";
import { z } from "zod";
import type { DialogueState } from "../../dialogue/dialogue.js";
import { RoleOutputError } from "../../dialogue/errors.js";
import type { Manager, ManagerMove } from "./manager.js";

export interface LlmManagerOptions {
  /** Questions to ask before writing the rubric (capped by the episode's budget). Default 3. */
  readonly questions?: number;
  /** Most criteria a rubric may have. Default 12 (the paper's learned rubrics have ≈ 12). */
  readonly maxCriteria?: number;
  /** Attempts to repair an invalid rubric before giving up with `RoleOutputError`. Default 1. */
  readonly repairs?: number;
  readonly seed?: number;
  readonly temperature?: number;
}

const QUESTION_SCHEMA = {
  type: "object",
  properties: { question: { type: "string", minLength: 3, maxLength: 200 } },
  required: ["question"],
  additionalProperties: false,
};

function rubricSchema(maxCriteria: number) {
  return {
    type: "object",
    properties: {
      criteria: {
        type: "array",
        minItems: 1,
        maxItems: maxCriteria,
        items: {
          type: "object",
          // Enum weights: grammar engines do not all enforce integer bounds (see TOOLCHAIN notes).
          properties: { text: { type: "string", minLength: 3, maxLength: 200 }, weight: { enum: [1, 2, 3, 4, 5] } },
          required: ["text", "weight"],
          additionalProperties: false,
        },
      },
    },
    required: ["criteria"],
    additionalProperties: false,
  };
}

const DraftSchema = z.object({ criteria: z.array(z.object({ text: z.string(), weight: z.number() })) });

/** The manager's instructions, shared with the SFT corpus so training and use see the same prompt. */
export const MANAGER_SYSTEM_PROMPT =
  "You are a manager. Before briefing a worker you ask the stakeholder short questions to learn what they value, " +
  "then write a rubric: weighted, verifiable criteria in plain language (one checkable property each, about 15–20 words), " +
  "weights 1–5 by importance. Reply only with JSON matching the schema you are given.";

function transcriptMessages(state: DialogueState): ChatMessage[] {
  const lines = state.exchanges.map((e, i) => `Q${i + 1}: ${e.question.text}\nA${i + 1}: ${e.answer}`).join("\n\n");
  return [
    { role: "system", content: MANAGER_SYSTEM_PROMPT },
    {
      role: "user",
      content: `Task:\n${state.task.prompt}\n\nConversation so far:\n${lines === "" ? "(none)" : lines}`,
    },
  ];
}

function addUsage(a: TokenUsage | undefined, b: TokenUsage): TokenUsage {
  const cached =
    a?.cachedInputTokens === undefined && b.cachedInputTokens === undefined
      ? undefined
      : (a?.cachedInputTokens ?? 0) + (b.cachedInputTokens ?? 0);
  return {
    inputTokens: (a?.inputTokens ?? 0) + b.inputTokens,
    outputTokens: (a?.outputTokens ?? 0) + b.outputTokens,
    cachedInputTokens: cached,
  };
}

/**
 * A manager played by a language model: it asks a few questions (structured output), then
 * writes the rubric as structured output validated by core's schema. An invalid rubric gets a
 * repair prompt naming the fault; still invalid, the move fails with `RoleOutputError`. Criteria
 * are judged by the `llm-judge` verifier. The object holds no dialogue state, so concurrent
 * episodes may share it.
 */
export function llmManager(model: LanguageModel, options: LlmManagerOptions = {}): Manager {
  const toAsk = options.questions ?? 3;
  const maxCriteria = options.maxCriteria ?? 12;
  const repairs = options.repairs ?? 1;
  const temperature = options.temperature ?? 0.7;
  return {
    name: `llm-manager:${model.modelId}`,
    async next(state: DialogueState): Promise<ManagerMove> {
      const seed = (options.seed ?? 0) + state.exchanges.length;
      const signal = state.signal ? { signal: state.signal } : {};
      const asking = state.exchanges.length < toAsk && state.questionsLeft > 0 && state.turnsLeft > 1;
      if (asking) {
        const response = await model.generate({
          messages: [
            ...transcriptMessages(state),
            { role: "user", content: 'Ask your next question. JSON: {"question": "..."}' },
          ],
          responseFormat: { type: "json-schema", name: "question", schema: QUESTION_SCHEMA },
          temperature,
          seed,
          // Room for the longest question the schema allows, even in a character-level tokenizer:
          // a reply cut off by the cap is invalid JSON however good its start.
          maxTokens: 400,
          ...signal,
        });
        const parsed = z.object({ question: z.string().trim().min(1) }).safeParse(json(response));
        if (!parsed.success) throw new RoleOutputError(`the manager's question did not parse: ${excerpt(response)}`);
        return { type: "ask", question: { text: parsed.data.question }, usage: response.usage, model: model.modelId };
      }
      const messages: ChatMessage[] = [
        ...transcriptMessages(state),
        { role: "user", content: `Write the rubric now: at most ${maxCriteria} criteria.` },
      ];
      let usage: TokenUsage | undefined;
      let problem = "";
      for (let attempt = 0; attempt <= repairs; attempt++) {
        const response = await model.generate({
          messages,
          responseFormat: { type: "json-schema", name: "rubric", schema: rubricSchema(maxCriteria) },
          temperature,
          seed: seed + attempt,
          maxTokens: 200 + 300 * maxCriteria,
          ...signal,
        });
        usage = addUsage(usage, response.usage);
        const draft = DraftSchema.safeParse(json(response));
        const rubric: unknown = draft.success
          ? {
              id: `${state.task.id}-rubric`,
              criteria: draft.data.criteria.map((c, i) => ({
                id: `c${i + 1}`,
                text: c.text.trim(),
                weight: c.weight,
                verifier: { kind: "llm-judge" },
              })),
            }
          : undefined;
        const checked = FlatRubricSchema.safeParse(rubric);
        if (checked.success) return { type: "submit", rubric: checked.data as FlatRubric, usage, model: model.modelId };
        problem = draft.success ? formatZodIssues(checked.error, { limit: 1 }) : "the reply is not the rubric JSON";
        messages.push(
          { role: "assistant", content: response.choices[0]?.text ?? "" },
          { role: "user", content: `That rubric is invalid (${problem}). Reply again with corrected JSON only.` },
        );
      }
      throw new RoleOutputError(`the manager's rubric is still invalid after ${repairs} repair(s): ${problem}`);
    },
  };
}

function json(response: GenerateResponse): unknown {
  return choiceJson(response.choices[0]);
}

function excerpt(response: GenerateResponse): string {
  const text = response.choices[0]?.text ?? "";
  return JSON.stringify(text.length > 120 ? `${text.slice(0, 117)}...` : text);
}
