import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { LanguageModel } from "@rubric/core";
import { RemotePolicy, type SidecarClient } from "@rubric/sidecar";
import type { AgentView } from "../environment/environment.js";
import { AdapterLoadError, RlxarInputError } from "../errors.js";
import { type LlmPolicyOptions, llmPolicy } from "./llm-policy.js";
import type { ActOptions, PolicyDecision, TrainablePolicy } from "./policy.js";
import { type SidecarPolicyOptions, sidecarTrainer } from "./sidecar-policy.js";

/** The server's runtime adapter endpoints (vLLM's, with `VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`). */
export const LOAD_ADAPTER_PATH = "/v1/load_lora_adapter";
export const UNLOAD_ADAPTER_PATH = "/v1/unload_lora_adapter";

/** What happened to the served adapters, for logs. */
export type AdapterEvent =
  | { readonly kind: "loaded"; readonly adapter: string; readonly path: string }
  | { readonly kind: "unloaded"; readonly adapter: string }
  /** The old adapter could not be unloaded: the new one serves anyway; the old one holds server memory. */
  | { readonly kind: "unload-failed"; readonly adapter: string; readonly detail: string };

export interface ServedPolicyOptions extends SidecarPolicyOptions {
  /** The server's root, e.g. `http://127.0.0.1:8000` (the adapter endpoints are under `/v1`). */
  readonly serverUrl: string;
  /**
   * The model that generates under an adapter name (the request's `model`), e.g.
   * `(adapter) => openAICompatible({ baseUrl: "http://127.0.0.1:8000/v1", model: adapter })`:
   * its retries and timeouts are the completions'.
   */
  readonly modelFor: (adapter: string) => LanguageModel;
  /** Where each published version's weights are written: `<adapterRoot>/<prefix>-v0001`, … */
  readonly adapterRoot: string;
  /** Adapter names are `<prefix>-v<NNNN>` (default `pi`). */
  readonly adapterPrefix?: string;
  /**
   * Writes the trainer's current weights into `directory` in the form the server loads. Default:
   * the trainer's `save` (the sidecar's `checkpoint.save`, with `tokenizer.json` for a tokenizer of this side). For a transformers policy with a LoRA adapter
   * (`init.model.lora`) that directory is a peft adapter directory (`adapter_config.json`,
   * `adapter_model.safetensors`), what vLLM loads; for a policy without one it is `policy.pt`
   * alone, which only a server that reads it can load.
   */
  readonly writeAdapter?: (policy: RemotePolicy, directory: string) => Promise<void>;
  /** Time limit of one load or unload request (default 120 000 ms: a server may load from a slow disk). */
  readonly adapterTimeoutMs?: number;
  /** The completions' options (concurrency, logProbs); `environment` and `maxTokens` come from above. */
  readonly completions?: Omit<LlmPolicyOptions, "environment" | "maxTokens" | "name">;
  readonly onAdapter?: (event: AdapterEvent) => void;
}

/** A {@link TrainablePolicy} that acts through a server and names the adapter it serves. */
export interface ServedPolicy extends TrainablePolicy {
  /** The adapter in service now (`pi-v0003`), or undefined before the first load succeeded. */
  readonly adapter: string | undefined;
  /** Writes the trainer's weights as the next version and loads it into the server (after a failed load, to try again). */
  publish(): Promise<string>;
  /**
   * Unloads the adapter in service, so that the server's LoRA slots and memory hold no policy
   * that is done with (a run of several methods loads one per method). A failed unload is
   * reported (`unload-failed`) as after a publish; `act` refuses until the next `publish`.
   */
  close(): Promise<void>;
}

/**
 * Rollouts from an OpenAI-compatible server (vLLM), training in the sidecar: `act` sends ARCO's
 * chats to the server with `model` = the adapter in service; `update`, `sft` and `restore` train
 * the sidecar's policy, write its weights as the next version and have the server load it
 * (`POST /v1/load_lora_adapter {lora_name, lora_path}`), then unload the previous one. A failed
 * load is an `AdapterLoadError` and leaves the previous adapter in service. The served texts
 * are re-tokenised for training, so the server and the sidecar must share a tokenizer.
 *
 * @example
 * const policy = await servedPolicy(client, {
 *   environment: env, tokenizer, init,
 *   serverUrl: "http://127.0.0.1:8000",
 *   modelFor: (adapter) => openAICompatible({ baseUrl: "http://127.0.0.1:8000/v1", model: adapter, apiKeyEnv: false }),
 *   adapterRoot: "runs/pi-adapters",
 * });
 * policy.adapter; // "pi-v0001"
 */
