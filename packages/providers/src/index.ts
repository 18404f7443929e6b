/**
 * @rubric/providers — `LanguageModel` implementations for judges, managers and workers: any
 * OpenAI-compatible server, Hugging Face (Inference Providers or an endpoint), and local GGUF
 * models through node-llama-cpp, which is an optional peer dependency loaded only on first use of
 * `llamaCpp`. Also the retry layer, provider spec strings and the errors they raise. This file is
 * the package's only public door; `@rubric/providers/testing` holds a local test server.
 */

// errors: every failure a provider raises, under ProviderError with a stable code
export {
  ProviderConfigError,
  ProviderError,
  ProviderHttpError,
  ProviderNetworkError,
  ProviderPreflightError,
  ProviderRequestError,
  ProviderResponseError,
  ProviderSpecError,
  ProviderTimeoutError,
  ProviderDeadlineError,
} from "./errors.js";

// retry: retries with backoff for the failures worth retrying
export { isRetryableProviderError, withRetries, type RetryOptions } from "./retry/retry.js";

// deprecated: runEffect moved to @rubric/core/effect; re-exported here for one release
/** @deprecated moved to `@rubric/core/effect`; re-exported here for one release. */
export { runEffect } from "@rubric/core/effect";

// models: one LanguageModel per provider: OpenAI-compatible servers, Hugging Face, local GGUF (node-llama-cpp)
export type { RemoteModelOptions } from "./transport/chat-completion-model.js";
export { openAICompatible, type OpenAICompatibleOptions } from "./openai-compatible/openai-compatible.js";
export {
  huggingFace,
  type HuggingFaceEndpointOptions,
  type HuggingFaceHubOptions,
  type HuggingFaceOptions,
} from "./hugging-face/hugging-face.js";
export { defaultLlamaThreads, llamaCpp, type LlamaCppModel, type LlamaCppOptions } from "./llama-cpp/llama-cpp.js";

// ai-sdk: any Vercel AI SDK language model (specification v2, v3, v4) as a LanguageModel
export {
  aiSdk,
  type AiSdkCallOptions,
  type AiSdkGenerateResult,
  type AiSdkLanguageModel,
  type AiSdkOptions,
} from "./ai-sdk/ai-sdk.js";

// spec: provider spec strings (`hf:<model>`, `openai-compatible:<url>#<model>`, `llama-cpp:<path>`) to a model
export {
  parseProviderSpec,
  providerFromSpec,
  type ParsedProviderSpec,
  type ProviderSpecOptions,
  type SpecifiedModel,
} from "./spec/provider-spec.js";
export { preflightProvider, type PreflightOptions, type PreflightResult } from "./spec/preflight.js";
