import { z } from "zod";
import { RubricError } from "../errors/rubric-error.js";

/**
 * The one small interface every model provider implements (as the Vercel AI SDK's
 * `LanguageModelV2`): plain data in, plain data out. Judges, managers and stakeholders hold a
 * `LanguageModel` and never know which provider is behind it; providers live in their own
 * package, `@rubric/providers`, and are swapped by passing a different object.
 */

export const ChatMessageSchema = z.strictObject({
  role: z.enum(["system", "user", "assistant"]),
  content: z.string(),
});
export type ChatMessage = z.infer<typeof ChatMessageSchema>;

/** Ask for JSON matching a schema; providers enforce it (grammar, `response_format`) where they can. */
export interface JsonSchemaFormat {
  readonly type: "json-schema";
  readonly name: string;
  readonly schema: Readonly<Record<string, unknown>>;
}

export interface GenerateRequest {
  readonly messages: readonly ChatMessage[];
  readonly responseFormat?: JsonSchemaFormat;
  readonly temperature?: number;
  readonly maxTokens?: number;
  /** Every sampling run takes an explicit seed where the provider supports one. */
  readonly seed?: number;
  /** Number of samples (choices) to return. Default 1. */
  readonly n?: number;
  /** Return log-probabilities of the generated tokens, with this many alternatives per token. */
  readonly topLogprobs?: number;
  readonly signal?: AbortSignal;
}

export interface TokenLogprob {
  readonly token: string;
  readonly logprob: number;
  readonly top?: readonly { readonly token: string; readonly logprob: number }[];
}

export interface GeneratedChoice {
  readonly text: string;
  /** The text parsed as JSON when a JSON format was requested and the text parsed; else undefined. */
  readonly json?: unknown;
  readonly logprobs?: readonly TokenLogprob[];
  readonly finishReason?: string;
}

export const TokenUsageSchema = z.strictObject({
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  /** Prompt tokens served from the provider's prompt cache (a reused prefix) rather than evaluated; part of `inputTokens`. */
  cachedInputTokens: z.number().int().min(0).optional(),
});
export type TokenUsage = Readonly<z.infer<typeof TokenUsageSchema>>;

export interface GenerateResponse {
  readonly choices: readonly GeneratedChoice[];
  readonly usage: TokenUsage;
  /** Cost of the call in USD when the provider reports or prices it. */
  readonly costUsd?: number;
  /** The provider's own model id for the call, when it differs from the requested one. */
  readonly modelId?: string;
}

/**
 * The version of this interface. A later version can change `generate` without breaking every
 * provider at once: code that takes models checks the version (`checkLanguageModel`) and adapts
 * or refuses by it, as the AI SDK's `specificationVersion` lets its callers do.
 */
export const LANGUAGE_MODEL_SPECIFICATION = "v1" as const;

export interface LanguageModel {
  /**
   * Which version of this interface the model implements. Absent means v1: every provider written
   * before the field existed implements v1.
   */
  readonly specificationVersion?: typeof LANGUAGE_MODEL_SPECIFICATION;
  /** Provider name, e.g. `hf`, `openai-compatible`, `llama-cpp`. */
  readonly provider: string;
  /** Model id as the provider knows it; part of every cache key. */
  readonly modelId: string;
  generate(request: GenerateRequest): Promise<GenerateResponse>;
}

/** A value given where a `LanguageModel` was expected is not one this version of the toolkit can use. */
export class LanguageModelContractError extends RubricError {
  override readonly name = "LanguageModelContractError";
  readonly code = "model.contract";
}

/**
 * `model`, checked to be a `LanguageModel` of a specification this version reads: `provider` and
 * `modelId` strings, a `generate` function, and `specificationVersion` absent or
 * {@link LANGUAGE_MODEL_SPECIFICATION}. Anything else is a `LanguageModelContractError` naming
 * `path` and what was found, rather than a `TypeError` on the first call.
 *
 * @example
 * checkLanguageModel(openAICompatible({ baseUrl, model: "qwen" }), "judge"); // the model
 * checkLanguageModel({ specificationVersion: "v2", … }, "judge"); // throws: judge implements v2
 */
export function checkLanguageModel(model: unknown, path = "model"): LanguageModel {
  const m = model as Partial<Record<keyof LanguageModel, unknown>> | null;
  if (m === null || typeof m !== "object" || typeof m.generate !== "function")
    throw new LanguageModelContractError(
      `${path}: expected a LanguageModel (an object with generate), got ${describe(model)}`,
    );
  if (typeof m.provider !== "string" || typeof m.modelId !== "string")
    throw new LanguageModelContractError(
      `${path}: expected string provider and modelId, got ${describe(m.provider)} and ${describe(m.modelId)}`,
    );
  if (m.specificationVersion !== undefined && m.specificationVersion !== LANGUAGE_MODEL_SPECIFICATION)
    throw new LanguageModelContractError(
      `${path}: ${m.provider}/${m.modelId} implements LanguageModel ${JSON.stringify(m.specificationVersion)}; this @rubric/core reads ${LANGUAGE_MODEL_SPECIFICATION}: upgrade @rubric/core, or adapt the model`,
    );
  return model as LanguageModel;
}

function describe(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
}
