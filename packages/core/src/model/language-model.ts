import { z } from "zod";

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

export interface LanguageModel {
  /** Provider name, e.g. `hf`, `openai-compatible`, `llama-cpp`. */
  readonly provider: string;
  /** Model id as the provider knows it; part of every cache key. */
  readonly modelId: string;
  generate(request: GenerateRequest): Promise<GenerateResponse>;
}
