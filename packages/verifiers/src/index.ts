/**
 * @rubric/verifiers — rule, sandboxed-code and LLM-judge verifiers, and the engine that runs
 * them over outputs. Judges take any `LanguageModel`; the providers that make one live in
 * @rubric/providers. This file is the package's only public door.
 */

// verifier: the interface, cache keys and caches
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
export {
  canonicalJson,
  criterionDigest,
  verdictCacheKey,
  verdictCacheKeyFor,
  type VerdictKeyParts,
} from "./verifier/cache-key.js";
export { VerdictCacheError, fileCache, memoryCache, type VerdictCache } from "./verifier/cache.js";

// registry: kinds → verifiers, with every built-in kind registered
export {
  DuplicateVerifierError,
  VerifierRegistry,
  createVerifierRegistry,
  ruleVerifiers,
  rulesRegistry,
  type AnyVerifier,
  type VerifierRegistryOptions,
} from "./registry/registry.js";

// rules: deterministic verifiers, one kind per file
export {
  RegexSpecSchema,
  createRegexVerifier,
  regexVerifier,
  type RegexSpec,
  type RegexVerifierOptions,
} from "./rules/regex.js";
export {
  DEFAULT_JS_REGEX_LIMIT_MS,
  RegexTimeLimitError,
  compileRulePattern,
  type CompileRulePatternOptions,
  type RegexEngine,
  type RulePattern,
} from "./rules/regex-engine.js";
export { RegexUnsupportedError } from "./rules/re2-syntax.js";
export { IncludesSpecSchema, includesVerifier, type IncludesSpec } from "./rules/includes.js";
export { ExcludesSpecSchema, excludesVerifier, type ExcludesSpec } from "./rules/excludes.js";
export { LengthSpecSchema, lengthVerifier, measureLength, type LengthSpec } from "./rules/length.js";
export { MarkdownSpecSchema, markdownCounts, markdownVerifier, type MarkdownSpec } from "./rules/markdown.js";
export { CitationsSpecSchema, citationsVerifier, findCitations, type CitationsSpec } from "./rules/citations.js";
export { NumericSpecSchema, extractNumbers, numericVerifier, type NumericSpec } from "./rules/numeric.js";
export { ReadabilitySpecSchema, readability, readabilityVerifier, type ReadabilitySpec } from "./rules/readability.js";
export { JsonSchemaSpecSchema, jsonSchemaVerifier, type JsonSchemaSpec } from "./rules/json-schema.js";

// checks: every criterion's verifier kind and spec checked against a registry before any work
export {
  checkVerifierSpecs,
  type VerifierSpecCheck,
  type VerifierSpecCheckOptions,
} from "./registry/check.js";

// engine: verify and score outputs
export { PermitPool } from "./engine/permits.js";
export {
  prepareCriteria,
  scoreOutputs,
  scoreOutputsSync,
  scoredOutputToJson,
  type OutputToScore,
  type ScoreOutputsOptions,
  type ScoreOutputsSyncOptions,
  type ScoredOutput,
  type ScoredOutputJson,
} from "./engine/engine.js";
export { VerificationSetupError } from "./engine/errors.js";
export { VerificationError, VerifierOptionsError } from "./errors.js";
export {
  DEFAULT_MAX_OUTPUT_FILE_BYTES,
  OutputFileNotFoundError,
  OutputFileOutsideRootError,
  OutputFileTooLargeError,
  OutputFileUnreadableError,
  confineOutputFiles,
} from "./engine/output-files.js";

// server: rubric rewards over HTTP for Python trainers
export {
  ScoreRequestSchema,
  rubricScorer,
  serveRewards,
  type RewardScorer,
  type RewardServer,
  type RewardServerOptions,
} from "./server/reward-server.js";

// deprecated: reading JSON out of a model's reply moved to @rubric/core (the model providers, to
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
export { openingFence } from "./judge/prompts.js";

// sandbox: code verifiers
export {
  PythonVerifierSpecSchema,
  pythonVerifier,
  type PythonVerifierOptions,
  type PythonVerifierSpec,
} from "./sandbox/python/verifier.js";
export { RULE_LIMIT_MAXIMA, type RuleLimitMaxima } from "./sandbox/limits.js";
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
// the sandboxes' failures: one set of kinds and codes for Python and JavaScript
export { SANDBOX_ERROR_CODES, type SandboxErrorCode, type SandboxErrorKind } from "./sandbox/failure.js";
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
