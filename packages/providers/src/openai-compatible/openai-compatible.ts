import { formatZodIssues, type LanguageModel } from "@rubric/core";
import { z } from "zod";
import { ProviderConfigError } from "../errors.js";
import {
  HttpUrlSchema,
  RetrySettingSchema,
  apiKeyFromEnv,
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
   * Environment variable holding the API key. Default `OPENAI_API_KEY`, sent when set; naming a
   * variable makes it required; `false` sends no key.
   */
  readonly apiKeyEnv?: string | false;
}

const OpenAICompatibleOptionsSchema = z.strictObject({
  baseUrl: HttpUrlSchema,
  model: z.string().trim().min(1),
  apiKeyEnv: z.union([z.string().min(1), z.literal(false)]).optional(),
  retry: RetrySettingSchema,
});

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
  if (!parsed.success)
    throw new ProviderConfigError(`openAICompatible: ${formatZodIssues(parsed.error, { separator: "; " })}`);
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