export async function servedPolicy(client: SidecarClient, options: ServedPolicyOptions): Promise<ServedPolicy> {
  const remote = await RemotePolicy.init(client, options.init);
  const trainer = sidecarTrainer(remote, options);
  const prefix = options.adapterPrefix ?? "pi";
  if (!/^[A-Za-z0-9_.-]+$/.test(prefix))
    throw new RlxarInputError(
      "options.adapterPrefix",
      `expected letters, digits, '.', '_' or '-', got ${JSON.stringify(prefix)}`,
    );
  const root = resolve(options.adapterRoot);
  // By default the trainer's own save: the sidecar's checkpoint (a peft adapter directory under
  // LoRA) and, for a tokenizer of this side's, its tokenizer.json beside it.
  const writeAdapter = options.writeAdapter ?? ((_: RemotePolicy, directory: string) => trainer.save(directory));
  const timeoutMs = options.adapterTimeoutMs ?? 120_000;
  let serving: string | undefined;
  let version = 0;

  async function post(path: string, body: unknown): Promise<{ status: number; text: string }> {
    const response = await fetch(new URL(path, options.serverUrl), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: response.status, text: await response.text() };
  }

  async function publish(): Promise<string> {
    version++;
    const adapter = `${prefix}-v${String(version).padStart(4, "0")}`;
    const directory = join(root, adapter);
    await mkdir(directory, { recursive: true });
    await writeAdapter(remote, directory);
    let answer: { status: number; text: string };
    try {
      answer = await post(LOAD_ADAPTER_PATH, { lora_name: adapter, lora_path: directory });
    } catch (error) {
      throw new AdapterLoadError(options.serverUrl, adapter, directory, undefined, (error as Error).message, serving);
    }
    if (answer.status !== 200)
      throw new AdapterLoadError(
        options.serverUrl,
        adapter,
        directory,
        answer.status,
        answer.text.slice(0, 500),
        serving,
      );
    const previous = serving;
    serving = adapter;
    options.onAdapter?.({ kind: "loaded", adapter, path: directory });
    // The new adapter already serves: a failed unload costs server memory, not correctness.
    if (previous !== undefined) await unload(previous);
    return adapter;
  }

  async function unload(adapter: string): Promise<void> {
    const unloaded = await post(UNLOAD_ADAPTER_PATH, { lora_name: adapter }).catch((error: Error) => ({
      status: 0,
      text: error.message,
    }));
    options.onAdapter?.(
      unloaded.status === 200
        ? { kind: "unloaded", adapter }
        : { kind: "unload-failed", adapter, detail: `HTTP ${unloaded.status}: ${unloaded.text.slice(0, 200)}` },
    );
  }

  await publish();
  const name = options.name ?? `served:${prefix}`;
  return {
    name,
    get adapter() {
      return serving;
    },
    publish,
    async close() {
      const adapter = serving;
      serving = undefined;
      if (adapter !== undefined) await unload(adapter);
    },
    act(views: readonly AgentView[], act: ActOptions): Promise<PolicyDecision[]> {
      if (serving === undefined) return Promise.reject(new RlxarInputError("policy", "no adapter is in service"));
      return llmPolicy(options.modelFor(serving), {
        ...options.completions,
        environment: options.environment,
        ...(options.maxObservationChars === undefined ? {} : { maxObservationChars: options.maxObservationChars }),
        maxTokens: options.maxNewTokens ?? 64,
        name: `${name}:${serving}`,
      }).act(views, act);
    },
    async update(samples, update) {
      const metrics = await trainer.update(samples, update);
      await publish();
      return metrics;
    },
    async sft(examples, sft) {
      const result = await trainer.sft(examples, sft);
      await publish();
      return result;
    },
    setReference: () => trainer.setReference(),
    resetOptimizer: () => trainer.resetOptimizer(),
    save: (directory) => trainer.save(directory),
    async load(directory) {
      await trainer.load(directory);
      await publish();
    },
  };
}
