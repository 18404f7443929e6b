/**
 * @rubric/repro — the papers' reproductions, kept out of the libraries they exercise.
 * This file is the package's only public door.
 *
 * A reproduction is an experiment, not a library: it calls `@rubric/gspo`, `@rubric/autointeract`,
 * `@rubric/verifiers` and `@rubric/core` through their public doors, like any user, and owns only
 * what is the paper's — its configuration, its tables and plots, its numbers to compare against.
 * One folder per paper: `src/arcane/` (`rubric repro arcane`) and
 * `src/arco/` (`rubric repro arco`) beside it, on `@rubric/rlxar` and `@rubric/arco-heads`.
 */

// arcane: ARCANE in the rubric gym: SFT then GSPO of the in-process manager, best-of-N evaluation
export { arcaneConfig, type ArcaneConfig, type ArcaneProgress, type ArcaneRunOptions } from "./arcane/config.js";
export { trainArcaneManagers, type TrainedManagers } from "./arcane/training.js";
export { evalRubrics, type EvalRubric } from "./arcane/evaluation.js";
export { runArcane, writeArcaneOutputs } from "./arcane/experiment.js";
export {
  chooseFixedRubric,
  fixedRubric,
  guidedReturns,
  uninformativePrompt,
  type FixedCriterion,
  type FixedRubricChoice,
} from "./arcane/controls.js";
export { arcaneTrainingSvg, scalingSpec, scalingSvg, trainingCurvesSpec, trainingCurvesSvg } from "./arcane/plot.js";
export {
  readArcaneTrainingCurves,
  type ArcaneSeedCurves,
  type ArcaneTrainingCurves,
} from "./arcane/training-curves.js";
export {
  ARCANE_CONTROLS,
  ARCANE_METHODS,
  ARCANE_ROWS,
  ArcaneTableSchema,
  arcaneMarkdown,
  METHOD_LABELS,
  methodLabels,
  PAPER,
  type ArcaneControl,
  type ArcaneMethod,
  type ArcaneRow,
  type ArcaneTable,
  type MeanStd,
} from "./arcane/table.js";

// text-manager: ARCANE's manager as an LLM trained end to end in the sidecar (`rubric repro arcane --manager sidecar`)
export {
  QuestionsTurnSchema,
  RubricTurnSchema,
  episodeTokens,
  questionsPrompt,
  readRubricTurn,
  rubricPrompt,
  taskDigest,
  teacherTurns,
  type ManagerEpisode,
  type ReadRubric,
} from "./arcane/text-manager/turns.js";
export {
  bpeManagerTokenizer,
  managerCorpus,
  sidecarManagerTokenizer,
  trainManagerTokenizer,
  type ManagerTokenizer,
} from "./arcane/text-manager/tokenizer.js";
export { SidecarManager } from "./arcane/text-manager/manager.js";
export {
  sidecarManagerConfig,
  type SidecarManagerConfig,
  type SidecarManagerProgress,
  type SidecarManagerRunOptions,
} from "./arcane/text-manager/config.js";
export { UNPARSEABLE_UTILITY, readEpisode } from "./arcane/text-manager/reward.js";
export {
  SidecarManagerTableSchema,
  sidecarManagerMarkdown,
  type SidecarManagerCounts,
  type SidecarManagerTable,
} from "./arcane/text-manager/table.js";
export { runSidecarManager, sidecarManagerData, writeSidecarManagerRun } from "./arcane/text-manager/experiment.js";

// llm-roles: ARCANE with LLM roles on real GDPval eval tasks (`rubric repro arcane --provider`)
export { runArcaneWithModel, type ArcaneLlmOptions } from "./arcane/llm-roles/run.js";
export {
  ARCANE_LLM_METHODS,
  ArcaneLlmTableSchema,
  arcaneLlmMarkdown,
  pairedMeans,
  type ArcaneLlmMethod,
  type ArcaneLlmTable,
} from "./arcane/llm-roles/table.js";

// arco: ARCO on HotpotQA (`rubric repro arco`): the warm-up, every baseline and ablation, the diagnostics
export {
  arcoConfig,
  FIXED_CRITERIA,
  splitTrainingQuestions,
  TUNE_QUESTIONS,
  type ArcoConfig,
  type SmallMuSettings,
  transformersMuSettings,
} from "./arco/config.js";
export { arcoQuestions, runArco, type ArcoProgress, type ArcoRunOptions } from "./arco/experiment.js";
export {
  arcoPolicyMaker,
  arcoPolicySetting,
  DEFAULT_TINY_POLICY,
  policyRates,
  TINY_POLICY_MODEL,
  type ArcoPolicySetting,
  type PolicyRates,
  type ServedPolicyContext,
  type SidecarPolicyFlags,
  type SidecarPolicySetting,
  type TinyPolicyShape,
} from "./arco/policy.js";
export {
  ARCO_MU_LORA,
  arcoMuModel,
  TINY_MU_MODEL,
  type MuModelSetting,
} from "./arco/mu-model.js";
export { finalAnswer, hotpotMeasure } from "./arco/method.js";
export { writeArcoOutputs } from "./arco/summary.js";
export { ANSWER_KIND_LABELS, ANSWER_KINDS, type AnswerKind, answerKind } from "./arco/answer-kinds.js";
export {
  arcoPlots,
  bucketScorePoints,
  bucketScoresSpec,
  bucketScoresSvg,
  learningCurvePoints,
  learningCurvesSpec,
  learningCurvesSvg,
} from "./arco/plot.js";
export { PLOT_CONFIG, renderSvg, type VegaLiteSpec } from "./plots/vega.js";
export {
  ARCO_METHOD_LABELS,
  ARCO_METHODS,
  ArcoTableSchema,
  arcoMarkdown,
  PAPER_ARCO,
  type ArcoMethod,
  type ArcoTable,
} from "./arco/table.js";

// arco-gym: ARCO in the gym, a simulation (`rubric repro arco-gym`): the value of dense credit per
// chain length, outcome-only RL against the true-advantage control, with paired tests
export {
  arcoGymConfig,
  GYM_WORD_VECTORS,
  type ArcoGymConfig,
  type ArcoGymConfigOptions,
  type GymMuSettings,
} from "./arco-gym/config.js";
export {
  GYM_MU_PROMPT,
  gymMuPrompt,
  openGymMuCritic,
  warmGymMu,
  type GymMuCritic,
  type WarmGymMu,
} from "./arco-gym/mu.js";
export { runArcoGym, type ArcoGymProgress, type ArcoGymRunOptions } from "./arco-gym/experiment.js";
export {
  GYM_CONFIG_FILE,
  GYM_RUNS_DIR,
  GYM_SIDECAR_FILE,
  type GymMethodRun,
  GymMethodRunSchema,
} from "./arco-gym/run-record.js";
export { arcoGymPlots, gymCreditSpec, gymCurvesSpec, gymSuccessSpec, writeArcoGymOutputs } from "./arco-gym/plot.js";
export {
  ARCO_GYM_CRITICS,
  ARCO_GYM_DEFAULT_METHODS,
  ARCO_GYM_METHOD_LABELS,
  ARCO_GYM_METHODS,
  ARCO_GYM_CO_EVOLVING_MU_METHODS,
  ARCO_GYM_MU_METHODS,
  ARCO_GYM_VALUE_MU_METHODS,
  muObjectiveOf,
  ArcoGymTableSchema,
  arcoGymMarkdown,
  type ArcoGymMethod,
  type ArcoGymTable,
} from "./arco-gym/table.js";
export { ReproError, ReproInputError } from "./errors.js";
