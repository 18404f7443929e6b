import { z } from "zod";

/**
 * What drives π's update. `arco`: sparse phase on the outcome, then dense on μ's step scores.
 * `outcome`: the sparse update all the way (Search-R1's outcome reward). `trajectory-rubric`: a
 * frozen judge's whole-trajectory score Σ_t s_t as the reward of a sparse update all the way (RaR).
 */
export const PolicySignalSchema = z.enum(["arco", "outcome", "trajectory-rubric"]);
export type PolicySignal = z.infer<typeof PolicySignalSchema>;

const positive = z.number().positive();
const nonNegative = z.number().nonnegative();

/**
 * The co-evolution trainer's settings, with ARCO's values as defaults (the released recipe: 3
 * sparse + 5 dense epochs, 64 rollouts per update, groups of 4, temperature 0.7, π learning rate
 * 1e-5 sparse and 3e-6 dense, KL to the SFT π 0 sparse and 0.05 dense, dense scale 0.5,
 * undiscounted reward-to-go, one terminal bucket). Every one is a flag of `rubric repro arco`.
 * `gamma` below 1 (0: immediate step rewards) and `terminalBuckets: "per-step"` are ours: ARCO's
 * γ = 1 makes the reward-to-go telescope to R − Σ_{k<t} s_k, outcome REINFORCE with a history
 * baseline, and its shared terminal bucket rewards an early wrong Finish.
 */
export const TrainerSettingsSchema = z.strictObject({
  signal: PolicySignalSchema.default("arco"),
  sparseEpochs: z.int().min(0).default(3),
  denseEpochs: z.int().min(0).default(5),
  rolloutsPerBatch: z.int().min(1).default(64),
  groupSize: z.int().min(1).default(4),
  temperature: nonNegative.default(0.7),
  sparseLearningRate: positive.default(1e-5),
  denseLearningRate: positive.default(3e-6),
  sparseKl: nonNegative.default(0),
  denseKl: nonNegative.default(0.05),
  denseScale: nonNegative.default(0.5),
  gamma: z.number().min(0).max(1).default(1),
  /** Ours: R − mean R added at the terminal step of the dense phase (see `denseAdvantages`). */
  outcomeAtTerminal: z.boolean().default(false),
  /** Ours: `per-step` gives terminal steps a baseline bucket per step index; ARCO's `shared` one by default (see `denseAdvantages`). */
  terminalBuckets: z.enum(["shared", "per-step"]).default("shared"),
  maxGradNorm: positive.default(1),
  seed: z.int().default(0),
});
export type TrainerSettings = z.infer<typeof TrainerSettingsSchema>;
export type TrainerSettingsInput = z.input<typeof TrainerSettingsSchema>;
