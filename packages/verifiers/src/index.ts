/**
 * @rubric/verifiers — rule, sandboxed-code and LLM-judge verifiers, and the engine that runs
 * them over outputs. Judges take any `LanguageModel`; the providers that make one live in
 * @rubric/providers. This file is the package's only public door.
 */

// verifier: the interface, the registry, cache keys and caches
export {
  errorDraft,
  okDraft,
  type CriterionToVerify,
  type OutputFile,
  type VerdictDraft,
  type VerificationInput,
  type Verifier,
  type VerifyOptions,
} from "./verifier/verifier.js";
export { DuplicateVerifierError, VerifierRegistry, type AnyVerifier } from "./verifier/registry.js";
export {
  canonicalJson,
  criterionDigest,
  verdictCacheKey,
  verdictCacheKeyFor,
  type VerdictKeyParts,
} from "./verifier/cache-key.js";
export { fileCache, memoryCache, type VerdictCache } from "./verifier/cache.js";

// rules: deterministic verifiers
export {
  CitationsSpecSchema,
  ExcludesSpecSchema,
  IncludesSpecSchema,
  LengthSpecSchema,
  MarkdownSpecSchema,
  NumericSpecSchema,
  ReadabilitySpecSchema,
  RegexSpecSchema,
  citationsVerifier,
  excludesVerifier,
  extractNumbers,
  findCitations,
  includesVerifier,
  lengthVerifier,
  markdownCounts,
  markdownVerifier,
  measureLength,
  numericVerifier,
  readability,
  readabilityVerifier,
  regexVerifier,
  ruleVerifiers,
  type CitationsSpec,
  type ExcludesSpec,
  type IncludesSpec,
  type LengthSpec,
  type MarkdownSpec,
  type NumericSpec,
  type ReadabilitySpec,
  type RegexSpec,
} from "./rules/rules.js";
export { JsonSchemaSpecSchema, jsonSchemaVerifier, type JsonSchemaSpec } from "./rules/json-schema.js";
export { rulesRegistry } from "./rules/registry.js";

// engine: verify and score outputs
export {
  prepareCriteria,
  scoreOutputs,
  scoredOutputToJson,
  type OutputToScore,
  type ScoreOutputsOptions,
  type ScoredOutput,
  type ScoredOutputJson,
} from "./engine/engine.js";
export { VerificationSetupError } from "./engine/errors.js";

// server: rubric rewards over HTTP for Python trainers
export {
  ScoreRequestSchema,
  rubricScorer,
  serveRewards,
  type RewardScorer,
  type RewardServer,
  type RewardServerOptions,
} from "./server/reward-server.js";
export { createVerifierRegistry, type VerifierRegistryOptions } from "./engine/registry.js";

// Reading JSON out of a model's reply moved to @rubric/core (the model providers, to
// @rubric/providers); re-exported here for one release.
export { choiceJson, extractJson } from "@rubric/core";

// judge: model-based verifiers
export {
  LlmJudgeSpecSchema,
  llmJudge,
  logprobWeightedScore,
  type LlmJudgeOptions,
  type LlmJudgeSpec,
} from "./judge/llm-judge.js";
export { JudgeReplyError, judgePairwise, type PairwiseInput, type PairwiseVerdict } from "./judge/pairwise.js";
export { DEFAULT_SCALE, ScaleSchema, scaleValues, toFraction, type Scale } from "./judge/scale.js";

// sandbox: code verifiers
export { PythonVerifierSpecSchema, pythonVerifier, type PythonVerifierSpec } from "./sandbox/python/verifier.js";
export {
  PYTHON_SANDBOX_DEFAULTS,
  runPythonRule,
  runPythonRuleEffect,
  type PythonRuleFailed,
  type PythonRuleOk,
  type PythonRuleRequest,
  type PythonRuleResult,
  type PythonRuleRunOptions,
  type PythonSandboxOptions,
} from "./sandbox/python/run.js";
export { PYTHON_HARNESS_VERSION, pythonHarnessPath } from "./sandbox/python/harness.js";
export {
  InvalidPythonRuleRequestError,
  InvalidPythonRuleResultError,
  PythonRuleExceptionError,
  PythonRuleMemoryError,
  PythonRuleTimeoutError,
  PythonSandboxCrashedError,
  PythonSandboxUnavailableError,
  type PythonRuleError,
  type PythonRuleErrorKind,
} from "./sandbox/python/errors.js";
export { jsVerifier, type JsVerifierOptions } from "./sandbox/js/js-verifier.js";
export {
  JS_RULE_DEFAULTS,
  JsRuleLimitsSchema,
  JsVerifierSpecSchema,
  type JsRuleLimits,
  type JsVerifierSpec,
} from "./sandbox/js/spec.js";
export {
  JsRuleReturnSchema,
  runJsRule,
  runJsRuleEffect,
  type JsRule,
  type JsRuleOptions,
  type JsRuleResult,
  type JsRuleSuccess,
} from "./sandbox/js/run-js-rule.js";
export { JsSandbox, sharedJsSandbox, type JsSandboxOptions } from "./sandbox/js/sandbox.js";
export {
  InvalidJsRuleLimitsError,
  InvalidJsRuleResultError,
  JsRuleExceptionError,
  JsRuleMemoryError,
  JsRuleSyntaxError,
  JsRuleTimeoutError,
  JsSandboxCrashedError,
  JsSandboxUnavailableError,
  type JsRuleError,
  type JsRuleErrorKind,
} from "./sandbox/js/errors.js";
