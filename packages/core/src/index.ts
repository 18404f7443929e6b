/**
 * @rubric/core — the rubric model, exact scoring, statistics and policy-gradient math.
 * Pure functions over plain data; no I/O. This file is the package's main door; `@rubric/core/effect` (the
 * Effect bridge) and `@rubric/core/files` (the Node-only reader of input files) are the other two.
 */

// rubric: schemas, loading, conversion, JSON Schema
export {
  CriterionSchema,
  FlatRubricSchema,
  VerifierSpecSchema,
  type Criterion,
  type FlatRubric,
  type FlatRubricInput,
  type VerifierSpec,
} from "./rubric/flat.js";
export {
  BUILT_IN_VERIFIER_KINDS,
  VerifierKindError,
  VerifierKindSchema,
  isKnownVerifierKind,
  knownVerifierKinds,
  registerVerifierKind,
  type OpenVerifierSpec,
  type VerifierKind,
  type VerifierKinds,
} from "./rubric/verifier-kind.js";
export {
  FailureActionSchema,
  StageSchema,
  StagedCodeRuleSchema,
  StagedJudgeRuleSchema,
  StagedRubricRecordSchema,
  StagedRubricSchema,
  StagedRuleSchema,
  serializeStagedRubric,
  stagedRuleId,
  type FailureAction,
  type LoadCorrection,
  type Stage,
  type StagedCodeRule,
  type StagedJudgeRule,
  type StagedRubric,
  type StagedRubricInput,
  type StagedRule,
} from "./rubric/staged.js";
export {
  loadRubrics,
  parseFlatRubric,
  parseRubric,
  parseStagedRubric,
  readRubricDocument,
  readRubricJson,
  readRubricJsonl,
  type LoadedRubric,
  type ParseOptions,
  type RubricDocument,
} from "./rubric/parse.js";
export { serializeRubric, toJsonl } from "./rubric/serialize.js";
export {
  flatToStaged,
  rubricCriteria,
  stagedRuleVerifier,
  stagedToFlat,
  type Conversion,
  type RubricCriterion,
} from "./rubric/convert.js";
export { rubricJsonSchema, rubricSchemaNames, type RubricSchemaName } from "./rubric/json-schema.js";
export {
  RubricConversionError,
  RubricValidationError,
  formatRubricIssue,
  type RubricIssue,
} from "./rubric/errors.js";

// records: JSON Lines read and written line by line, zod issues as readable paths
export {
  jsonLinesReader,
  readJsonLines,
  toJsonLines,
  withoutBom,
  type JsonLine,
  type JsonLinesOptions,
  type JsonLinesReader,
} from "./records/json-lines.js";
export { formatZodIssues, formatZodPath, type ZodIssueFormat } from "./records/zod-issues.js";

// lint: id problems, confusable ids, unreachable scores, and a rubric's size
export { lintRubricIds, lintStagedRubric } from "./rubric/lint.js";
export { RESERVED_IDS, confusableIdWarnings, idProblem } from "./rubric/ids.js";
export {
  approximateTokens,
  rubricSetStructure,
  rubricStructure,
  type RubricSetStructure,
  type RubricStructure,
} from "./rubric/structure.js";

// score: verdicts, aggregation, reweighting
export {
  VerdictFileSchema,
  VerdictSchema,
  WeightFileSchema,
  okVerdict,
  parseVerdictFile,
  parseWeightFile,
  verdictsFromFile,
  type Verdict,
  type VerdictFile,
} from "./score/verdict.js";
export { checkWeights, meanNormalizedScore, reweight, scoreRubric } from "./score/score.js";
export type { CriterionStatus, VerdictsInput } from "./score/plan.js";
export type {
  CriterionResult,
  ErrorPolicy,
  FlatScore,
  RubricScore,
  ScoreOptions,
  StageResult,
  StagedScore,
} from "./score/result.js";
export { ErrorPolicySchema } from "./score/result.js";
export { CriterionErrorsError, ScoringError, VerdictValidationError } from "./score/errors.js";

// metrics: ranking, correlation, significance, uncertainty, calibration
export {
  StatisticsInputError,
  averageRanks,
  bootstrapCI,
  erfc,
  expectedCalibrationError,
  kendallTau,
  logGamma,
  mcnemarExact,
  mean,
  median,
  ndcgAtK,
  normalCdf,
  pairedTTest,
  normalSurvival,
  pearson,
  populationStd,
  quantile,
  regularizedIncompleteBeta,
  rocAuc,
  sampleStd,
  spearman,
  summarizeSeeds,
  wilcoxonSignedRank,
  type BootstrapInterval,
  type BootstrapOptions,
  type CalibrationBin,
  type CalibrationResult,
  type CorrelationResult,
  type KendallTauResult,
  type McNemarResult,
  type PairedTTestResult,
  type SeedSummary,
  type WilcoxonResult,
} from "./metrics/index.js";

// policy: advantages, clipped objectives with gradients, KL, credit assignment, replay, Adam
export {
  Adam,
  AdamStateSchema,
  PolicyInputError,
  arcoActionBuckets,
  arcoStepBucket,
  bucketBaseline,
  decompositionLoss,
  decompositionWeights,
  drGrpoObjective,
  groupAdvantages,
  grpoObjective,
  gspoObjective,
  klK3,
  logSoftmax,
  prioritizedReplay,
  projectToOutcome,
  rewardToGo,
  sampleCategorical,
  stepAdvantages,
  valueDifferences,
  valueLoss,
  type AdamState,
  type ArcoStepBucket,
  type ClippedObjectiveInput,
  type DecompositionLoss,
  type DrGrpoObjectiveInput,
  type GroupAdvantageOptions,
  type GrpoObjectiveInput,
  type GrpoObjectiveResult,
  type GspoObjectiveInput,
  type GspoObjectiveResult,
  type KlK3Input,
  type KlK3Result,
  type OutcomeProjection,
  type StepAdvantageOptions,
  type TokenMask,
  type TokenMatrix,
  type Trainable,
  type ValueLoss,
} from "./policy/index.js";

// random: seeded, reproducible streams
export {
  RandomInputError,
  createRng,
  restoreRng,
  sampleWithReplacement,
  shuffle,
  type Rng,
  type RngState,
} from "./random/index.js";

// model: the provider-neutral LanguageModel interface and JSON out of its replies (providers live in @rubric/providers)
export {
  ChatMessageSchema,
  LANGUAGE_MODEL_SPECIFICATION,
  LanguageModelContractError,
  TokenUsageSchema,
  checkLanguageModel,
  type ChatMessage,
  type GenerateRequest,
  type GenerateResponse,
  type GeneratedChoice,
  type JsonSchemaFormat,
  type LanguageModel,
  type TokenLogprob,
  type TokenUsage,
} from "./model/language-model.js";
export { choiceJson, extractJson } from "./model/json-reply.js";

// errors: the root every package's errors share, with a stable code
export { RubricError, isRubricError } from "./errors/rubric-error.js";

// suggestion: the one "did you mean …?" rule
export { editDistance, nearestName, type NearestNameOptions } from "./suggestion/nearest-name.js";

// options: caller options without their undefined fields, to merge over defaults
export { definedFields } from "./options/defined-fields.js";
