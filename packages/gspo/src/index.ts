/**
 * @rubric/gspo — SFT + GSPO training of the rubric manager, and test-time guidance by rubrics.
 * This file is the package's only public door.
 *
 * Test-time guidance, the in-process manager policy, one TrainerBackend interface (in-process and the
 * Python sidecar), Stage I/II training loops with checkpoints, and the rubric gym as a training
 * environment. Experiments built on these (the ARCANE reproduction) live in `@rubric/repro`.
 */

// errors: the base TrainingError and the errors of guidance and training, each with a stable code
export {
  GuidanceInputError,
  GuidanceScoringError,
  PolicyTemplateError,
  TrainingError,
  TrainingInputError,
} from "./errors.js";

// guidance: test-time guidance of a worker by a fixed rubric (no gradients)
export {
  beamSearch,
  bestOfK,
  importanceResample,
  scoreCandidates,
  type GuidanceOptions,
  type ScoredCandidate,
} from "./guidance/guidance.js";

// policy: the in-process manager (questions, then the rubric)
export { featurize, mentions, type Features, type Mention } from "./policy/features.js";
export { PolicySequenceError } from "./errors.js";
export { RubricPolicy } from "./policy/rubric-policy.js";
export {
  QUESTION_REPERTOIRE,
  WEIGHT_BINS,
  WRITTEN_TEMPLATES,
  type DecodedSequence,
} from "./policy/vocabulary.js";
export type { CopyCandidate, PolicyPrompt } from "./policy/prompt.js";
export type { PolicyTrace } from "./policy/gradients.js";

// trainer: one interface over backends, the in-process backend, Stage I (SFT) and
// Stage II loops with checkpoints and logs
export { sftLoss, sftStep, trainSftStage, type SftItem, type SftTrainingOptions } from "./trainer/sft.js";
export type { RolloutGroup, SampledSequence, StepMetrics, StepOptions, TrainerBackend } from "./trainer/backend.js";
export { CheckpointError } from "./errors.js";
export { InProcessBackend } from "./trainer/in-process.js";
export type { TokenPolicy } from "./trainer/token-policy.js";
export { advantagesFor, clippedObjective, OBJECTIVES, type Objective } from "./trainer/objective.js";
export {
  TrainingAbortedError,
  TrainingLogEntrySchema,
  trainGspo,
  type GspoLogEntry,
  type GspoTrainingOptions,
  type KeepCheckpoints,
  type RunDirectory,
  type TrainingLogEntry,
} from "./trainer/train.js";

// gym-environment: the rubric gym as a training environment: prompts, Stage I targets, Stage II reward, U* and û
export {
  gymPrompt,
  gymReward,
  interactionTokens,
  proxyScores,
  sftSequence,
  teacherExamples,
  teacherSequence,
  trueUtility,
  type GymPrompt,
  type GymRewardOptions,
  type JudgeNoise,
  type TeacherOptions,
} from "./gym-environment/environment.js";

// sidecar: the TrainerBackend over @rubric/sidecar's RemotePolicy (the client itself is @rubric/sidecar's)
export { SidecarBackend, type SidecarBackendOptions, type TokenPrompt } from "./sidecar/backend.js";
