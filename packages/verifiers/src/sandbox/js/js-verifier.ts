import { errorDraft, okDraft, type Verifier } from "../../verifier/verifier.js";
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
  const limitsOf = (spec: JsVerifierSpec) => ({
    timeoutMs: spec.timeoutMs ?? options.timeoutMs ?? JS_RULE_DEFAULTS.timeoutMs,
    memoryBytes: spec.memoryBytes ?? options.memoryBytes ?? JS_RULE_DEFAULTS.memoryBytes,
  });
  return {
    kind: "js",
    specSchema: JsVerifierSpecSchema,
    // Limits the spec leaves open come from here, and they decide whether a slow rule scores at all.
    cacheIdentity: limitsOf,
    async verify(_criterion, spec, input, verifyOptions) {
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
