import { formatZodIssues, type LanguageModel } from "@rubric/core";
import { z } from "zod";
import { ProviderConfigError } from "../errors.js";
import {
  HttpUrlSchema,
  MaxResponseBytesSchema,
  RetrySettingSchema,
  OPENAI_AMBIENT_KEY,
  apiKeyFor,
  chatCompletionModel,
  withRetryLayer,
  type RemoteModelOptions,
  type SendChatCompletion,
} from "../transport/chat-completion-model.js";
import { chatCompletionsUrl, parseChatCompletion } from "../transport/chat-completion-wire.js";
import { jsonEndpoint } from "../transport/http-transport.js";

export interface OpenAICompatibleOptions extends RemoteModelOptions {
  /** e.g. `https://api.openai.com/v1`, `http://127.0.0.1:8000` (vLLM), `http://127.0.0.1:8080` (llama.cpp). */
  readonly baseUrl: string;
  readonly model: string;
  /**
   * Environment variable holding the API key. Naming a variable makes it required and sends it to
   * `baseUrl`, wherever that is. Unnamed, `OPENAI_API_KEY` is sent when set, but only to
   * `https://api.openai.com`: a self-hosted server gets a key only when you name one. `false`
   * sends no key.
   */
  readonly apiKeyEnv?: string | false;
}

const OpenAICompatibleOptionsSchema = z.strictObject({
  baseUrl: HttpUrlSchema,
  model: z.string().trim().min(1),
  apiKeyEnv: z.union([z.string().min(1), z.literal(false)]).optional(),
  retry: RetrySettingSchema,
  maxResponseBytes: MaxResponseBytesSchema,
});

/**
 * A `LanguageModel` for any server speaking the OpenAI chat-completions API (OpenAI, vLLM, TGI,
 * llama.cpp's server, Together, …), over a keep-alive `node:http(s)` pool: `huggingFace` with an
 * `endpointUrl`, reported as `openai-compatible`; keyed by `OPENAI_API_KEY` on api.openai.com, elsewhere
 * only by a variable you name (`apiKeyEnv`).
 * `/v1/chat/completions` is appended to `baseUrl` as needed.
 *
 * @example
 * const model = openAICompatible({ baseUrl: "http://127.0.0.1:8000/v1", model: "Qwen/Qwen2.5-7B-Instruct" });
 */
export function openAICompatible(options: OpenAICompatibleOptions): LanguageModel {
  const parsed = OpenAICompatibleOptionsSchema.safeParse(options);
  if (!parsed.success)
    throw new ProviderConfigError(`openAICompatible: ${formatZodIssues(parsed.error, { separator: "; " })}`);
  const o = parsed.data;
  const token = apiKeyFor(o.baseUrl, o.apiKeyEnv, OPENAI_AMBIENT_KEY);
  return withRetryLayer(
    chatCompletionModel({
      provider: "openai-compatible",
      modelId: o.model,
      requestedModel: o.model,
      send: overHttp(o.baseUrl, o.model, token, o.maxResponseBytes),
    }),
    options.retry,
  );
}

/**
 * Sends straight to one server's chat-completions URL over the keep-alive transport: the same
 * body and headers `InferenceClient` would send to an endpoint, without its per-call work or
 * `fetch`'s (see http-transport.ts).
 */
function overHttp(
  baseUrl: string,
  model: string,
  token: string | undefined,
  maxResponseBytes: number | undefined,
): SendChatCompletion {
  const endpoint = jsonEndpoint(
    chatCompletionsUrl(baseUrl),
    token === undefined ? {} : { authorization: `Bearer ${token}` },
    maxResponseBytes,
  );
  return async (body, signal) => {
    const reply = await endpoint.post(JSON.stringify({ model, ...body }), signal);
    return parseChatCompletion(reply.value, reply.text);
  };
}
