import path from "node:path";
import type { LanguageModel } from "@rubric/core";
import { PROVIDERS_OR_POLICIES, type InferenceProviderOrPolicy } from "@huggingface/inference";
import { z } from "zod";
import { ProviderSpecError } from "../errors.js";
import { huggingFace } from "../hugging-face/hugging-face.js";
import { openAICompatible } from "../openai-compatible/openai-compatible.js";
import { checkModelFile, llamaCpp, type LlamaCppModel, type LlamaCppOptions } from "../llama-cpp/llama-cpp.js";
import type { RetryOptions } from "../retry/retry.js";

/** A provider spec string, understood. */
export type ParsedProviderSpec =
  | { readonly kind: "llama-cpp"; readonly modelPath: string }
  | { readonly kind: "hf"; readonly model: string; readonly provider?: InferenceProviderOrPolicy }
  | { readonly kind: "openai-compatible"; readonly baseUrl: string; readonly model: string };

export interface ProviderSpecOptions {
  /** Retry layer for remote providers (default on; `false` for none). */
  readonly retry?: RetryOptions | false;
  /** Environment variable with the API key for remote providers (default `HF_TOKEN` / `OPENAI_API_KEY`). */
  readonly apiKeyEnv?: string | false;
  /** Settings for `llama-cpp:` specs besides the path. */
  readonly llamaCpp?: Omit<LlamaCppOptions, "modelPath">;
  /** Directory relative `.gguf` paths resolve against. Default `process.cwd()`. */
  readonly cwd?: string;
  /**
   * Check a local model's file now (a `ProviderConfigError` when it is not there), rather than on
   * the first call, which is when a model otherwise loads. Default false.
   */
  readonly checkFiles?: boolean;
}

/** What `providerFromSpec` returns: a model, with `dispose` when it holds local resources. */
export type SpecifiedModel = LanguageModel & Partial<Pick<LlamaCppModel, "dispose">>;

const SpecTextSchema = z.string().trim().min(1, "empty");
const ProviderNameSchema = z.enum(PROVIDERS_OR_POLICIES);
const BaseUrlSchema = z.url({ protocol: /^https?$/ });

/**
 * Parses `llama-cpp:<path.gguf>`, `hf:<model>`, `hf:<model>@<provider>` or
 * `openai-compatible:<baseUrl>#<model>`. Spec strings carry no secrets: keys come from the
 * environment.
 *
 * @example
 * parseProviderSpec("hf:Qwen/Qwen2.5-72B-Instruct@novita");
 * // { kind: "hf", model: "Qwen/Qwen2.5-72B-Instruct", provider: "novita" }
 */
export function parseProviderSpec(spec: string): ParsedProviderSpec {
  const text = SpecTextSchema.safeParse(spec);
  if (!text.success) throw new ProviderSpecError(spec, "the spec is empty");
  const value = text.data;
  const colon = value.indexOf(":");
  const scheme = colon < 0 ? "" : value.slice(0, colon);
  const rest = colon < 0 ? "" : value.slice(colon + 1).trim();

  switch (scheme) {
    case "llama-cpp": {
      if (!/\.gguf$/i.test(rest)) throw new ProviderSpecError(spec, "llama-cpp needs a path to a .gguf file");
      return { kind: "llama-cpp", modelPath: rest };
    }
    case "hf": {
      const match = /^([^@\s]+)(?:@([^@\s]+))?$/.exec(rest);
      if (!match?.[1])
        throw new ProviderSpecError(spec, "hf needs a Hub model id, e.g. hf:org/model or hf:org/model@provider");
      if (match[2] === undefined) return { kind: "hf", model: match[1] };
      const provider = ProviderNameSchema.safeParse(match[2]);
      if (!provider.success) {
        throw new ProviderSpecError(
          spec,
          `unknown Inference Provider ${JSON.stringify(match[2])} (known: ${PROVIDERS_OR_POLICIES.join(", ")})`,
        );
      }
      return { kind: "hf", model: match[1], provider: provider.data };
    }
    case "openai-compatible": {
      const hash = rest.indexOf("#");
      const baseUrl = hash < 0 ? rest : rest.slice(0, hash);
      const model = hash < 0 ? "" : rest.slice(hash + 1).trim();
      if (!BaseUrlSchema.safeParse(baseUrl).success) {
        throw new ProviderSpecError(
          spec,
          `openai-compatible needs an http(s) base URL, got ${JSON.stringify(baseUrl)}`,
        );
      }
      if (model === "") throw new ProviderSpecError(spec, "openai-compatible needs a model after '#'");
      return { kind: "openai-compatible", baseUrl, model };
    }
    default:
      throw new ProviderSpecError(
        spec,
        scheme === "" ? "no provider prefix" : `unknown provider ${JSON.stringify(scheme)}`,
      );
  }
}

/**
 * Builds the model a spec string names (from a CLI flag, a config file, a rubric).
 *
 * @example
 * const judge = providerFromSpec("openai-compatible:http://127.0.0.1:8000/v1#Qwen/Qwen2.5-7B-Instruct");
 * const local = providerFromSpec("llama-cpp:models/judge.gguf", { llamaCpp: { threads: 4 } });
 */
export function providerFromSpec(spec: string, options: ProviderSpecOptions = {}): SpecifiedModel {
  const parsed = parseProviderSpec(spec);
  const remote = {
    retry: options.retry,
  };
  switch (parsed.kind) {
    case "llama-cpp": {
      const modelPath = path.resolve(options.cwd ?? process.cwd(), parsed.modelPath);
      if (options.checkFiles) checkModelFile(modelPath);
      return llamaCpp({ ...options.llamaCpp, modelPath });
    }
    case "hf":
      return huggingFace({
        model: parsed.model,
        provider: parsed.provider,
        // Inference Providers always need a token; `false` is meaningless there, so the default applies.
        ...(typeof options.apiKeyEnv === "string" ? { apiKeyEnv: options.apiKeyEnv } : {}),
        ...remote,
      });
    case "openai-compatible":
      return openAICompatible({
        baseUrl: parsed.baseUrl,
        model: parsed.model,
        apiKeyEnv: options.apiKeyEnv,
        ...remote,
      });
  }
}
