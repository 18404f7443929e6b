// ARCO on HotpotQA, its configuration: what a run trains on and how, and what each method is.
import type { MuPooling } from "@rubric/arco-heads";
import { definedFields } from "@rubric/core";
import { selectHotpotQuestions, type TrainerSettingsInput } from "@rubric/rlxar";
import { type ArcoPolicySetting, policyRates } from "./policy.js";
import { type MuModelSetting, TINY_MU_MODEL } from "./mu-model.js";
import { ARCO_METHODS, type ArcoMethod } from "./table.js";

/**
 * ARCO's "w/o adaptive" criteria: one generic list for every step (the released code reads its
 * three from a file it describes as query specificity, evidence, and avoiding redundancy; ours are
 * written to the same description).
 */
export const FIXED_CRITERIA = [
  "The query is specific and relevant to the question",
  "The step gathers evidence the answer needs",
  "The step avoids redundant searches and moves toward an answer",
] as const;

/** How each method is set up: the policy's signal and the μ it reads. */
export interface MethodSetup {
  readonly signal: "arco" | "outcome" | "trajectory-rubric";
  /**
   * Which critic: none (outcome), a warm-up μ (generated criteria, fixed criteria, no prefix, or
   * a scalar PRM), or the gold teacher's hindsight scores (the control).
   */
  readonly mu: "none" | "generated" | "fixed" | "noPrefix" | "prm" | "teacher";
  readonly coEvolves: boolean;
  readonly outcomeAtTerminal?: boolean;
}

export const SETUPS: Readonly<Record<ArcoMethod, MethodSetup>> = {
  outcome: { signal: "outcome", mu: "none", coEvolves: false },
  rar: { signal: "trajectory-rubric", mu: "generated", coEvolves: false },
  frozenMu: { signal: "arco", mu: "generated", coEvolves: false },
  prm: { signal: "arco", mu: "prm", coEvolves: true },
  fixedCriteria: { signal: "arco", mu: "fixed", coEvolves: true },
  noPrefix: { signal: "arco", mu: "noPrefix", coEvolves: true },
  arco: { signal: "arco", mu: "generated", coEvolves: true },
  arcoOutcome: { signal: "arco", mu: "generated", coEvolves: true, outcomeAtTerminal: true },
  teacherMu: { signal: "arco", mu: "teacher", coEvolves: false },
};

/** The questions a run trains and reports on are drawn with these seeds, the same for every run seed. */
export const SELECTION_SEEDS = { train: "arco/train", eval: "arco/eval", tune: "arco/tune" } as const;

/**
 * Questions of the training file held out to tune on, never trained on (a seeded sample, the
 * same for every run): of the shared file's 469, 400 are left to train on and 69 to tune on, so
 * no setting is ever chosen on dev. `tools/arco-policy-lr.ts` reads these.
 */
export const TUNE_QUESTIONS = 69;

/** The training file's questions split once: `tune` (TUNE_QUESTIONS, seeded) and `train` (the rest), each in file order. */
export function splitTrainingQuestions<T extends { readonly id: string }>(
  questions: readonly T[],
): { train: T[]; tune: T[] } {
  const tune = selectHotpotQuestions(questions, { sample: { size: TUNE_QUESTIONS, seed: SELECTION_SEEDS.tune } });
  const held = new Set(tune.map((q) => q.id));
  return { train: questions.filter((q) => !held.has(q.id)), tune };
}

