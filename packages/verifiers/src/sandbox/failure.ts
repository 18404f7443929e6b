/**
 * Why a sandboxed rule produced no score, in one set of words for both sandboxes (Python under
 * bubblewrap, JavaScript in QuickJS): a rule that runs out of time is `sandbox.timeout` whichever
 * language it is written in, so verdict readers and `catch` blocks branch on one set. Each sandbox
 * uses the kinds that can happen in it: only JavaScript parses a rule before running it (`syntax`;
 * a Python SyntaxError is the rule raising), only Python reads a request's files (`invalid-request`).
 *
 * The key is the failure's `kind` (what a failed result and a verdict's details carry); the value
 * is its `code` (what `isRubricError` and the CLI's exit table read).
 */
export const SANDBOX_ERROR_CODES = {
  timeout: "sandbox.timeout",
  memory: "sandbox.memory",
  exception: "sandbox.exception",
  syntax: "sandbox.syntax",
  "invalid-result": "sandbox.invalid-result",
  "invalid-request": "sandbox.invalid-request",
  crashed: "sandbox.crashed",
  "sandbox-unavailable": "sandbox.unavailable",
} as const;

/** A sandbox failure's `kind`, the same for the Python and the JavaScript sandbox. */
export type SandboxErrorKind = keyof typeof SANDBOX_ERROR_CODES;

/** A sandbox failure's stable `code`, `sandbox.<kind>`. */
export type SandboxErrorCode = (typeof SANDBOX_ERROR_CODES)[SandboxErrorKind];
