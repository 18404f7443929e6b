import { definedFields } from "@rubric/core";
import type { TrainingLogEntry } from "@rubric/gspo";
import { STAGE_II_DEFAULTS, type ArcaneConfig } from "../config.js";

/** What the sidecar run shares with the gym run's configuration (the same meanings, other defaults). */
type SharedSettings = Pick<
  ArcaneConfig,
  | "sftEpochs"
  | "sftLearningRate"
  | "gspoBatches"
  | "promptsPerBatch"
  | "groupSize"
  | "stepsPerBatch"
  | "learningRate"
  | "objective"
  | "epsLow"
  | "epsHigh"
  | "klCoef"
  | "clarifyCostPerToken"
  | "computeCostPerToken"
  | "ns"
  | "trainTasks"
  | "evalTasks"
>;

/** How `rubric repro arcane --manager sidecar` runs; `sidecarManagerConfig` fills the defaults. */
export interface SidecarManagerConfig extends SharedSettings {
  readonly quick: boolean;
  readonly seed: number;
  /**
   * A transformers causal LM (a Hugging Face name, or a local directory) in place of the sidecar's
   * small transformer, with its own tokenizer: the GPU recipe (needs transformers in the sidecar's
   * Python). Null: the small transformer with a BPE learnt from the teacher dialogues.
   */
  readonly transformersModel: string | null;
  /** torch's device for the policy: "auto" (the GPU when there is one), "cpu", "cuda", "cuda:1", … */
  readonly device: string;
  readonly dtype: "float32" | "float64" | "bfloat16" | "float16";
  /** The sidecar's Python interpreter (default: Debian's /usr/bin/python3 when it exists, else python3). */
  readonly python?: string;
  /** The sidecar's small causal transformer (unused with `transformersModel`). */
  readonly model: {
    readonly dModel: number;
    readonly heads: number;
    readonly layers: number;
    readonly maxSequence: number;
  };
  /** Byte-level BPE ids, learnt from the teacher dialogues (the small transformer's). */
  readonly vocabularySize: number;
  readonly sftBatchSize: number;
  /** Teacher dialogues per training task for SFT, each with a stakeholder of its own. */
  readonly teacherStakeholders: number;
  readonly maxQuestionTokens: number;
  readonly maxRubricTokens: number;
  /** torch's threads in the sidecar. */
  readonly threads: number;
}

/**
 * Defaults. Quick (about a quarter of an hour on a CPU): 6 SFT epochs over 4 teacher dialogues per
 * training task, 6 GSPO batches of 8 tasks × 4 dialogues. Full: 12 epochs over 8 per task, 30
 * batches of 16 × 8. The band, KL and costs are the gym run's. With `transformersModel` the
 * learning rates default to a pretrained model's (SFT 1e-5, GSPO 1e-6): the small transformer's
 * (3e-3, 3e-4) would wreck one.
 */
export function sidecarManagerConfig(
  options: { quick?: boolean } & Partial<Omit<SidecarManagerConfig, "quick">> = {},
): SidecarManagerConfig {
  const quick = options.quick ?? false;
  const { quick: _, ...rest } = options;
  const pretrained = options.transformersModel !== undefined && options.transformersModel !== null;
  return {
    quick,
    seed: 1,
    transformersModel: null,
    device: "auto",
    dtype: "float32",
    model: { dModel: 64, heads: 4, layers: 2, maxSequence: 384 },
    // The teacher dialogues repeat their instructions, questions and phrases: with 2,048 ids a
    // rubric turn is about 15 tokens and a rubric prompt about 115 (1,024 ids: 55 and 225).
    vocabularySize: 2048,
    teacherStakeholders: quick ? 4 : 8,
    sftEpochs: quick ? 6 : 12,
    sftLearningRate: pretrained ? 1e-5 : 3e-3,
    sftBatchSize: 16,
    gspoBatches: quick ? 6 : 30,
    promptsPerBatch: quick ? 8 : 16,
    groupSize: quick ? 4 : 8,
    stepsPerBatch: 2,
    learningRate: pretrained ? 1e-6 : 3e-4,
    ...STAGE_II_DEFAULTS,
    maxQuestionTokens: 48,
    maxRubricTokens: 96,
    ns: [1, 8],
    threads: 2,
    ...definedFields(rest),
  };
}

export type SidecarManagerProgress =
  | { readonly phase: "prepare" | "evaluate-sft" | "evaluate-gspo" }
  | { readonly phase: "sft" | "gspo"; readonly done: number; readonly total: number; readonly entry: TrainingLogEntry };

export interface SidecarManagerRunOptions {
  readonly gdpvalDir: string;
  readonly config: SidecarManagerConfig;
  readonly onProgress?: (event: SidecarManagerProgress) => void;
  readonly signal?: AbortSignal;
}
