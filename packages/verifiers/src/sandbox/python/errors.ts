import { Data } from "effect";
import { SANDBOX_ERROR_CODES } from "../failure.js";

/**
 * Why a Python rule produced no score. Each failure is its own class so Effect users can
 * `catchTag` one of them; `kind` is the same fact as a plain string for the async API, and `code`
 * its stable toolkit code, shared with the other sandbox (`SANDBOX_ERROR_CODES`).
 */
interface PythonRuleFailure {
  readonly message: string;
  /** The rule's Python traceback, when the rule itself raised. */
  readonly traceback?: string;
  /** The tail of what the sandboxed process wrote to stderr (the rule's prints, Python warnings). */
  readonly stderr?: string;
}

/** bubblewrap (or the interpreter, or harness.py) is missing or cannot create a sandbox. Never run unsandboxed instead. */
export class PythonSandboxUnavailableError extends Data.TaggedError(
  "PythonSandboxUnavailableError",
)<PythonRuleFailure> {
  readonly kind = "sandbox-unavailable" as const;
  readonly code = SANDBOX_ERROR_CODES["sandbox-unavailable"];
}

/** Wall-clock or CPU time ran out; the whole sandbox was killed. */
export class PythonRuleTimeoutError extends Data.TaggedError("PythonRuleTimeoutError")<PythonRuleFailure> {
  readonly kind = "timeout" as const;
  readonly code = SANDBOX_ERROR_CODES.timeout;
}

/** The address-space limit was hit (Python raised MemoryError). */
export class PythonRuleMemoryError extends Data.TaggedError("PythonRuleMemoryError")<PythonRuleFailure> {
  readonly kind = "memory" as const;
  readonly code = SANDBOX_ERROR_CODES.memory;
}

/** The rule raised (including SyntaxError, a missing `evaluate`, or a missing reader library). */
export class PythonRuleExceptionError extends Data.TaggedError("PythonRuleExceptionError")<PythonRuleFailure> {
  readonly kind = "exception" as const;
  readonly code = SANDBOX_ERROR_CODES.exception;
}

/** `evaluate` returned something that is not a finite number or (number, feedback), or the harness's answer was malformed. */
export class InvalidPythonRuleResultError extends Data.TaggedError("InvalidPythonRuleResultError")<PythonRuleFailure> {
  readonly kind = "invalid-result" as const;
  readonly code = SANDBOX_ERROR_CODES["invalid-result"];
}

/** The sandboxed process died without an answer (a signal, `os._exit`, a crash in a C extension). */
export class PythonSandboxCrashedError extends Data.TaggedError("PythonSandboxCrashedError")<PythonRuleFailure> {
  readonly kind = "crashed" as const;
  readonly code = SANDBOX_ERROR_CODES.crashed;
}

/** The request cannot be run as given (an output file that does not exist, a max score ≤ 0). */
export class InvalidPythonRuleRequestError extends Data.TaggedError(
  "InvalidPythonRuleRequestError",
)<PythonRuleFailure> {
  readonly kind = "invalid-request" as const;
  readonly code = SANDBOX_ERROR_CODES["invalid-request"];
}

export type PythonRuleError =
  | PythonSandboxUnavailableError
  | PythonRuleTimeoutError
  | PythonRuleMemoryError
  | PythonRuleExceptionError
  | InvalidPythonRuleResultError
  | PythonSandboxCrashedError
  | InvalidPythonRuleRequestError;

export type PythonRuleErrorKind = PythonRuleError["kind"];
