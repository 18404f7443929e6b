import { formatZodIssues, type LanguageModel } from "@rubric/core";
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
import { ProviderConfigError, ProviderHttpError, ProviderNetworkError, ProviderResponseError } from "../errors.js";
import {
  HttpUrlSchema,
  MaxResponseBytesSchema,
  RetrySettingSchema,
  HF_AMBIENT_KEY,
  apiKeyFor,
  chatCompletionModel,
  requiredEnv,
  withRetryLayer,
  type RemoteModelOptions,
  type SendChatCompletion,
} from "../transport/chat-completion-model.js";
import { parseChatCompletion } from "../transport/chat-completion-wire.js";
import { DEFAULT_MAX_RESPONSE_BYTES, parseRetryAfter, readCappedText } from "../transport/http-transport.js";

/** A model served by Hugging Face Inference Providers, addressed by its Hub id. */
export interface HuggingFaceHubOptions extends RemoteModelOptions {
  /** Hub model id, e.g. `meta-llama/Llama-3.1-8B-Instruct`. */
  readonly model: string;
  /** Which Inference Provider serves it; default `auto` (your order at hf.co/settings/inference-providers). */
  readonly provider?: InferenceProviderOrPolicy;
  /** Environment variable holding the token. Default `HF_TOKEN`; it must be set. */
  readonly apiKeyEnv?: string;
  readonly endpointUrl?: undefined;
}

/** A self-hosted or dedicated server speaking the OpenAI chat format: TGI, vLLM, llama.cpp's server, an Inference Endpoint. */
export interface HuggingFaceEndpointOptions extends RemoteModelOptions {
  /** Base URL, e.g. `http://127.0.0.1:8080` or `https://x.endpoints.huggingface.cloud/v1`; `/v1/chat/completions` is appended as needed. */
  readonly endpointUrl: string;
  /** The `model` field sent; servers hosting one model ignore it. Default: the endpoint URL. */
  readonly model?: string;
  /**
   * Environment variable holding the bearer token. Default: `HF_TOKEN`, sent when set, but only to
   * Hugging Face hosts (Inference Endpoints, Spaces) over https — a Hub token must not leak to a
   * third-party server. Naming a variable makes it required and sends it anywhere; `false` sends no token.
   */
  readonly apiKeyEnv?: string | false;
  /** Inference Providers route by model id; an endpoint is already one server, so the two cannot combine. */
  readonly provider?: undefined;
}

export type HuggingFaceOptions = HuggingFaceHubOptions | HuggingFaceEndpointOptions;

const HuggingFaceOptionsSchema = z
  .strictObject({
    model: z.string().trim().min(1).optional(),
    provider: z.enum(PROVIDERS_OR_POLICIES).optional(),
    endpointUrl: HttpUrlSchema.optional(),
    apiKeyEnv: z.union([z.string().min(1), z.literal(false)]).optional(),
    retry: RetrySettingSchema,
    maxResponseBytes: MaxResponseBytesSchema,
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
  if (!parsed.success)
    throw new ProviderConfigError(`huggingFace: ${formatZodIssues(parsed.error, { separator: "; " })}`);
  const o = parsed.data;

  if (o.endpointUrl !== undefined) {
    const token = apiKeyFor(o.endpointUrl, o.apiKeyEnv, HF_AMBIENT_KEY);
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
          { model: o.model },
          o.maxResponseBytes,
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
      send: overInferenceClient(
        new InferenceClient(token),
        {
          model,
          provider: o.provider,
        },
        o.maxResponseBytes,
      ),
    }),
    options.retry,
  );
}

/**
 * Sends through `@huggingface/inference`, which resolves Inference Providers and their routing
 * for a Hub model id. Exported for the tests, which reach it through an `endpointUrl` client.
 */
export function overInferenceClient(
  client: InferenceClient,
  /** `model` / `provider` routing arguments for `chatCompletion`. */
  args: { model?: string; provider?: InferenceProviderOrPolicy },
  /** Longest response body read (default {@link DEFAULT_MAX_RESPONSE_BYTES}). */
  maxResponseBytes: number = DEFAULT_MAX_RESPONSE_BYTES,
): SendChatCompletion {
  const fetchCapped = checkedFetch(maxResponseBytes);
  return async (body, signal) => {
    try {
      const output: unknown = await client.chatCompletion(
        { ...args, ...body },
        {
          signal,
          fetch: fetchCapped,
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
 * the response here keeps status, `Retry-After` and body, and types every failure. It reads at
 * most `maxResponseBytes` of the body.
 */
function checkedFetch(maxResponseBytes: number): typeof fetch {
  return async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    let response: Response;
    let text: string;
    try {
      response = await fetch(input, init);
      text = await readCappedText(response, url, maxResponseBytes);
    } catch (error) {
      // An abort is the caller's (or the retry layer's timeout) and is reported by them.
      if (init?.signal?.aborted || error instanceof ProviderResponseError) throw error;
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
  };
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