/** Everything an ARCO reproduction run is configured by; `arcoConfig` fills the defaults. */
export interface ArcoConfig {
  readonly quick: boolean;
  readonly seeds: readonly number[];
  readonly trainPath: string;
  readonly evalPath: string;
  /**
   * A seeded sample of n questions of each file (all when absent), the same sample for every
   * seed: seeds vary the training, not the questions. The train file is not shuffled (its yes/no
   * questions cluster at the end), so a first-n slice would not represent it.
   */
  readonly trainQuestions?: number;
  readonly evalQuestions?: number;
  /**
   * `tune`: evaluate on the training file's held-out questions (`splitTrainingQuestions`' 69)
   * instead of `evalPath`'s, to choose a setting without reading the dev file. Absent: `evalPath`.
   */
  readonly evalSplit?: "tune";
  /**
   * Index each paragraph's title beside its text (default true: issue 30's repair; ARCO's dense
   * retriever encodes the text only, so a search for a title found its paragraph only through
   * the text's words).
   */
  readonly indexTitles: boolean;
  /** μ's diagnostics read this many of the evaluation questions (a seeded sample; all when absent). */
  readonly diagnosticQuestions?: number;
  readonly methods: readonly ArcoMethod[];
  /** K of the ARCO runs beside the main K = `k` (the paper's sensitivity: 1, 3, 5). */
  readonly kSweep: readonly number[];
  readonly k: number;
  readonly teacher: { readonly rollouts: number; readonly noise: number };
  /** π: the extractive policy (default), a causal LM the sidecar trains, or a model rolled out only. */
  readonly policy: ArcoPolicySetting;
  readonly policySft: { readonly epochs: number; readonly learningRate: number; readonly batchSize: number };
  readonly mu: SmallMuSettings & {
    readonly maxObservationChars: number;
    /** μ-SFT examples at most (a seeded sample of the warm-up's); the sidecar's torch cost bounds this on a CPU. */
    readonly sftExamples: number;
    /**
     * What μ's score head reads (`MU_POOLINGS`); absent: ARCO's mean over prompt + criteria. Ours,
     * as the gym's `--mu-pooling`: `last` reads the last position alone, `criteria` the criteria's mean.
     */
    readonly pooling?: MuPooling;
    /** torch's device for μ (absent: the sidecar's default, the CPU), e.g. "cuda:1" beside π on "cuda:0", ARCO's placement. */
    readonly device?: string;
    /**
     * μ served by the sidecar (`--mu-model`): the small μ (`tiny`) or a transformers model with
     * ARCO's LoRA. Absent: the small μ exported to ONNX and served by onnxruntime-node.
     */
    readonly model?: MuModelSetting;
  };
  readonly trainer: TrainerSettingsInput;
}

/**
 * A small μ in ARCO's form that the sidecar creates and trains on a CPU: its backbone's shape and
 * tokenizer, its warm-up (μ-SFT) and its co-evolution (the decomposition step with KL β), as both
 * ARCO runs (HotpotQA and the gym) configure it.
 */
export interface SmallMuSettings {
  readonly dModel: number;
  readonly heads: number;
  readonly layers: number;
  readonly maxSequence: number;
  readonly vocabularySize: number;
  readonly maxCriteriaTokens: number;
  readonly sftEpochs: number;
  readonly sftLearningRate: number;
  readonly sftHeadLearningRate: number;
  readonly learningRate: number;
  readonly headLearningRate: number;
  readonly beta: number;
}

/**
 * Defaults of a run: ARCO's recipe where a CPU allows it (K = 3, groups of 4, temperature 0.7, dense
 * scale 0.5, the dense phase's π learning rate 0.3 × the sparse one's, π's KL 0.05 in the dense
 * phase, μ's KL β 0.05, μ's decomposition loss and its hot reload every batch), scaled down where
 * it does not: a small μ trained from scratch instead of a LoRA on Qwen3-4B, the extractive policy
 * instead of an LLM, 32 rollouts per update instead of 64, and far fewer questions and epochs, so
 * that the full run (3 seeds, every method and K ∈ {1, 3, 5}) fits in about half an hour on 2
 * cores. π's sparse learning rate (0.1) is the one its own learning test uses; a check on
 * held-out *training* questions (`tools/arco-policy-lr.ts`) found no learning rate or batch size
 * at which outcome-only RL raised their EM over the SFT policy, so there was nothing to select.
 * μ's rates are the small μ's. Nothing is selected on dev.
 */
