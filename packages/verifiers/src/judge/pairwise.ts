import type { LanguageModel, TokenUsage } from "@rubric/core";
import { z } from "zod";
import { choiceJson } from "@rubric/core";
import { VerificationError } from "../errors.js";
import { FENCE_NOTICE, JUDGE_SYSTEM_PROMPT, dataFence } from "./prompts.js";

export interface PairwiseInput {
  /** What the two responses are compared on. */
  readonly criterion: string;
  readonly input?: string;
  readonly a: string;
  readonly b: string;
}

export interface PairwiseVerdict {
  /** `a`, `b`, or `tie` — a tie also when the two orders disagree (the judge followed position, not content). */
  readonly winner: "a" | "b" | "tie";
  /** Whether both orders picked the same response (or both a tie). */
  readonly consistent: boolean;
  readonly rationales: readonly [string, string];
  readonly usage: TokenUsage;
}

const PairwiseReplySchema = z.object({ rationale: z.string(), preferred: z.enum(["first", "second", "tie"]) }).loose();
const PAIRWISE_SCHEMA = {
  type: "object",
  properties: { rationale: { type: "string" }, preferred: { enum: ["first", "second", "tie"] } },
  required: ["rationale", "preferred"],
  additionalProperties: false,
};

/** Thrown when a pairwise reply does not parse; carries the raw text. */
export class JudgeReplyError extends VerificationError {
  override readonly name = "JudgeReplyError";
  readonly code = "verification.judge-reply";
  constructor(
    message: string,
    readonly raw: string,
  ) {
    super(message);
  }
}

function prompt(criterion: string, input: string | undefined, first: string, second: string): string {
  const fence = dataFence([input ?? "", first, second]);
  const taskFence = dataFence([input ?? ""]);
  return [
    FENCE_NOTICE,
    input ? `## Task\n${taskFence.wrap(input)}` : "",
    `## First response\n${fence.wrap(first)}`,
    `## Second response\n${fence.wrap(second)}`,
    `## Criterion\n${criterion}`,
    'Which response better satisfies the criterion? Reply with JSON: {"rationale": "<one or two sentences>", "preferred": "first" | "second" | "tie"}.',
  ]
    .filter((s) => s !== "")
    .join("\n\n");
}

/**
 * Compares two responses on one criterion, judging both orders (A first, then B first) to cancel
 * the judge's position bias: the winner is the one both orders prefer, otherwise a tie.
 *
 * @example
 * const { winner, consistent } = await judgePairwise(model, { criterion: "Cites its sources", a, b });
 */
export async function judgePairwise(
  model: LanguageModel,
  input: PairwiseInput,
  options: { seed?: number; signal?: AbortSignal } = {},
): Promise<PairwiseVerdict> {
  const ask = async (first: string, second: string) => {
    const response = await model.generate({
      messages: [
        { role: "system", content: JUDGE_SYSTEM_PROMPT },
        { role: "user", content: prompt(input.criterion, input.input, first, second) },
      ],
      responseFormat: { type: "json-schema", name: "preference", schema: PAIRWISE_SCHEMA },
      temperature: 0,
      seed: options.seed ?? 0,
      maxTokens: 300,
      signal: options.signal,
    });
    const choice = response.choices[0];
    const text = choice?.text ?? "";
    const reply = PairwiseReplySchema.safeParse(choiceJson(choice));
    if (!reply.success) throw new JudgeReplyError("the pairwise judge's reply did not parse", text);
    return { reply: reply.data, usage: response.usage };
  };
  const [ab, ba] = await Promise.all([ask(input.a, input.b), ask(input.b, input.a)]);
  const first = ab.reply.preferred === "first" ? "a" : ab.reply.preferred === "second" ? "b" : "tie";
  const second = ba.reply.preferred === "first" ? "b" : ba.reply.preferred === "second" ? "a" : "tie";
  const consistent = first === second;
  return {
    winner: consistent ? first : "tie",
    consistent,
    rationales: [ab.reply.rationale, ba.reply.rationale],
    usage: {
      inputTokens: ab.usage.inputTokens + ba.usage.inputTokens,
      outputTokens: ab.usage.outputTokens + ba.usage.outputTokens,
    },
  };
}
