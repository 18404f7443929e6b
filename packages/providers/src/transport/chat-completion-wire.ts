import type { GeneratedChoice, GenerateRequest, GenerateResponse, TokenLogprob } from "@rubric/core";
import { z } from "zod";
import { ProviderResponseError } from "../errors.js";
import { extractJson, formatZodIssues } from "@rubric/core";

/**
 * The OpenAI chat-completions wire format, which the HF router, TGI, vLLM, llama.cpp's server
 * and OpenAI itself all speak: our request → its body, its response → our response.
 */

/**
 * Where a server's chat completions are, from the base URL a user gives: `…/v1` gets
 * `/chat/completions`, a full `…/chat/completions` URL stays, anything else gets
 * `/v1/chat/completions` (the rule `InferenceClient` applies to an `endpointUrl`).
 *
 * @example
 * chatCompletionsUrl("http://127.0.0.1:8080");    // "http://127.0.0.1:8080/v1/chat/completions"
 * chatCompletionsUrl("https://api.openai.com/v1"); // "https://api.openai.com/v1/chat/completions"
 */
export function chatCompletionsUrl(baseUrl: string): string {
  const url = baseUrl.trim().replace(/\/+$/, "");
  if (url.endsWith("/v1")) return `${url}/chat/completions`;
  return url.endsWith("/chat/completions") ? url : `${url}/v1/chat/completions`;
}

/** The body fields we send (the sender adds `model`). */
export interface ChatCompletionBody {
  readonly messages: { role: string; content: string }[];
  readonly max_tokens?: number;
  readonly temperature?: number;
  readonly seed?: number;
  readonly n?: number;
  readonly response_format?: {
    type: "json_schema";
    json_schema: { name: string; schema: Record<string, unknown>; strict: true };
  };
  readonly logprobs?: boolean;
  readonly top_logprobs?: number;
}

export function toChatCompletionBody(request: GenerateRequest): ChatCompletionBody {
  const format = request.responseFormat;
  return {
    messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
    // Absent fields stay absent: servers differ in which they accept, and their defaults apply.
    max_tokens: request.maxTokens,
    temperature: request.temperature,
    seed: request.seed,
    n: request.n,
    ...(format === undefined
      ? {}
      : {
          response_format: {
            type: "json_schema" as const,
            json_schema: { name: schemaName(format.name), schema: { ...format.schema }, strict: true as const },
          },
        }),
    ...(request.topLogprobs === undefined
      ? {}
      : { logprobs: true, ...(request.topLogprobs > 0 ? { top_logprobs: request.topLogprobs } : {}) }),
  };
}

/** OpenAI rejects schema names outside `[A-Za-z0-9_-]{1,64}`; a rubric's free-text name must not fail the call. */
function schemaName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_-]+/g, "_").slice(0, 64);
  return cleaned === "" ? "response" : cleaned;
}

const WireTopLogprobSchema = z.object({ token: z.string(), logprob: z.number() });

/** Only what we read; unknown fields (reasoning_content, system_fingerprint, …) are ignored. */
export const ChatCompletionResponseSchema = z.object({
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        index: z.number().int().optional(),
        message: z.object({ content: z.string().nullish() }),
        finish_reason: z.string().nullish(),
        logprobs: z
          .object({
            content: z
              .array(
                z.object({
                  token: z.string(),
                  logprob: z.number(),
                  top_logprobs: z.array(WireTopLogprobSchema).nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
      }),
    )
    .min(1),
  usage: z.object({ prompt_tokens: z.number(), completion_tokens: z.number() }).nullish(),
});
export type ChatCompletionResponse = z.infer<typeof ChatCompletionResponseSchema>;

/** Validates a response body; a server speaking some other dialect fails here, loudly. */
export function parseChatCompletion(body: unknown, rawBody?: string): ChatCompletionResponse {
  const parsed = ChatCompletionResponseSchema.safeParse(body);
  if (!parsed.success) {
    throw new ProviderResponseError(
      `response is not an OpenAI chat completion: ${formatZodIssues(parsed.error, { separator: "; " })}`,
      rawBody ?? safeStringify(body),
    );
  }
  return parsed.data;
}

export function fromChatCompletion(
  response: ChatCompletionResponse,
  request: GenerateRequest,
  requestedModel: string,
): GenerateResponse {
  const wantsJson = request.responseFormat !== undefined;
  const choices = [...response.choices]
    .sort((a, b) => (a.index ?? 0) - (b.index ?? 0))
    .map((choice): GeneratedChoice => {
      const text = choice.message.content ?? "";
      const logprobs = choice.logprobs?.content?.map(
        (t): TokenLogprob => ({
          token: t.token,
          logprob: t.logprob,
          ...(t.top_logprobs ? { top: t.top_logprobs.map((a) => ({ token: a.token, logprob: a.logprob })) } : {}),
        }),
      );
      return {
        text,
        ...(wantsJson ? { json: extractJson(text) } : {}),
        logprobs,
        finishReason: choice.finish_reason ?? undefined,
      };
    });
  return {
    choices,
    // Some servers omit usage; zero is the honest "not reported" for counters that only add up.
    usage: {
      inputTokens: response.usage?.prompt_tokens ?? 0,
      outputTokens: response.usage?.completion_tokens ?? 0,
    },
    ...(response.model !== undefined && response.model !== requestedModel ? { modelId: response.model } : {}),
  };
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
