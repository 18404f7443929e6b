import { definedFields } from "@rubric/core";
import type { KeepCheckpoints, Objective, TrainingLogEntry } from "@rubric/gspo";

/** Everything an ARCANE reproduction run is configured by; `arcaneConfig` fills the defaults. */
export interface ArcaneConfig {
  readonly quick: boolean;
  readonly seeds: readonly number[];
  readonly sftEpochs: number;
  readonly sftLearningRate: number;
  readonly gspoBatches: number;
  readonly promptsPerBatch: number;
  readonly groupSize: number;
  readonly stepsPerBatch: number;
  readonly learningRate: number;
  readonly objective: Objective;
  readonly epsLow: number;
  readonly epsHigh: number;
  readonly klCoef: number;
  /** λ_clarify per token of a question asked. */
  readonly clarifyCostPerToken: number;
  /** λ_compute per token of the rubric's criteria. */
  readonly computeCostPerToken: number;
  /** The probability that the noisy judge flips a criterion's verdict (the "oracle, noisy judge" row). */
  readonly judgeNoise: number;
  /** Training tasks the best fixed rubric is chosen on (never an eval task). */
  readonly fixedRubricTasks: number;
  /** Other clipping bands [ε_low, ε_high] to train Stage II under, for the sensitivity table ([] = none). */
  readonly epsSweep: readonly (readonly [number, number])[];
  /** Best-of-N sizes evaluated; the candidates of a smaller N are a prefix of the largest's. */
  readonly ns: readonly number[];
  /** Limit the tasks (for demonstrations); default all 175 / 44. */
  readonly trainTasks?: number;
  readonly evalTasks?: number;
}

/** Stage II's objective, the paper's clipping band, the KL to the SFT policy and the gym's costs in tokens: every manager's defaults. */
export const STAGE_II_DEFAULTS = {
  objective: "gspo",
  epsLow: 3e-4,
  epsHigh: 4e-4,
  klCoef: 0.01,
  clarifyCostPerToken: 0.0007,
  computeCostPerToken: 0.0003,
} as const satisfies Partial<ArcaneConfig>;

/**
 * Defaults of a run. Quick (about a minute here): 2 seeds, 6 SFT epochs, 12 GSPO batches of 16
 * tasks. Full: 5 seeds, 12 epochs, 40 batches of 32 tasks. The clipping band is the paper's
 * 3e-4 / 4e-4: after the first step of a batch, most sequences of this small policy fall outside
 * it (their log-probabilities move by percents per step), so each batch is close to one
 * on-policy step; `epsSweep` trains Stage II again under wider bands (3e-3 / 4e-3 and
 * 0.2 / 0.28 by default; the run's own band is never swept twice) for the sensitivity table.
 */
export function arcaneConfig(
  options: { quick?: boolean; seeds?: number } & Partial<Omit<ArcaneConfig, "quick" | "seeds">> = {},
): ArcaneConfig {
  const quick = options.quick ?? false;
  const count = options.seeds ?? (quick ? 2 : 5);
  const { seeds: _, quick: __, ...rest } = options;
  const config: ArcaneConfig = {
    quick,
    seeds: Array.from({ length: count }, (_, i) => i + 1),
    sftEpochs: quick ? 6 : 12,
    sftLearningRate: 0.05,
    gspoBatches: quick ? 12 : 40,
    promptsPerBatch: quick ? 16 : 32,
    groupSize: 8,
    stepsPerBatch: 4,
    learningRate: 0.05,
    ...STAGE_II_DEFAULTS,
    judgeNoise: 0.2,
    fixedRubricTasks: quick ? 16 : 32,
    epsSweep: [
      [3e-3, 4e-3],
      [0.2, 0.28],
    ],
    ns: [1, 2, 4, 8, 16],
    // An option given as undefined (a flag not passed) means the default, not "undefined".
    ...definedFields(rest),
  };
  // The run's own band is the sensitivity table's first row already.
  return {
    ...config,
    epsSweep: config.epsSweep.filter(([low, high]) => low !== config.epsLow || high !== config.epsHigh),
  };
}

export type ArcaneProgress =
  | { readonly phase: "prepare"; readonly seed: number }
  | {
      readonly phase: "sft" | "gspo";
      readonly seed: number;
      readonly done: number;
      readonly total: number;
      readonly entry: TrainingLogEntry;
    }
  | {
      readonly phase: "sft-oracle";
      readonly seed: number;
      readonly done: number;
      readonly total: number;
      readonly entry: TrainingLogEntry;
    }
  | {
      readonly phase: "eps-sweep";
      readonly seed: number;
      readonly done: number;
      readonly total: number;
      readonly entry: TrainingLogEntry;
    }
  | { readonly phase: "fixed-rubric"; readonly seed: number; readonly done: number; readonly total: number }
  | { readonly phase: "evaluate"; readonly seed: number; readonly done: number; readonly total: number };

export interface ArcaneRunOptions {
  readonly gdpvalDir: string;
  readonly config: ArcaneConfig;
  /** Where each seed keeps its training log and checkpoints (`seed-<n>/`); none → nothing written. */
  readonly runDir?: string;
  /** Continue each seed from its latest checkpoint under `runDir`. */
  readonly resume?: boolean;
  /** `"latest"` (default): each stage keeps only its latest checkpoint; `"all"`: every epoch's and batch's. */
  readonly keepCheckpoints?: KeepCheckpoints;
  readonly onProgress?: (event: ArcaneProgress) => void;
  readonly signal?: AbortSignal;
}
