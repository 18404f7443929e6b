/**
 * @rubric/rlxar — ARCO's co-evolution of a policy and its rubric model μ. So far: μ created,
 * exported and served through the Python sidecar (the torch backend beside `RubricModel`'s
 * onnxruntime-node one), the environment and policy interfaces, and an in-process trainable
 * extractive policy for HotpotQA.
 */
export {
  createMu,
  exportMu,
  sftIds,
  sftMu,
  sidecarMuEngine,
  trainMuTokenizer,
  type CreateMuOptions,
  type MuExport,
  type MuShape,
  type SftEpoch,
  type SftMuOptions,
} from "./mu/sidecar-mu.js";
export { arcoExactMatch, exactMatch, f1Score, normalizeAnswer } from "./hotpotqa/metrics.js";
export {
  CheckpointMismatchError,
  DecisionTraceError,
  EpisodeDoneError,
  RlxarError,
  RlxarFileError,
  RlxarInputError,
} from "./errors.js";
export type {
  ActionGrammar,
  AgentView,
  Environment,
  EnvironmentEpisode,
  ParsedAction,
  StepKind,
  Transition,
} from "./environment/environment.js";
export {
  episodeSteps,
  episodeTrajectory,
  rollout,
  type Episode,
  type EpisodeStep,
  type RolloutOptions,
} from "./environment/rollout.js";
export type {
  ActOptions,
  Policy,
  PolicyDecision,
  PolicySample,
  PolicySftExample,
  PolicyUpdateMetrics,
  PolicyUpdateOptions,
  TrainablePolicy,
} from "./policy/policy.js";
export {
  extractiveCandidates,
  DEFAULT_CANDIDATE_OPTIONS,
  type AnswerSource,
  type Candidate,
  type ExtractiveCandidateOptions,
  type FinishCandidate,
  type Occurrence,
  type QuerySource,
  type RetrievedParagraph,
  type SearchCandidate,
  type SpanShape,
  type ViewReading,
} from "./policy/extractive/candidates.js";
export { FEATURE_NAMES } from "./policy/extractive/features.js";
export type { AnswerType, QuestionCues } from "./policy/extractive/question.js";
export type { Word } from "./policy/extractive/spans.js";
export {
  ExtractivePolicy,
  ExtractiveTraceSchema,
  extractivePolicy,
  type ExtractiveObjective,
  type ExtractivePolicyOptions,
  type ExtractiveSftResult,
  type ExtractiveTrace,
} from "./policy/extractive/extractive-policy.js";