export function arcoConfig(
  options: {
    quick?: boolean;
    seeds?: number;
    trainPath?: string;
    evalPath?: string;
    /** μ served by the sidecar (`arcoMuModel`); a transformers μ takes ARCO's rates and lengths. Ignored when `mu` is given. */
    muModel?: MuModelSetting;
  } & Partial<Omit<ArcoConfig, "quick" | "seeds" | "trainPath" | "evalPath">> = {},
): ArcoConfig {
  const quick = options.quick ?? false;
  const count = options.seeds ?? (quick ? 1 : 3);
  const policy = options.policy ?? { kind: "extractive" };
  const rates = policyRates(policy);
  return {
    quick,
    seeds: Array.from({ length: count }, (_, i) => i + 1),
    trainPath: options.trainPath ?? "../shared/data/hotpotqa/train.jsonl",
    evalPath: options.evalPath ?? "../shared/data/hotpotqa/dev.jsonl",
    ...definedFields({ trainQuestions: options.trainQuestions ?? (quick ? 48 : undefined) }),
    ...definedFields({ evalQuestions: options.evalQuestions ?? (quick ? 80 : undefined) }),
    ...definedFields({ evalSplit: options.evalSplit }),
    indexTitles: options.indexTitles ?? true,
    ...definedFields({ diagnosticQuestions: options.diagnosticQuestions ?? (quick ? undefined : 100) }),
    methods: options.methods ?? ARCO_METHODS,
    kSweep: options.kSweep ?? (quick ? [] : [1, 5]),
    k: options.k ?? 3,
    teacher: options.teacher ?? { rollouts: 3, noise: 0.25 },
    policy,
    policySft: options.policySft ?? { epochs: quick ? 3 : 5, learningRate: rates.sft, batchSize: 64 },
    mu: options.mu ?? muDefaults(quick, options.muModel),
    trainer: {
      sparseEpochs: 1,
      denseEpochs: quick ? 1 : 2,
      rolloutsPerBatch: 32,
      groupSize: 4,
      temperature: 0.7,
      sparseLearningRate: rates.sparse,
      denseLearningRate: rates.dense,
      sparseKl: 0,
      denseKl: 0.05,
      denseScale: 0.5,
      ...options.trainer,
    },
  };
}

/** μ's defaults: the small μ's, or ARCO's rates and lengths for a transformers μ (`--mu-model <name|dir>`). */
function muDefaults(quick: boolean, model: MuModelSetting | undefined): ArcoConfig["mu"] {
  const small: SmallMuSettings = {
    dModel: 32,
    heads: 2,
    layers: 1,
    maxSequence: 1024,
    vocabularySize: 800,
    maxCriteriaTokens: 48,
    sftEpochs: 4,
    sftLearningRate: 3e-3,
    sftHeadLearningRate: 1e-2,
    learningRate: 1e-4,
    headLearningRate: 1e-3,
    beta: 0.05,
  };
  const settings = model === undefined || model.name === TINY_MU_MODEL ? small : transformersMuSettings(small);
  return {
    ...settings,
    maxObservationChars: 240,
    sftExamples: quick ? 240 : 256,
    ...(model === undefined ? {} : { model }),
  };
}

/**
 * μ's rates and lengths for a transformers μ: ARCO's (μ-SFT 10 epochs at 5e-5 for the adapter and
 * 1e-3 for the score head; co-evolution at 1e-5 and 5e-4, β 0.05; ≤ 128 new tokens of criteria,
 * 2,048 positions). The small μ's shape fields stay as given: a transformers μ has its own.
 */
export function transformersMuSettings(small: SmallMuSettings): SmallMuSettings {
  return {
    ...small,
    maxSequence: 2048,
    maxCriteriaTokens: 128,
    sftEpochs: 10,
    sftLearningRate: 5e-5,
    sftHeadLearningRate: 1e-3,
    learningRate: 1e-5,
    headLearningRate: 5e-4,
    beta: 0.05,
  };
}
