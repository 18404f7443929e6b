/**
 * @rubric/rlxar — ARCO's co-evolution of a policy and its rubric model μ: μ created, exported
 * and served through the Python sidecar (the torch backend beside `RubricModel`'s
 * onnxruntime-node one); the environment and policy interfaces with a batched rollout; ARCO's
 * HotpotQA environment (`hotpotQa`) with its data, retrieval, grammar and metrics; policies (an
 * LLM over any `LanguageModel` with ARCO's prompts, the sidecar's trainable causal LM, rollouts
 * served by an OpenAI-compatible server with runtime adapter loading, an in-process extractive
 * policy); the warm-up teacher; the co-evolution trainer with its critics (`MuCritic`,
 * `teacherCritic`, any `StepCritic`); μ's diagnostics; and the ARCO gym, a simulation with
 * ground-truth step credit (`generateGymTasks`, `arcoGym`, `gymPolicy`, `trueStepAdvantages`).
 */

// mu: μ created, trained, exported and served through the Python sidecar
export {
  createMu,
  exportMu,
  sftIds,
  llamaTokenizer,
  loadSidecarMu,
  pretrainMu,
  sftMu,
  sftRows,
  sidecarMuEngine,
  trainMuTokenizer,
  type CreateMuOptions,
  type MuExport,
  type MuShape,
  type PretrainEpoch,
  type PretrainMuOptions,
  type SftEpoch,
  type SftMuOptions,
  type SftRow,
} from "./mu/sidecar-mu.js";
export {
  SIDECAR_MU_FILE,
  SidecarMuModel,
  type MuTextFormat,
  type SidecarMuManifest,
  type SidecarMuModelOptions,
} from "./mu/sidecar-mu-model.js";
export { fitHistories, type FittedPrompt } from "./history/fit.js";
export {
  decompositionFit,
  trainMu,
  type DecompositionFit,
  type TrainedMu,
  type TrainMuEpoch,
  type TrainMuEvent,
  type TrainMuOptions,
} from "./mu/train-mu.js";

// word-vectors: pretrained word vectors (GloVe's files) and the token embeddings μ starts from
export {
  readWordVectors,
  tokenEmbeddings,
  WORD_VECTOR_FILES,
  type TokenEmbeddings,
  type WordVectors,
} from "./word-vectors/word-vectors.js";

// hotpotqa: ARCO's HotpotQA environment with its data, retrieval, grammar, metrics and official evaluation
export { arcoExactMatch, exactMatch, f1Score, normalizeAnswer } from "./hotpotqa/metrics.js";
export {
  HotpotRowSchema,
  loadHotpotQa,
  readHotpotQa,
  selectHotpotQuestions,
  type HotpotParagraph,
  type HotpotQaSelection,
  type HotpotQuestion,
  type HotpotRow,
  type SupportingFact,
} from "./hotpotqa/data.js";
export {
  indexParagraphs,
  type ParagraphHit,
  type ParagraphIndex,
  type RetrievalOptions,
} from "./hotpotqa/retrieval.js";
export { hotpotGrammar, parseHotpotAction } from "./hotpotqa/grammar.js";
export {
  HOTPOT_OBSERVATIONS,
  hotpotQa,
  type HotpotQaOptions,
  type HotpotReward,
} from "./hotpotqa/environment.js";
export {
  HotpotPredictionsSchema,
  evaluateHotpotQa,
  readHotpotPredictions,
  type HotpotEvaluation,
  type HotpotPredictions,
  type HotpotQuestionScore,
} from "./hotpotqa/evaluation.js";

// errors: the base of every error rlxar throws, with a stable `rlxar.*` code
export {
  AdapterLoadError,
  CheckpointMismatchError,
  DecisionTraceError,
  EpisodeDoneError,
  PolicyGenerateError,
  RlxarError,
  RlxarFileError,
  RlxarInputError,
} from "./errors.js";

// environment: the environment and policy interfaces, and the batched rollout
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
  type RolloutTiming,
} from "./rollout/rollout.js";
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

// critics: μ as a critic, any StepCritic, the teacher critic, and a critic over hand-made step features trained by ARCO's decomposition loss
export {
  MuCritic,
  type CriteriaSource,
  type MuCredit,
  type MuCriticOptions,
  type MuUpdate,
  type MuUpdateSettings,
} from "./critic/mu-critic.js";
export type { CriticUpdate, StepCritic, StepRating } from "./critic/step-critic.js";
export { frozenCritic, hindsightCritic, teacherCritic } from "./critic/teacher-critic.js";
export {
  FeatureCritic,
  featureCritic,
  type FeatureCriticOptions,
  type FeatureFitEpoch,
  type FeatureObjective,
} from "./critic/feature-critic.js";

