// ARCO on HotpotQA, where μ runs: the small μ exported to ONNX and served by onnxruntime-node (the
// CPU default), or μ served by the sidecar itself (`--mu-model`): the same small μ (`tiny`), or a
// transformers model with LoRA on q/v, ARCO's own μ (a Qwen3-4B with its chat template).
import { ReproInputError } from "../errors.js";

/** The small μ served by the sidecar rather than onnxruntime-node: `--mu-model tiny`. */
export const TINY_MU_MODEL = "tiny";

/** ARCO's LoRA on μ's backbone: r 8, α 32, dropout 0.05 on q_proj and v_proj. */
export const ARCO_MU_LORA = { r: 8, loraAlpha: 32, loraDropout: 0.05, targetModules: ["q_proj", "v_proj"] } as const;

/** μ served by the sidecar, as the configuration records it (so a resume with another μ is refused). */
export interface MuModelSetting {
  /** `tiny` (the small μ of `mu`'s shape), or a transformers model's hub name or directory. */
  readonly name: string;
  /** A transformers μ's backbone dtype (the score head is float32 whatever it is); `tiny` is float32. */
  readonly dtype: "float32" | "bfloat16" | "float16";
  /** A transformers μ's LoRA (ARCO's); absent for `tiny`, which trains every weight. */
  readonly lora?: typeof ARCO_MU_LORA;
}

/**
 * `--mu-model`'s value as a setting: absent, μ is the small one in onnxruntime-node; `tiny`, the
 * same small μ served by the sidecar; anything else a transformers model (its name or directory)
 * with ARCO's LoRA, in `dtype` (default bfloat16).
 */
export function arcoMuModel(
  spec: string | undefined,
  flags: { readonly dtype?: MuModelSetting["dtype"] } = {},
): MuModelSetting | undefined {
  if (spec === undefined) return undefined;
  if (spec.length === 0)
    throw new ReproInputError("--mu-model", "needs a model: tiny, or a transformers model's name or directory");
  if (spec === TINY_MU_MODEL) {
    if (flags.dtype !== undefined && flags.dtype !== "float32")
      throw new ReproInputError("--dtype", `the small μ trains in float32; ${flags.dtype} is for a transformers μ`);
    return { name: spec, dtype: "float32" };
  }
  return { name: spec, dtype: flags.dtype ?? "bfloat16", lora: ARCO_MU_LORA };
}
