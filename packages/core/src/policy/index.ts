/**
 * Policy-gradient math: group and step advantages, the GSPO / GRPO / Dr.GRPO clipped objectives
 * with their gradients, the k3 KL estimator, reward-to-go, ARCO's outcome projection and
 * decomposition loss, and prioritized replay. Pure functions over plain [sequence][token] arrays.
 */
export { Adam, AdamStateSchema, type AdamState } from "./adam.js";
export { groupAdvantages, stepAdvantages } from "./advantages.js";
export type { GroupAdvantageOptions, StepAdvantageOptions } from "./advantages.js";
export { arcoActionBuckets, arcoStepBucket, bucketBaseline } from "./baseline.js";
export type { ArcoStepBucket } from "./baseline.js";
export { decompositionLoss, decompositionWeights, valueDifferences, valueLoss } from "./decomposition.js";
export type { DecompositionLoss, ValueLoss } from "./decomposition.js";
export { PolicyInputError } from "./errors.js";
export { gspoObjective } from "./gspo.js";
export type { GspoObjectiveInput, GspoObjectiveResult } from "./gspo.js";
export { drGrpoObjective, grpoObjective } from "./grpo.js";
export type { DrGrpoObjectiveInput, GrpoObjectiveInput, GrpoObjectiveResult } from "./grpo.js";
export { klK3 } from "./kl.js";
export type { KlK3Input, KlK3Result } from "./kl.js";
export type { ClippedObjectiveInput } from "./objective.js";
export { projectToOutcome } from "./projection.js";
export type { OutcomeProjection } from "./projection.js";
export { prioritizedReplay } from "./replay.js";
export { rewardToGo } from "./reward-to-go.js";
export { logSoftmax, sampleCategorical } from "./softmax.js";
export type { TokenMask, TokenMatrix } from "./sequences.js";
export type { Trainable } from "./trainable.js";
