import {
  extractJson,
  type GenerateRequest,
  type GenerateResponse,
  type GeneratedChoice,
  LANGUAGE_MODEL_SPECIFICATION,
  type LanguageModel,
} from "@rubric/core";
import {
  ProviderConfigError,
  ProviderError,
  ProviderHttpError,
  ProviderNetworkError,
  ProviderResponseError,
} from "../errors.js";
import type { RetryOptions } from "../retry/retry.js";
import { withRetryLayer } from "../transport/chat-completion-model.js";

/** A token count as the AI SDK's specifications give it: a number (v2) or a breakdown with a total (v3, v4). */
type AiSdkTokens = number | undefined | { readonly total: number | undefined; readonly cacheRead?: number | undefined };

/**
 * The part of the Vercel AI SDK's language-model specification (`@ai-sdk/provider`'s
 * `LanguageModelV2`, `V3` and `V4`) this adapter uses: the model's ids and `doGenerate`. Every
 * AI SDK provider package's models (`@ai-sdk/openai`, `@ai-sdk/anthropic`, `@ai-sdk/openai-compatible`,
 * …) have this shape; the test checks the real `@ai-sdk/provider` types against it, so the toolkit
 * needs no AI SDK package at run time or to type-check.
 */
export interface AiSdkLanguageModel {
  readonly specificationVersion: "v2" | "v3" | "v4";
  readonly provider: string;
  readonly modelId: string;
  doGenerate(options: AiSdkCallOptions): PromiseLike<AiSdkGenerateResult>;
}

/** The call options this adapter sends (a subset of the specification's). */
export interface AiSdkCallOptions {
  readonly prompt: (
    | { role: "system"; content: string }
    | { role: "user"; content: { type: "text"; text: string }[] }
    | { role: "assistant"; content: { type: "text"; text: string }[] }
  )[];
  readonly maxOutputTokens?: number;
  readonly temperature?: number;
  readonly seed?: number;
  readonly responseFormat?: { type: "json"; schema?: Record<string, unknown>; name?: string };
  readonly abortSignal?: AbortSignal;
}

/** What this adapter reads of a `doGenerate` result. */
export interface AiSdkGenerateResult {
  readonly content: readonly { readonly type: string; readonly text?: string }[];
  readonly finishReason: string | { readonly unified: string; readonly raw?: string | undefined };
  readonly usage: {
    readonly inputTokens: AiSdkTokens;
    readonly outputTokens: AiSdkTokens;
    readonly cachedInputTokens?: number | undefined;
  };
  readonly response?: { readonly modelId?: string | undefined };
}

export interface AiSdkOptions {
  /**
   * Retry layer around every call (`withRetries`); on by default with its defaults. The AI SDK
   * retries only in `generateText`, never in a model's `doGenerate`, so this is the one layer.
   */
  readonly retry?: RetryOptions | false;
}

const SPECIFICATIONS = new Set(["v2", "v3", "v4"]);

/**
 * Any Vercel AI SDK language model as the toolkit's `LanguageModel`, so a judge, manager or
 * stakeholder can run on every model the AI SDK has a provider for. Messages become the
 * specification's prompt, a JSON-schema format becomes `responseFormat: {type: "json"}`, `n`
 * samples are `n` calls (with seeds `seed`, `seed + 1`, … when a seed is given, so they differ
 * and replay), and the SDK's errors become the toolkit's (`ProviderHttpError` with the status, so
 * the retry layer retries 429 and 5xx as for every other provider). Log-probabilities are not
 * part of the specification: a request for them (`topLogprobs`) gets choices without any.
 *
 * @example
 * import { createOpenAI } from "@ai-sdk/openai";
 * const judge = aiSdk(createOpenAI({ apiKey })("gpt-4o-mini"));
 * await judge.generate({ messages: [{ role: "user", content: "Say hi" }] });
 */
