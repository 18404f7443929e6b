/**
 * @rubric/rlxar — ARCO's co-evolution of a policy and its rubric model μ. So far: μ created,
 * exported and served through the Python sidecar (the torch backend beside `RubricModel`'s
 * onnxruntime-node one); the environment and policy interfaces with a batched rollout; and
 * policies: an LLM over any `LanguageModel` with ARCO's prompts, the sidecar's trainable causal
 * LM, and rollouts served by an OpenAI-compatible server (vLLM) with runtime adapter loading.
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
  AdapterLoadError,
  EpisodeDoneError,
  PolicyGenerateError,
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

// policies: ARCO's prompts, an LLM over any LanguageModel, the sidecar's trainable causal LM, and
// served rollouts (vLLM) with runtime adapter loading
export {
  historyText,
  policyForcedFinishPrompt,
  policyMessages,
  policySystemPrompt,
  policyTurnPrompt,
  type PolicyPromptOptions,
  type PromptEnvironment,
} from "./policy/prompts.js";
export { llmPolicy, rowSeed, type LlmPolicyOptions, type LlmTrace } from "./policy/llm-policy.js";
export {
  GREEDY_TEMPERATURE,
  SidecarTraceSchema,
  policyPromptIds,
  sidecarPolicy,
  trainPolicyTokenizer,
  type PolicyPromptIds,
  type PolicyTokenizer,
  type SidecarPolicyOptions,
  type SidecarTrace,
} from "./policy/sidecar-policy.js";
export {
  LOAD_ADAPTER_PATH,
  UNLOAD_ADAPTER_PATH,
  servedPolicy,
  type AdapterEvent,
  type ServedPolicy,
  type ServedPolicyOptions,
} from "./policy/served-policy.js";
