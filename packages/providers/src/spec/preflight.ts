import { open } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { describeCause, ProviderPreflightError } from "../errors.js";
import { checkModelFile } from "../llama-cpp/llama-cpp.js";
import { apiKeyFor, OPENAI_AMBIENT_KEY } from "../transport/chat-completion-model.js";
import { chatCompletionsUrl } from "../transport/chat-completion-wire.js";
import { parseProviderSpec, providerFromSpec } from "./provider-spec.js";

export interface PreflightOptions {
  /** As {@link ProviderSpecOptions.apiKeyEnv}: the variable whose key the run will send. */
  readonly apiKeyEnv?: string | false;
  /** Directory relative `.gguf` paths resolve against. Default `process.cwd()`. */
  readonly cwd?: string;
  /** How long the server may take to answer the probe (default 10,000 ms). */
  readonly timeoutMs?: number;
}

/** What a preflight found: what it checked, and a doubt worth printing that does not stop the run. */
export interface PreflightResult {
  readonly checked: string;
  readonly warning?: string;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** OpenAI's `GET /v1/models` reply, as far as a preflight reads it. */
const ModelListSchema = z.object({ data: z.array(z.object({ id: z.string() })) });

/**
 * Checks, before a run, what can be checked of a provider spec without a billed call, so that a
 * setup fault stops the run up front instead of turning every verdict into an error:
 *
 * - `llama-cpp:<file>`: the file exists and is a GGUF file (its magic bytes).
 * - `openai-compatible:<url>#<model>`: the server answers `GET /v1/models` (free on OpenAI, vLLM,
 *   llama.cpp's server and most gateways) and accepts the key the run will send. A server that
 *   does not list models passes as reachable; a model missing from its list is a warning, since
 *   some gateways serve aliases they do not list.
 * - `hf:<model>`: the token's variable is set. Inference Providers are not called: each call is
 *   billed.
 *
 * @throws ProviderSpecError for a spec that does not parse, ProviderConfigError for a missing
 * key variable or model file, ProviderPreflightError for a server that cannot be reached or
 * refuses the key, or a file that is not GGUF.
 *
 * @example
 * const { warning } = await preflightProvider("openai-compatible:http://127.0.0.1:8000/v1#qwen");
 */
export async function preflightProvider(spec: string, options: PreflightOptions = {}): Promise<PreflightResult> {
  const parsed = parseProviderSpec(spec);
  switch (parsed.kind) {
    case "llama-cpp": {
      const file = path.resolve(options.cwd ?? process.cwd(), parsed.modelPath);
      checkModelFile(file);
      const handle = await open(file, "r");
      const magic = Buffer.alloc(4);
      try {
        await handle.read(magic, 0, 4, 0);
      } finally {
        await handle.close();
      }
      if (magic.toString("latin1") !== "GGUF")
        throw new ProviderPreflightError(spec, `${file} is not a GGUF model file (it does not start with "GGUF")`);
      return { checked: `model file ${file}` };
    }
    case "hf": {
      // Building the model checks the token's variable (Inference Providers always need one).
      providerFromSpec(spec, typeof options.apiKeyEnv === "string" ? { apiKeyEnv: options.apiKeyEnv } : {});
      return { checked: `a token for Hugging Face (not sent: every Inference Providers call is billed)` };
    }
    case "openai-compatible":
      return probeModelList(spec, parsed.baseUrl, parsed.model, options);
  }
}

async function probeModelList(
  spec: string,
  baseUrl: string,
  model: string,
  options: PreflightOptions,
): Promise<PreflightResult> {
  const token = apiKeyFor(baseUrl, options.apiKeyEnv, OPENAI_AMBIENT_KEY);
  const keyName =
    typeof options.apiKeyEnv === "string"
      ? `$${options.apiKeyEnv}`
      : token === undefined
        ? undefined
        : "$OPENAI_API_KEY";
  const url = chatCompletionsUrl(baseUrl).replace(/\/chat\/completions$/u, "/models");
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { accept: "application/json", ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
      signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    });
  } catch (error) {
    throw new ProviderPreflightError(spec, `cannot reach ${url}: ${describeCause(error)}`);
  }
  const text = await response.text();
  if (response.status === 401 || response.status === 403) {
    const sent =
      keyName === undefined
        ? "no key was sent: name the variable that holds it (--judge-key-env, or apiKeyEnv)"
        : `the key in ${keyName} was refused`;
    throw new ProviderPreflightError(spec, `${url} answered HTTP ${response.status}: ${sent}`);
  }
  if (!response.ok) return { checked: `${url} answers (it lists no models: HTTP ${response.status})` };
  const list = (() => {
    try {
      return ModelListSchema.safeParse(JSON.parse(text));
    } catch {
      return undefined;
    }
  })();
  if (list?.success !== true) return { checked: `${url} answers (its model list is not OpenAI's format)` };
  const ids = list.data.data.map((entry) => entry.id);
  if (ids.includes(model)) return { checked: `${url} serves ${model}` };
  const shown = ids.slice(0, 8).join(", ") + (ids.length > 8 ? `, … (${ids.length} in all)` : "");
  return {
    checked: `${url} answers`,
    warning: `${url} does not list the model ${JSON.stringify(model)}${ids.length === 0 ? "" : ` (it lists ${shown})`}; its calls may fail`,
  };
}