export function aiSdk(model: AiSdkLanguageModel, options: AiSdkOptions = {}): LanguageModel {
  if (
    model === null ||
    typeof model !== "object" ||
    typeof (model as { doGenerate?: unknown }).doGenerate !== "function"
  )
    throw new ProviderConfigError("aiSdk: expected an AI SDK language model (an object with doGenerate)");
  if (!SPECIFICATIONS.has(model.specificationVersion))
    throw new ProviderConfigError(
      `aiSdk: ${model.provider}/${model.modelId} implements AI SDK specification ${JSON.stringify(model.specificationVersion)}; this adapter reads v2, v3 and v4`,
    );
  const adapted: LanguageModel = {
    specificationVersion: LANGUAGE_MODEL_SPECIFICATION,
    provider: `ai-sdk:${model.provider}`,
    modelId: model.modelId,
    async generate(request: GenerateRequest): Promise<GenerateResponse> {
      // topLogprobs is not part of the specification: choices carry none (an llm-judge then
      // reads the score the model wrote, as with any provider that gives no log-probabilities).
      const n = request.n ?? 1;
      const choices: GeneratedChoice[] = [];
      let inputTokens = 0;
      let outputTokens = 0;
      let cachedInputTokens = 0;
      let modelId: string | undefined;
      for (let i = 0; i < n; i++) {
        const result = await call(model, callOptions(request, i));
        const text = result.content
          .filter((part) => part.type === "text")
          .map((part) => part.text ?? "")
          .join("");
        const finishReason =
          typeof result.finishReason === "string" ? result.finishReason : result.finishReason.unified;
        choices.push({
          text,
          finishReason,
          ...(request.responseFormat === undefined ? {} : { json: extractJson(text) }),
        });
        inputTokens += tokens(result.usage.inputTokens);
        outputTokens += tokens(result.usage.outputTokens);
        cachedInputTokens += cached(result.usage);
        modelId ??= result.response?.modelId;
      }
      return {
        choices,
        usage: { inputTokens, outputTokens, ...(cachedInputTokens > 0 ? { cachedInputTokens } : {}) },
        ...(modelId !== undefined && modelId !== model.modelId ? { modelId } : {}),
      };
    },
  };
  return withRetryLayer(adapted, options.retry);
}

function callOptions(request: GenerateRequest, sample: number): AiSdkCallOptions {
  return {
    prompt: request.messages.map((message) =>
      message.role === "system"
        ? { role: "system" as const, content: message.content }
        : { role: message.role, content: [{ type: "text" as const, text: message.content }] },
    ),
    ...(request.maxTokens === undefined ? {} : { maxOutputTokens: request.maxTokens }),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.seed === undefined ? {} : { seed: request.seed + sample }),
    ...(request.responseFormat === undefined
      ? {}
      : {
          responseFormat: {
            type: "json" as const,
            schema: { ...request.responseFormat.schema },
            name: request.responseFormat.name,
          },
        }),
    ...(request.signal === undefined ? {} : { abortSignal: request.signal }),
  };
}

const tokens = (count: AiSdkTokens): number => (typeof count === "number" ? count : (count?.total ?? 0));
const cached = (usage: AiSdkGenerateResult["usage"]): number =>
  usage.cachedInputTokens ?? (typeof usage.inputTokens === "object" ? (usage.inputTokens?.cacheRead ?? 0) : 0);

/**
 * One `doGenerate`, its failures as the toolkit's errors. The SDK's `APICallError` carries the
 * URL, the status and the body; an abort stays an abort (the retry layer tells a timeout from a
 * caller's cancel by its own signals); a call that never got a response is a network error.
 */
async function call(model: AiSdkLanguageModel, options: AiSdkCallOptions): Promise<AiSdkGenerateResult> {
  try {
    return await model.doGenerate(options);
  } catch (error) {
    if (error instanceof ProviderError) throw error;
    if (options.abortSignal?.aborted) throw error;
    const e = error as { name?: string; statusCode?: unknown; url?: unknown; responseBody?: unknown; message?: string };
    const url = typeof e.url === "string" ? e.url : `${model.provider}/${model.modelId}`;
    if (typeof e.statusCode === "number")
      throw new ProviderHttpError(
        url,
        e.statusCode,
        typeof e.responseBody === "string" ? e.responseBody : (e.message ?? ""),
      );
    if (e.name === "AI_APICallError") throw new ProviderNetworkError(url, error);
    throw new ProviderResponseError(
      `${model.provider}/${model.modelId}: ${e.name ?? "error"}: ${e.message ?? String(error)}`,
    );
  }
}