// trainer: advantages, settings and the co-evolution trainer
export {
  actionBuckets,
  denseAdvantages,
  sparseAdvantages,
  type DenseAdvantageOptions,
  type TerminalBuckets,
} from "./trainer/advantages.js";
export {
  PolicySignalSchema,
  TrainerSettingsSchema,
  type PolicySignal,
  type TrainerSettings,
  type TrainerSettingsInput,
} from "./trainer/settings.js";
export {
  isTrainable,
  trainCoEvolution,
  TrainerLogLineSchema,
  type BatchDetail,
  type BatchTiming,
  type CoEvolutionOptions,
  type CoEvolutionResult,
  type Phase,
  type TrainerEvent,
  type TrainerLogLine,
} from "./trainer/co-evolution.js";

// diagnostics: μ's step scores by bucket, contrasts and evidence AUC
export {
  bucketScores,
  contrastScores,
  evidenceAuc,
  sampleCriteria,
  type BucketScores,
  type ContrastResult,
  type CriteriaSample,
  type EvidenceAuc,
  type StepContrast,
} from "./diagnostics/step-scores.js";

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
export { llmPolicy, type LlmPolicyOptions, type LlmTrace } from "./policy/llm-policy.js";
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

// warmup: the gold teacher and the warm-up data
export {
  goldTeacher,
  teacherAnnotation,
  warmupData,
  type GoldQuestion,
  type TeacherOptions,
  type WarmupData,
} from "./warmup/teacher.js";

// extractive: an in-process trainable policy over extractive candidate actions (HotpotQA)
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

// gym: the ARCO gym, a simulation — procedurally generated multi-hop worlds of fictional entities,
// ARCO's environment over them, a policy whose features can express the optimal one, the oracle
// and noisy teachers, imitation, a criterion grammar whose every criterion has a checker (teacher
// annotations, criterion validity), Monte-Carlo ground-truth step credit and the critic that hands it to the trainer (a control)
export {
  GYM_LOOKALIKES,
  GYM_MAX_HOPS,
  generateGymTasks,
  type GymHop,
  type GymLure,
  type GymSplit,
  type GymTask,
  type GymTaskOptions,
} from "./gym/world.js";
export {
  GYM_RELATIONS,
  chainQuestion,
  namesIn,
  questionHops,
  readStatedRelation,
  type EntityType,
  type Relation,
  type RelationKey,
  type StatedRelation,
} from "./gym/relations.js";
export { arcoGym, type ArcoGymOptions } from "./gym/environment.js";
export {
  gymCandidates,
  readChain,
  type ChainReading,
  type GymCandidate,
  type GymFinishCandidate,
  type GymSearchCandidate,
  type NameRoles,
  type QueryForm,
} from "./gym/candidates.js";
export {
  GYM_ACTION_FEATURE_NAMES,
  GYM_FEATURE_NAMES,
  GYM_STATE_FEATURE_NAMES,
  gymActionFeatures,
  gymStateFeatures,
  gymStepFeatures,
} from "./gym/features.js";
export {
  GymPolicy,
  GymTraceSchema,
  gymPolicy,
  type GymPolicyOptions,
  type GymTrace,
} from "./gym/policy.js";
export { CARELESS_NOISE, gymNoisyTeacher, gymOracle, type GymTeacherOptions } from "./gym/teachers.js";
export { imitate, type ImitationOptions, type ImitationResult } from "./gym/imitation.js";
export {
  checkGymCriterion,
  GYM_FIXED_CRITERIA,
  gymFixedAnnotation,
  criterionValidity,
  GYM_CRITERIA,
  gymStepCriteria,
  gymTeacherCritic,
  gymTeacherAnnotation,
  readGymCriterion,
  type CriterionValidity,
  type GymCheckedStep,
  type GymCriterionTemplate,
  type GymStepClass,
  type ReadCriterion,
} from "./gym/criteria.js";
export { trueStepAdvantages, type StepAdvantage, type TrueAdvantageOptions } from "./credit/true-advantage.js";
export {
  TRUE_ADVANTAGE_CRITERION,
  trueAdvantageCritic,
  type TrueAdvantageCriticOptions,
} from "./credit/true-advantage-critic.js";
