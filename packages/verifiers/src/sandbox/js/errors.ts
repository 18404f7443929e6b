import { Data } from "effect";
import { VerificationError } from "../../errors.js";
import { SANDBOX_ERROR_CODES } from "../failure.js";

/**
 * Why a JavaScript rule produced no score. Each failure is its own class so Effect users can
 * `catchTag` one of them; `kind` is the same fact as a plain string for the async API, and `code`
 * its stable toolkit code, shared with the other sandbox (`SANDBOX_ERROR_CODES`).
 */
interface JsRuleFailure {
  readonly message: string;
  /**
   * QuickJS's stack trace, when the rule itself threw. Not `stack`: that is the host-side trace
   * every Error has, which says nothing about the rule (and would leak host paths into verdicts).
   */
  readonly ruleStack?: string;
}

/** The wall-time limit ran out (the rule was interrupted, or its worker was replaced). */
export class JsRuleTimeoutError extends Data.TaggedError("JsRuleTimeoutError")<JsRuleFailure> {
  readonly kind = "timeout" as const;
  readonly code = SANDBOX_ERROR_CODES.timeout;
}

/** The heap limit was hit (QuickJS threw `InternalError: out of memory`), or the worker thread ran out of heap. */
export class JsRuleMemoryError extends Data.TaggedError("JsRuleMemoryError")<JsRuleFailure> {
  readonly kind = "memory" as const;
  readonly code = SANDBOX_ERROR_CODES.memory;
}

/** The rule threw, including `InternalError: stack overflow` from deep recursion. */
export class JsRuleExceptionError extends Data.TaggedError("JsRuleExceptionError")<JsRuleFailure> {
  readonly kind = "exception" as const;
  readonly code = SANDBOX_ERROR_CODES.exception;
}

/** The code does not parse as a script. */
export class JsRuleSyntaxError extends Data.TaggedError("JsRuleSyntaxError")<JsRuleFailure> {
  readonly kind = "syntax" as const;
  readonly code = SANDBOX_ERROR_CODES.syntax;
}

/** The rule returned something that is not a finite number, a boolean or `{ score, rationale? }`. */
export class InvalidJsRuleResultError extends Data.TaggedError("InvalidJsRuleResultError")<JsRuleFailure> {
  readonly kind = "invalid-result" as const;
  readonly code = SANDBOX_ERROR_CODES["invalid-result"];
}

/** The engine itself failed while running the rule (a WebAssembly abort); its worker was replaced. */
export class JsSandboxCrashedError extends Data.TaggedError("JsSandboxCrashedError")<JsRuleFailure> {
  readonly kind = "crashed" as const;
  readonly code = SANDBOX_ERROR_CODES.crashed;
}

/** No sandbox worker could be started (or the sandbox was closed). Never run unsandboxed instead. */
export class JsSandboxUnavailableError extends Data.TaggedError("JsSandboxUnavailableError")<JsRuleFailure> {
  readonly kind = "sandbox-unavailable" as const;
  readonly code = SANDBOX_ERROR_CODES["sandbox-unavailable"];
}

export type JsRuleError =
  | JsRuleTimeoutError
  | JsRuleMemoryError
  | JsRuleExceptionError
  | JsRuleSyntaxError
  | InvalidJsRuleResultError
  | JsSandboxCrashedError
  | JsSandboxUnavailableError;

export type JsRuleErrorKind = JsRuleError["kind"];

/** Thrown by `runJsRule` for limits outside what a spec may ask for: a caller's mistake, not the rule's. */
export class InvalidJsRuleLimitsError extends VerificationError {
  override readonly name = "InvalidJsRuleLimitsError";
  readonly code = "sandbox.invalid-limits";
}
