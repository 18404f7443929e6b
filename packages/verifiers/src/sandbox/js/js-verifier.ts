import { errorDraft, okDraft, type Verifier } from "../../verifier/verifier.js";
import {
  RULE_LIMIT_MAXIMA,
  assertDefaultWithinMaximum,
  limitProblem,
  withLimitMaxima,
  type LimitCheck,
} from "../limits.js";
import type { JsSandbox } from "./sandbox.js";
import { runJsRule } from "./run-js-rule.js";
import { JS_RULE_DEFAULTS, JsVerifierSpecSchema, type JsVerifierSpec } from "./spec.js";

export interface JsVerifierOptions {
  /** Used when a spec does not set `timeoutMs` (default 1000). */
  readonly timeoutMs?: number;
  /** Used when a spec does not set `memoryBytes` (default 32 MiB). */
  readonly memoryBytes?: number;
  /** Where rules run (default: the process-wide `sharedJsSandbox()`). */
  readonly sandbox?: JsSandbox;
  /** Longest `timeoutMs` a spec may ask for (default 60 000, the most QuickJS rules can have). */
  readonly maxTimeoutMs?: number;
  /** Largest `memoryBytes` a spec may ask for (default 1 GiB, the most QuickJS rules can have). */
  readonly maxMemoryBytes?: number;
}

/**
 * The `js` verifier: runs the spec's JavaScript in the QuickJS sandbox on the output, its input
 * and the names and types of its files (not their contents). A rule that fails — times out,
 * runs out of memory, throws, does not parse, returns no valid score — gives an error verdict
 * whose evidence is `{ kind, stack? }`.
 *
 * @example
 * const registry = new VerifierRegistry([...ruleVerifiers, jsVerifier()]);
 * // in a rubric: { "kind": "js", "code": "output.split('\\n').length <= 10" }
 */
export function jsVerifier(options: JsVerifierOptions = {}): Verifier<JsVerifierSpec> {
  const maxTimeoutMs = options.maxTimeoutMs ?? RULE_LIMIT_MAXIMA.timeoutMs;
  const maxMemoryBytes = options.maxMemoryBytes ?? RULE_LIMIT_MAXIMA.jsMemoryMb * 2 ** 20;
  assertDefaultWithinMaximum("timeoutMs", options.timeoutMs, "maxTimeoutMs", maxTimeoutMs);
  assertDefaultWithinMaximum("memoryBytes", options.memoryBytes, "maxMemoryBytes", maxMemoryBytes);
  const checksOf = (spec: JsVerifierSpec): LimitCheck[] => [
    {
      field: "timeoutMs",
      asked: spec.timeoutMs,
      maximum: maxTimeoutMs,
      unit: "ms",
      setBy: "maxTimeoutMs, --max-rule-timeout-ms",
    },
    {
      field: "memoryBytes",
      asked: spec.memoryBytes,
      maximum: maxMemoryBytes,
      unit: "bytes",
      setBy: "maxMemoryBytes, --max-rule-memory-mb",
    },
  ];
  const limitsOf = (spec: JsVerifierSpec) => ({
    timeoutMs: spec.timeoutMs ?? options.timeoutMs ?? JS_RULE_DEFAULTS.timeoutMs,
    memoryBytes: spec.memoryBytes ?? options.memoryBytes ?? JS_RULE_DEFAULTS.memoryBytes,
  });
  return {
    kind: "js",
    specSchema: withLimitMaxima(JsVerifierSpecSchema, checksOf),
    // Limits the spec leaves open come from here, and they decide whether a slow rule scores at all.
    cacheIdentity: limitsOf,
    async verify(_criterion, spec, input, verifyOptions) {
      // The engine refuses these up front; a direct caller gets the same answer as a verdict.
      const tooMuch = limitProblem(checksOf(spec));
      if (tooMuch) return errorDraft(`js rule ${tooMuch.field} ${tooMuch.message}`, { kind: "invalid-request" });
      const result = await runJsRule(
        {
          code: spec.code,
          output: input.output,
          input: input.input,
          files: input.files,
        },
        {
          ...limitsOf(spec),
          sandbox: options.sandbox,
          signal: verifyOptions.signal,
        },
      );
      if (result.status === "ok") return okDraft(result.score, result.rationale);
      return errorDraft(`js rule ${result.kind}: ${result.message}`, {
        kind: result.kind,
        stack: result.stack,
      });
    },
  };
}
