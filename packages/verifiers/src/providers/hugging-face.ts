import type { GeneratedChoice, GenerateRequest, GenerateResponse, LanguageModel } from "@rubric/core";
import {
  InferenceClient,
  InferenceClientHubApiError,
  InferenceClientInputError,
  InferenceClientProviderApiError,
  InferenceClientProviderOutputError,
  InferenceClientRoutingError,
  PROVIDERS_OR_POLICIES,
  type InferenceProviderOrPolicy,
} from "@huggingface/inference";
import { z } from "zod";
import {
  chatCompletionsUrl,
  fromChatCompletion,
  parseChatCompletion,
  toChatCompletionBody,
  type ChatCompletionBody,
  type ChatCompletionResponse,
} from "./chat-completion-wire.js";
import { ProviderConfigError, ProviderHttpError, ProviderNetworkError, ProviderResponseError } from "./errors.js";
import { jsonEndpoint, parseRetryAfter } from "./http-transport.js";
import { withRetries, type RetryOptions } from "./retry.js";

interface CommonOptions {
  /**
   * Retry layer around every call (see {@link withRetries}); on by default with its defaults.
   * `false` gives the bare model: one attempt, no timeout of its own.
   */
  readonly retry?: RetryOptions | false;
}

/** A model served by Hugging Face Inference Providers, addressed by its Hub id. */
export interface HuggingFaceHubOptions extends CommonOptions {
  /** Hub model id, e.g. `meta-llama/Llama-3.1-8B-Instruct`. */
  readonly model: string;
  /** Which Inference Provider serves it; default `auto` (your order at hf.co/settings/inference-providers). */
  readonly provider?: InferenceProviderOrPolicy;
  /** Environment variable holding the token. Default `HF_TOKEN`; it must be set. */
  readonly apiKeyEnv?: string;
  readonly endpointUrl?: undefined;
}

/** A self-hosted or dedicated server speaking the OpenAI chat format: TGI, vLLM, llama.cpp's server, an Inference Endpoint. */
export interface HuggingFaceEndpointOptions extends CommonOptions {
  /** Base URL, e.g. `http://127.0.0.1:8080` or `https://x.endpoints.huggingface.cloud/v1`; `/v1/chat/completions` is appended as needed. */
  readonly endpointUrl: string;
  /** The `model` field sent; servers hosting one model ignore it. Default: the endpoint URL. */
  readonly model?: string;
  /**
   * Environment variable holding the bearer token. Default: `HF_TOKEN`, sent when set, but only to
   * Hugging Face hosts (Inference Endpoints, Spaces) — a Hub token must not leak to a third-party
   * server. Naming a variable makes it required and sends it anywhere; `false` sends no token.
   */
  readonly apiKeyEnv?: string | false;
  /** Inference Providers route by model id; an endpoint is already one server, so the two cannot combine. */
  readonly provider?: undefined;
}

export type HuggingFaceOptions = HuggingFaceHubOptions | HuggingFaceEndpointOptions;

export interface OpenAICompatibleOptions extends CommonOptions {
  /** e.g. `https://api.openai.com/v1`, `http://127.0.0.1:8000` (vLLM), `http://127.0.0.1:8080` (llama.cpp). */
  readonly baseUrl: string;
  readonly model: string;
  /**
   * Environment variable holding the API key. Default `OPENAI_API_KEY`, sent when set; naming a
   * variable makes it required; `false` sends no key.
   */
  readonly apiKeyEnv?: string | false;
}

const HttpUrlSchema = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" });
const RetrySettingSchema = z.union([z.literal(false), z.record(z.string(), z.unknown())]).optional();

const HuggingFaceOptionsSchema = z
  .strictObject({
    model: z.string().trim().min(1).optional(),
    provider: z.enum(PROVIDERS_OR_POLICIES).optional(),
    endpointUrl: HttpUrlSchema.optional(),
    apiKeyEnv: z.union([z.string().min(1), z.literal(false)]).optional(),
    retry: RetrySettingSchema,
  })
  .superRefine((o, ctx) => {
    if (o.endpointUrl !== undefined && o.provider !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["provider"],
        message: "endpointUrl and provider cannot be combined: an endpoint is one server, providers route by model id",
      });
    }
    if (o.endpointUrl === undefined && o.model === undefined) {
      ctx.addIssue({ code: "custom", path: ["model"], message: "give a Hub model id, or an endpointUrl" });
    }
    if (o.endpointUrl === undefined && o.apiKeyEnv === false) {
      ctx.addIssue({ code: "custom", path: ["apiKeyEnv"], message: "Inference Providers need a token" });
    }
  });

