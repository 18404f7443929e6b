/**
 * @rubric/arco-heads — what surrounds ARCO's rubric model μ: the step type and prompt μ reads,
 * the criteria it writes, the teacher annotation that warms it up, the traces it leaves, and the
 * contract of a model directory (see the README).
 */

// errors: the base of every error arco-heads throws, with a stable `arco.*` code
export {
  AnnotationReplyError,
  ArcoError,
  ArcoFileError,
  ArcoInputError,
  CriteriaUnparsedError,
  ModelClosedError,
  ModelCorruptError,
  ModelFormatError,
  ModelRunError,
  OnnxRuntimeMissingError,
} from "./errors.js";

// step: what μ reads (the step, its prompt, step files, observations) and the criteria it writes
export {
  StepSchema,
  TrajectorySchema,
  TurnSchema,
  stepsOf,
  type Step,
  type Trajectory,
  type Turn,
} from "./step/step.js";
export {
  PROMPT_LAYOUTS,
  PROMPT_STYLES,
  StepPromptSettingsSchema,
  stepPrompt,
  withPromptSettings,
  type PromptLayout,
  type PromptStyle,
  type StepPromptOptions,
  type StepPromptSettings,
} from "./step/prompt.js";
export { StepRecordSchema, readSteps, type StepRecord } from "./step/step-file.js";
export {
  AgentStepSchema,
  TrajectoryRecordSchema,
  annotationOf,
  inferredBudget,
  readTrajectories,
  trajectoryOf,
  type AgentStep,
  type TrajectoryRecord,
} from "./step/trajectory-file.js";
export { DEFAULT_MAX_OBSERVATION_CHARS, renderObservation } from "./step/observation.js";
export { CriteriaTargetSchema, criteriaTarget, parseCriteria, type ParsedCriteria } from "./step/criteria.js";

// annotation: the teacher's annotation that warms μ up, and the SFT examples made from it
export {
  DEFAULT_DECOMPOSITION_TOLERANCE,
  decomposesOutcome,
  decompositionGap,
  projectTeacherScores,
} from "./annotation/projection.js";
export {
  annotateTrajectory,
  annotationPrompt,
  type AnnotatedStep,
  type AnnotatorOptions,
  type TrajectoryAnnotation,
} from "./annotation/annotator.js";
export {
  MuSftExampleSchema,
  muSftExamples,
  muSftJsonLines,
  readMuSftExamples,
  type MuSftExample,
  type MuSftOptions,
  type MuSftSelection,
} from "./annotation/sft.js";

// trace: the traces μ leaves, one line per step
export { StepTraceSchema, readTraces, stepTrace, traceJsonLines, type StepTrace } from "./trace/trace.js";

// manifest: the contract of a model directory (format 1), verified file by file
export {
  MANIFEST_FILE,
  MANIFEST_FORMAT_VERSION,
  MU_POOLINGS,
  ModelManifestSchema,
  type MuPooling,
  readManifest,
  readModel,
  type ModelManifest,
  type OpenedModel,
  type VerifiedModel,
} from "./model/manifest.js";

// tokenizer: the byte-level BPE both backends share
export {
  BOS_ID,
  ByteBpeFileSchema,
  EOS_ID,
  PAD_ID,
  SPECIAL_TOKENS,
  byteBpeTokenizer,
  trainByteBpe,
  type ByteBpeFile,
  type ByteBpeTokenizer,
} from "./tokenizer/byte-bpe.js";
// tokenizer: a pretrained llama's SentencePiece vocabulary (a μ on a GGUF backbone), and either kind
export {
  SentencePieceFileSchema,
  sentencePieceFileOfGguf,
  sentencePieceTokenizer,
  type SentencePieceFile,
  type SentencePieceTokenizer,
} from "./tokenizer/sentencepiece.js";
export {
  TOKENIZER_KINDS,
  isTokenizerKind,
  muTokenizer,
  type MuTokenizer,
  type MuTokenizerFile,
  type TokenizerKind,
  type TokenizerOf,
} from "./tokenizer/tokenizer.js";

// model: ids in and out, decoding, the MuEngine seam and RubricModel on onnxruntime-node
export { criteriaIds, fitPrompt, promptText, type PromptFit, type StepIds } from "./model/sequence.js";
export { DEFAULT_TEMPERATURE, pickToken, type Decoding, type DecodingPlan } from "./model/decoding.js";
export {
  generateCriteria,
  rateSteps,
  scoreSteps,
  type GenerateOptions,
  type GeneratedCriteria,
  type MuEngine,
  type RatedStep,
  type StepScores,
} from "./model/engine.js";
export type { OnnxOptions } from "./model/onnx-engine.js";
export {
  RubricModel,
  findExport,
  type ModelExportLocation,
  type ModelEvent,
  type ReloadResult,
  type RubricModelOptions,
  type TrajectoryScores,
} from "./model/rubric-model.js";
