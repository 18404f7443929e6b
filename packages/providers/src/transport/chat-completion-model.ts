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
  /**
   * Longest response body read; a larger one fails the call with a `ProviderResponseError`
   * (not retried). Default 16 MiB.
   */
  readonly maxResponseBytes?: number;
}

export const HttpUrlSchema = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" });
export const RetrySettingSchema = z.union([z.literal(false), z.record(z.string(), z.unknown())]).optional();
export const MaxResponseBytesSchema = z.int().positive().optional();

export function withRetryLayer(model: LanguageModel, retry: RetryOptions | false | undefined): LanguageModel {
  return retry === false ? model : withRetries(model, retry ?? {});
}

/** Where a provider's ambient key (the one nobody named) may go. */
export interface AmbientKey {
  /** The variable read when the caller names none, e.g. `OPENAI_API_KEY`. */
  readonly env: string;
  /** The provider's own hosts: the only ones the ambient key is sent to. */
  readonly ownHost: (hostname: string) => boolean;
}

export const OPENAI_AMBIENT_KEY: AmbientKey = {
  env: "OPENAI_API_KEY",
  ownHost: (hostname) => hostname === "api.openai.com",
};

export const HF_AMBIENT_KEY: AmbientKey = {
  env: "HF_TOKEN",
  ownHost: (hostname) => /(^|\.)(huggingface\.co|huggingface\.cloud|hf\.space)$/.test(hostname),
};

/**
 * The API key to send to `url`. Keys come from the environment only, never from files or spec
 * strings. A variable the caller named (`apiKeyEnv: "NAME"`) must be set and is sent wherever the
 * caller points it. The ambient key (`OPENAI_API_KEY`, `HF_TOKEN`), which the caller did not
 * choose for this server, goes only to the provider's own hosts and only over https: pointing the
 * toolkit at a self-hosted or third-party server must not hand it the user's OpenAI or Hub key.
 * `false` sends no key.
 *
 * @example
 * apiKeyFor("http://127.0.0.1:8000/v1", undefined, OPENAI_AMBIENT_KEY); // undefined, whatever the environment holds
 * apiKeyFor("https://api.openai.com/v1", undefined, OPENAI_AMBIENT_KEY); // process.env.OPENAI_API_KEY
 */
export function apiKeyFor(url: string, setting: string | false | undefined, ambient: AmbientKey): string | undefined {
  if (setting === false) return undefined;
  if (typeof setting === "string") return requiredEnv(setting);
  const target = new URL(url);
  if (target.protocol !== "https:" || !ambient.ownHost(target.hostname)) return undefined;
  return process.env[ambient.env] || undefined;
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