const OpenAICompatibleOptionsSchema = z.strictObject({
  baseUrl: HttpUrlSchema,
  model: z.string().trim().min(1),
  apiKeyEnv: z.union([z.string().min(1), z.literal(false)]).optional(),
  retry: RetrySettingSchema,
});

/**
 * A `LanguageModel` for Hugging Face: a Hub model through Inference Providers, over
 * `@huggingface/inference`'s `InferenceClient` (token from `HF_TOKEN`), or any server speaking the
 * OpenAI chat format through `endpointUrl` (TGI, vLLM, an Inference Endpoint), also through
 * `InferenceClient` (`openAICompatible` reaches such servers over a leaner keep-alive transport). JSON formats go out as `response_format: json_schema`
 * (strict); the reply's JSON is recovered even from fenced or commented text (`choice.json`,
 * else undefined).
 *
 * @example
 * const judge = huggingFace({ model: "Qwen/Qwen2.5-72B-Instruct", provider: "novita" });
 * const local = huggingFace({ endpointUrl: "http://127.0.0.1:8080" });
 * const { choices } = await judge.generate({ messages: [{ role: "user", content: "Hi" }], seed: 1 });
 */
export function huggingFace(options: HuggingFaceOptions): LanguageModel {
  const parsed = HuggingFaceOptionsSchema.safeParse(options);
  if (!parsed.success) throw new ProviderConfigError(`huggingFace: ${z.prettifyError(parsed.error)}`);
  const o = parsed.data;

  if (o.endpointUrl !== undefined) {
    const token =
      o.apiKeyEnv === undefined && !isHuggingFaceHost(o.endpointUrl)
        ? undefined
        : apiKeyFromEnv(o.apiKeyEnv, "HF_TOKEN");
    const model = o.model ?? o.endpointUrl;
    // Through @huggingface/inference, as its users expect of `huggingFace`; `openAICompatible`
    // reaches the same servers over the lean keep-alive transport when client CPU matters.
    return withRetryLayer(
      chatCompletionModel({
        provider: "hf",
        modelId: model,
        requestedModel: model,
        send: overInferenceClient(
          new InferenceClient(token ?? "", { endpointUrl: o.endpointUrl }),
          o.model === undefined ? {} : { model: o.model },
        ),
      }),
      options.retry,
    );
  }

  const model = o.model ?? "";
  const token = requiredEnv(typeof o.apiKeyEnv === "string" ? o.apiKeyEnv : "HF_TOKEN");
  const routed = o.provider !== undefined && o.provider !== "auto";
  return withRetryLayer(
    chatCompletionModel({
      provider: "hf",
      // The spec form `model@provider`, so `hf:${modelId}` names the same deployment again.
      modelId: routed ? `${model}@${o.provider}` : model,
      requestedModel: model,
      send: overInferenceClient(new InferenceClient(token), {
        model,
        ...(o.provider === undefined ? {} : { provider: o.provider }),
      }),
    }),
    options.retry,
  );
}

/**
 * A `LanguageModel` for any server speaking the OpenAI chat-completions API (OpenAI, vLLM, TGI,
 * llama.cpp's server, Together, …), over a keep-alive `node:http(s)` pool: `huggingFace` with an
 * `endpointUrl`, reported as `openai-compatible`, keyed by `OPENAI_API_KEY` unless told otherwise.
 * `/v1/chat/completions` is appended to `baseUrl` as needed.
 *
 * @example
 * const model = openAICompatible({ baseUrl: "http://127.0.0.1:8000/v1", model: "Qwen/Qwen2.5-7B-Instruct" });
 */
export function openAICompatible(options: OpenAICompatibleOptions): LanguageModel {
  const parsed = OpenAICompatibleOptionsSchema.safeParse(options);
  if (!parsed.success) throw new ProviderConfigError(`openAICompatible: ${z.prettifyError(parsed.error)}`);
  const o = parsed.data;
  const token = apiKeyFromEnv(o.apiKeyEnv, "OPENAI_API_KEY");
  return withRetryLayer(
    chatCompletionModel({
      provider: "openai-compatible",
      modelId: o.model,
      requestedModel: o.model,
      send: overHttp(o.baseUrl, o.model, token),
    }),
    options.retry,
  );
}

