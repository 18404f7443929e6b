import type { GeneratedChoice, GenerateRequest, GenerateResponse, LanguageModel } from "@rubric/core";
import { z } from "zod";
import { ProviderConfigError } from "../errors.js";
import { withRetries, type RetryOptions } from "../retry/retry.js";
import {
  fromChatCompletion,
  toChatCompletionBody,
  type ChatCompletionBody,
  type ChatCompletionResponse,
} from "./chat-completion-wire.js";

/**
 * What every chat-completions provider (openAICompatible, huggingFace) shares: the options both
 * take, the key-from-environment rule, the retry layer, and the model over one `send` function.
 */

export interface RemoteModelOptions {
  /**
   * Retry layer around every call (see {@link withRetries}); on by default with its defaults.
   * `false` gives the bare model: one attempt, no timeout of its own.
   */
  readonly retry?: RetryOptions | false;
}

export const HttpUrlSchema = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" });
export const RetrySettingSchema = z.union([z.literal(false), z.record(z.string(), z.unknown())]).optional();

export function withRetryLayer(model: LanguageModel, retry: RetryOptions | false | undefined): LanguageModel {
  return retry === false ? model : withRetries(model, retry ?? {});
}

/**
 * API keys come from the environment only, never from files or spec strings. A variable the
 * user named must be set; the default one is used when set; `false` means no key.
 */
export function apiKeyFromEnv(setting: string | false | undefined, defaultName: string): string | undefined {
  if (setting === false) return undefined;
  if (setting === undefined) return process.env[defaultName] || undefined;
  return requiredEnv(setting);
}

export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") {
    throw new ProviderConfigError(`environment variable ${name} is not set; it must hold the API token`);
  }
  return value;
}

/** One chat-completions call: a request body out, the validated response back, failures typed. */
export type SendChatCompletion = (
  body: ChatCompletionBody,
  signal: AbortSignal | undefined,
) => Promise<ChatCompletionResponse>;

interface ChatCompletionModelParts {
  readonly provider: string;
  readonly modelId: string;
  /** The model the request names; a response naming another is reported as `modelId`. */
  readonly requestedModel: string;
  readonly send: SendChatCompletion;
}

/** The bare model: one HTTP call (or a few, see below), errors typed, no retries. */
export function chatCompletionModel(parts: ChatCompletionModelParts): LanguageModel {
  const { send, requestedModel } = parts;
  const call = (request: GenerateRequest): Promise<ChatCompletionResponse> =>
    send(toChatCompletionBody(request), request.signal);

  return {
    provider: parts.provider,
    modelId: parts.modelId,
    async generate(request: GenerateRequest): Promise<GenerateResponse> {
      const wanted = request.n ?? 1;
      const first = fromChatCompletion(await call(request), request, requestedModel);
      const choices: GeneratedChoice[] = [...first.choices];
      let { inputTokens, outputTokens } = first.usage;
      // llama.cpp's server and some TGI versions ignore `n` and return one choice; fetch the rest
      // with further calls (seeds continuing seed+k) so the caller gets the samples it asked for.
      for (let calls = 1; choices.length < wanted && calls < wanted; calls++) {
        const more = fromChatCompletion(
          await call({
            ...request,
            n: wanted - choices.length,
            ...(request.seed === undefined ? {} : { seed: request.seed + choices.length }),
          }),
          request,
          requestedModel,
        );
        choices.push(...more.choices.slice(0, wanted - choices.length));
        inputTokens += more.usage.inputTokens;
        outputTokens += more.usage.outputTokens;
      }
      return {
        choices,
        usage: { inputTokens, outputTokens },
        modelId: first.modelId,
      };
    },
  };
}
