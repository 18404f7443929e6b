// ARCO on HotpotQA, its π: the extractive policy (the CPU default), a causal LM trained in the
// sidecar (the sidecar's small transformer, or a transformers model with LoRA on q/v as ARCO's
// Qwen3-4B), or a model that is rolled out only (an LLM provider, built by the caller).
import { createRng, type LanguageModel, shuffle } from "@rubric/core";
import type { SidecarClient } from "@rubric/sidecar";
import {
  type Environment,
  extractivePolicy,
  type HotpotQuestion,
  type Policy,
  type SidecarPolicyOptions,
  servedPolicy,
  sidecarPolicy,
  trainPolicyTokenizer,
} from "@rubric/rlxar";
import { ReproInputError } from "../errors.js";

/** The sidecar's small transformer as π: `sidecar:tiny`. */
export const TINY_POLICY_MODEL = "tiny";

/** Shape and tokenizer of `sidecar:tiny` (a causal LM trained from scratch; its BPE is learnt from the training questions). */
export interface TinyPolicyShape {
  readonly dModel: number;
  readonly heads: number;
  readonly layers: number;
  readonly maxSequence: number;
  readonly vocabularySize: number;
}

/** A causal LM the sidecar trains: the small transformer, or a transformers model. */
export interface SidecarPolicySetting {
  /** `tiny`, or a transformers model's hub name or directory. */
  readonly model: string;
  /** `policy.init`'s device ("auto": the GPU where torch sees one). */
  readonly device: string;
  readonly dtype: "float32" | "bfloat16" | "float16";
  /**
   * LoRA rank (ARCO's 8, α = 4r as ARCO's 32, on peft's default targets: q_proj and v_proj for
   * Llama and Qwen); 0 trains every weight. A transformers model only. No dropout: the sidecar
   * keeps the model in eval mode, so that a sequence's log-probs do not depend on the call.
   */
  readonly loraRank: number;
  /** New tokens per action (ARCO's 64). */
  readonly maxNewTokens: number;
  /** `sidecar:tiny`'s shape and vocabulary. */
  readonly tiny?: TinyPolicyShape;
}

/** What π is, as the configuration records it (so a resume with another π is refused). */
export type ArcoPolicySetting =
  | { readonly kind: "extractive" }
  /** A model rolled out but not trained (`llama-cpp:…`, `hf:…`, `openai-compatible:…`): the caller builds it. */
  | { readonly kind: "llm"; readonly spec: string }
  /** Trained and rolled out in the sidecar. */
  | ({ readonly kind: "sidecar" } & SidecarPolicySetting)
  /**
   * Trained in the sidecar, rolled out by a server (vLLM) that loads each new adapter at runtime
   * (`servedPolicy`): `url` is the server's root.
   */
  | ({ readonly kind: "served"; readonly url: string } & SidecarPolicySetting);

export const DEFAULT_TINY_POLICY: TinyPolicyShape = {
  dModel: 64,
  heads: 4,
  layers: 2,
  maxSequence: 1024,
  vocabularySize: 1024,
};

/** What the sidecar's own flags may set of π (`--device`, `--dtype`, `--lora-rank`); the rest are defaults. */
export type SidecarPolicyFlags = Partial<Pick<SidecarPolicySetting, "device" | "dtype" | "loraRank">>;

/**
 * `--policy`'s value as a setting: `extractive`, `sidecar:<tiny|model>`, `served:<url>#<model>`,
 * or any other spec, an LLM provider's (checked by the caller). The sidecar's device, dtype and
 * LoRA rank come from their own flags.
 */
export function arcoPolicySetting(spec: string | undefined, sidecar: SidecarPolicyFlags = {}): ArcoPolicySetting {
  if (spec === undefined || spec === "extractive") return { kind: "extractive" };
  if (spec.startsWith("sidecar:"))
    return { kind: "sidecar", ...sidecarSetting(spec.slice("sidecar:".length), sidecar, "sidecar:") };
  if (spec.startsWith("served:")) {
    const rest = spec.slice("served:".length);
    const hash = rest.lastIndexOf("#");
    const url = hash < 0 ? "" : rest.slice(0, hash);
    if (!/^https?:\/\/[^/\s]+/.test(url))
      throw new ReproInputError(
        "--policy",
        `served: needs the server's root and the model the sidecar trains, served:<http://host:port>#<name|dir>; got ${JSON.stringify(spec)}`,
      );
    const setting = sidecarSetting(rest.slice(hash + 1), sidecar, `served:${url}#`);
    if (setting.model !== TINY_POLICY_MODEL && setting.loraRank === 0)
      throw new ReproInputError(
        "--lora-rank",
        "a served policy is published as LoRA adapters the server loads: it needs a rank ≥ 1",
      );
    return { kind: "served", url: url.replace(/\/+$/, ""), ...setting };
  }
  return { kind: "llm", spec };
}

function sidecarSetting(model: string, sidecar: SidecarPolicyFlags, prefix: string): SidecarPolicySetting {
  if (model.length === 0)
    throw new ReproInputError("--policy", `${prefix} needs a model: tiny, or a transformers model's name or directory`);
  const tiny = model === TINY_POLICY_MODEL;
  if (tiny && sidecar.dtype !== undefined && sidecar.dtype !== "float32")
    throw new ReproInputError(
      "--dtype",
      `the small transformer trains in float32; ${sidecar.dtype} is for a transformers model`,
    );
  if (tiny && sidecar.loraRank !== undefined && sidecar.loraRank > 0)
    throw new ReproInputError(
      "--lora-rank",
      "LoRA is for a transformers model; the small transformer trains every weight",
    );
  return {
    model,
    device: sidecar.device ?? "auto",
    dtype: sidecar.dtype ?? (tiny ? "float32" : "bfloat16"),
    loraRank: tiny ? 0 : (sidecar.loraRank ?? 8),
    maxNewTokens: 64,
    ...(tiny ? { tiny: DEFAULT_TINY_POLICY } : {}),
  };
}