function withRetryLayer(model: LanguageModel, retry: RetryOptions | false | undefined): LanguageModel {
  return retry === false ? model : withRetries(model, retry ?? {});
}

function isHuggingFaceHost(url: string): boolean {
  return /(^|\.)(huggingface\.co|huggingface\.cloud|hf\.space)$/.test(new URL(url).hostname);
}

/**
 * API keys come from the environment only, never from files or spec strings. A variable the
 * user named must be set; the default one is used when set; `false` means no key.
 */
function apiKeyFromEnv(setting: string | false | undefined, defaultName: string): string | undefined {
  if (setting === false) return undefined;
  if (setting === undefined) return process.env[defaultName] || undefined;
  return requiredEnv(setting);
}

function requiredEnv(name: string): string {
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
function chatCompletionModel(parts: ChatCompletionModelParts): LanguageModel {
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
        ...(first.modelId === undefined ? {} : { modelId: first.modelId }),
      };
    },
  };
}

/**
 * Sends straight to one server's chat-completions URL over the keep-alive transport: the same
 * body and headers `InferenceClient` would send to an endpoint, without its per-call work or
 * `fetch`'s (see http-transport.ts).
 */
function overHttp(baseUrl: string, model: string, token: string | undefined): SendChatCompletion {
  const endpoint = jsonEndpoint(
    chatCompletionsUrl(baseUrl),
    token === undefined ? {} : { authorization: `Bearer ${token}` },
  );
  return async (body, signal) => {
    const reply = await endpoint.post(JSON.stringify({ model, ...body }), signal);
    return parseChatCompletion(reply.value, reply.text);
  };
}

/**
 * Sends through `@huggingface/inference`, which resolves Inference Providers and their routing
 * for a Hub model id. Exported for the tests, which reach it through an `endpointUrl` client.
 */
export function overInferenceClient(
  client: InferenceClient,
  /** `model` / `provider` routing arguments for `chatCompletion`. */
  args: { model?: string; provider?: InferenceProviderOrPolicy },
): SendChatCompletion {
  return async (body, signal) => {
    try {
      const output: unknown = await client.chatCompletion(
        { ...args, ...body },
        {
          ...(signal === undefined ? {} : { signal }),
          fetch: checkedFetch,
          // The client would otherwise re-send on 503 at once and forever; our retry layer backs off.
          retry_on_error: false,
        },
      );
      return parseChatCompletion(output);
    } catch (error) {
      throw translateClientError(error);
    }
  };
}

/**
 * The `fetch` handed to `InferenceClient`. The client's own errors drop the response headers
 * (so `Retry-After` would be lost) and surface a malformed body as a bare `SyntaxError`; reading
 * the response here keeps status, `Retry-After` and body, and types every failure.
 */
async function checkedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  let response: Response;
  let text: string;
  try {
    response = await fetch(input, init);
    text = await response.text();
  } catch (error) {
    // An abort is the caller's (or the retry layer's timeout) and is reported by them.
    if (init?.signal?.aborted) throw error;
    throw new ProviderNetworkError(url, error);
  }
  if (!response.ok) {
    throw new ProviderHttpError(url, response.status, text, parseRetryAfter(response.headers.get("retry-after")));
  }
  try {
    JSON.parse(text);
  } catch {
    throw new ProviderResponseError(
      `${url} answered ${response.status} with a body that is not JSON (content-type ${
        response.headers.get("content-type") ?? "none"
      })`,
      text,
    );
  }
  return new Response(text, { status: response.status, headers: { "content-type": "application/json" } });
}

function translateClientError(error: unknown): unknown {
  if (
    error instanceof ProviderHttpError ||
    error instanceof ProviderNetworkError ||
    error instanceof ProviderResponseError
  ) {
    return error;
  }
  if (error instanceof InferenceClientInputError || error instanceof InferenceClientRoutingError) {
    return new ProviderConfigError(error.message);
  }
  if (error instanceof InferenceClientProviderOutputError) return new ProviderResponseError(error.message);
  if (error instanceof InferenceClientProviderApiError || error instanceof InferenceClientHubApiError) {
    const body = error.httpResponse.body;
    return new ProviderHttpError(
      error.httpRequest.url,
      error.httpResponse.status,
      typeof body === "string" ? body : JSON.stringify(body),
    );
  }
  return error;
}