/** Learning rates that suit a π (the configuration's defaults depend on it; nothing is tuned on dev). */
export interface PolicyRates {
  readonly sft: number;
  readonly sparse: number;
  readonly dense: number;
}

/**
 * The defaults per π: the extractive policy's own (its learning test's); ARCO's for a pretrained
 * transformers model (SFT 1e-5, RL 1e-5 sparse and 3e-6 dense); for the small transformer trained
 * from scratch, the rates its sidecar tests and README use (3e-3 SFT, 1e-4 RL) with ARCO's 0.3
 * dense/sparse ratio.
 */
export function policyRates(setting: ArcoPolicySetting): PolicyRates {
  if (setting.kind !== "sidecar" && setting.kind !== "served") return { sft: 0.05, sparse: 0.1, dense: 0.03 };
  if (setting.model === TINY_POLICY_MODEL) return { sft: 3e-3, sparse: 1e-4, dense: 3e-5 };
  return { sft: 1e-5, sparse: 1e-5, dense: 3e-6 };
}

/** Texts `sidecar:tiny`'s BPE learns from: the training questions, their paragraphs, and actions on them (a seeded sample). */
function tokenizerTexts(train: readonly HotpotQuestion[]): string[] {
  const texts = train.flatMap((q) => [
    q.question,
    `Finish[${q.answer}]`,
    ...q.paragraphs.flatMap((p) => [p.text, `Search[${p.title}]`]),
  ]);
  // The BPE's cost grows with its corpus; a thousand texts (7 s) compress the paragraphs as well as 3,000 (22 s): 2.6 characters per token at 1,024.
  return shuffle(texts, createRng("arco/policy-tokenizer")).slice(0, 1000);
}

/** Where a served π's adapters go and how the server is asked for completions. */
export interface ServedPolicyContext {
  /**
   * The server's completions under an adapter name, e.g. providers' `openAICompatible` with
   * `baseUrl` the server's `/v1` and `model` the adapter: its retries and timeouts are the rollouts'.
   */
  readonly modelFor: (adapter: string) => LanguageModel;
  /** Each published adapter is a directory under here (`<root>/pi1-v0001`, …). */
  readonly adapterRoot: string;
}

/**
 * π for each seed, as `runArco` asks for it: a new policy per call (each method starts from the
 * SFT checkpoint it loads). `sidecar:tiny`'s tokenizer is learnt once per run from the training
 * questions, the same for every seed. A `llm` setting is the caller's to build; a `served` one
 * needs `served` (the server's completions and where adapters are written): each policy it makes
 * publishes its adapters under a prefix of its own (`pi1`, `pi2`, …), so that no name is loaded twice.
 */
export function arcoPolicyMaker(
  setting: ArcoPolicySetting,
  context: {
    readonly client: SidecarClient;
    readonly environment: Environment<HotpotQuestion>;
    readonly train: readonly HotpotQuestion[];
    readonly served?: ServedPolicyContext;
  },
): (seed: number) => Promise<Policy> {
  if (setting.kind === "extractive") return async () => extractivePolicy();
  if (setting.kind === "llm")
    throw new ReproInputError("policy", `π ${setting.spec} is a model the caller builds: pass options.policy`);
  const optionsFor = sidecarPolicyOptions(setting, context.environment, context.train);
  if (setting.kind === "sidecar") return (seed) => sidecarPolicy(context.client, optionsFor(seed));
  const served = context.served;
  if (served === undefined)
    throw new ReproInputError(
      "policy",
      `π is served by ${setting.url}: pass the server's completions (options.modelFor)`,
    );
  let made = 0;
  return (seed) => {
    made++;
    return servedPolicy(context.client, {
      ...optionsFor(seed),
      name: `served:${setting.model}`,
      serverUrl: setting.url,
      modelFor: served.modelFor,
      adapterRoot: served.adapterRoot,
      adapterPrefix: `pi${made}`,
      completions: { concurrency: 8 },
    });
  };
}

/** The sidecar policy's options per seed, for π trained in the sidecar (rolled out there or by a server). */
function sidecarPolicyOptions(
  setting: SidecarPolicySetting,
  environment: Environment<HotpotQuestion>,
  train: readonly HotpotQuestion[],
): (seed: number) => SidecarPolicyOptions {
  if (setting.model === TINY_POLICY_MODEL) {
    const shape = setting.tiny ?? DEFAULT_TINY_POLICY;
    const tokenizer = trainPolicyTokenizer(environment, tokenizerTexts(train), shape.vocabularySize);
    return (seed) => ({
      environment,
      tokenizer,
      maxNewTokens: setting.maxNewTokens,
      name: "sidecar:tiny",
      init: {
        model: {
          kind: "tiny",
          vocab_size: tokenizer.vocabularySize,
          d_model: shape.dModel,
          n_heads: shape.heads,
          n_layers: shape.layers,
          max_seq_len: shape.maxSequence,
        },
        seed,
        device: setting.device,
      },
    });
  }
  return (seed) => ({
    environment,
    maxNewTokens: setting.maxNewTokens,
    name: `sidecar:${setting.model}`,
    init: {
      model: {
        kind: "transformers",
        name: setting.model,
        ...(setting.loraRank > 0
          ? { lora: { r: setting.loraRank, lora_alpha: 4 * setting.loraRank, lora_dropout: 0 } }
          : {}),
      },
      seed,
      device: setting.device,
      dtype: setting.dtype,
    },
  });
}
