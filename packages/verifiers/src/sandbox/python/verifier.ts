import { z } from "zod";
import { errorDraft, okDraft, type Verifier } from "../../verifier/verifier.js";
import {
  RULE_LIMIT_MAXIMA,
  assertDefaultWithinMaximum,
  limitProblem,
  withLimitMaxima,
  type LimitCheck,
  type RuleLimitMaxima,
} from "../limits.js";
import { PYTHON_HARNESS_VERSION } from "./harness.js";
import { PYTHON_SANDBOX_DEFAULTS, runPythonRule, type PythonSandboxOptions } from "./run.js";

/**
 * A `python` criterion: code defining `evaluate(workflow, context)` that returns points in
 * [0, maxScore] or (points, feedback), as in the ARCANE / GDPval staged rubrics.
 */
export const PythonVerifierSpecSchema = z.strictObject({
  kind: z.literal("python"),
  code: z.string().min(1),
  /** The rule's weight; `evaluate` scores on this scale. */
  maxScore: z.number().positive().default(1),
  /** Overrides the verifier's wall-clock limit for this rule. */
  timeoutMs: z.number().int().positive().optional(),
  /** Overrides the verifier's memory limit for this rule, in MiB. */
  memoryMb: z.number().int().min(32).optional(),
});
export type PythonVerifierSpec = z.output<typeof PythonVerifierSpecSchema>;

/** The sandbox's settings, and the most a rule's spec may ask for. */
export interface PythonVerifierOptions extends PythonSandboxOptions, RuleLimitMaxima {}

/**
 * The `python` verifier: runs each rule in a bubblewrap sandbox ({@link runPythonRule}) over
 * the output's files, or its text when it has none. A rule that raises, times out, runs out of
 * memory or returns a non-number yields an error verdict, never a 0. A spec's `timeoutMs` /
 * `memoryMb` above `maxTimeoutMs` / `maxMemoryMb` is refused (default: 60 s and 2048 MiB, or
 * the verifier's own `timeoutMs` / `memoryMb` when larger).
 *
 * @example
 * const registry = new VerifierRegistry([pythonVerifier({ timeoutMs: 20_000, maxMemoryMb: 1024 })]);
 */
export function pythonVerifier(options: PythonVerifierOptions = {}): Verifier<PythonVerifierSpec> {
  const { maxTimeoutMs, maxMemoryMb, ...sandbox } = options;
  assertDefaultWithinMaximum("timeoutMs", options.timeoutMs, "maxTimeoutMs", maxTimeoutMs ?? Number.POSITIVE_INFINITY);
  assertDefaultWithinMaximum("memoryMb", options.memoryMb, "maxMemoryMb", maxMemoryMb ?? Number.POSITIVE_INFINITY);
  const maxima = {
    timeoutMs: maxTimeoutMs ?? Math.max(RULE_LIMIT_MAXIMA.timeoutMs, options.timeoutMs ?? 0),
    memoryMb: maxMemoryMb ?? Math.max(RULE_LIMIT_MAXIMA.pythonMemoryMb, options.memoryMb ?? 0),
  };
  const checksOf = (spec: PythonVerifierSpec): LimitCheck[] => [
    {
      field: "timeoutMs",
      asked: spec.timeoutMs,
      maximum: maxima.timeoutMs,
      unit: "ms",
      setBy: "maxTimeoutMs, --max-rule-timeout-ms",
    },
    {
      field: "memoryMb",
      asked: spec.memoryMb,
      maximum: maxima.memoryMb,
      unit: "MiB",
      setBy: "maxMemoryMb, --max-rule-memory-mb",
    },
  ];
  return {
    kind: "python",
    specSchema: withLimitMaxima(PythonVerifierSpecSchema, checksOf),
    cacheIdentity() {
      // The harness and interpreter decide what a rule sees; the limits decide whether it finishes.
      return {
        harness: PYTHON_HARNESS_VERSION,
        python: options.python ?? PYTHON_SANDBOX_DEFAULTS.python,
        timeoutMs: options.timeoutMs ?? PYTHON_SANDBOX_DEFAULTS.timeoutMs,
        memoryMb: options.memoryMb ?? PYTHON_SANDBOX_DEFAULTS.memoryMb,
        maxThreads: options.maxThreads ?? PYTHON_SANDBOX_DEFAULTS.maxThreads,
      };
    },
    async verify(_criterion, spec, input, verifyOptions) {
      // The engine refuses these up front; a direct caller gets the same answer as a verdict.
      const tooMuch = limitProblem(checksOf(spec));
      if (tooMuch) return errorDraft(`${tooMuch.field} ${tooMuch.message}`, { kind: "invalid-request" });
      const result = await runPythonRule(
        {
          code: spec.code,
          maxScore: spec.maxScore,
          output: input.output,
          input: input.input,
          files: input.files,
        },
        {
          ...sandbox,
          // A spec that names no limit runs under the verifier's own, not the package default.
          timeoutMs: spec.timeoutMs ?? sandbox.timeoutMs,
          memoryMb: spec.memoryMb ?? sandbox.memoryMb,
          signal: verifyOptions.signal,
        },
      );
      if (result.status === "ok")
        return okDraft(result.score, result.feedback, { raw: result.raw, maxScore: spec.maxScore });
      return errorDraft(result.traceback === undefined ? result.message : `${result.message}\n${result.traceback}`, {
        kind: result.kind,
        traceback: result.traceback ?? null,
        stderr: result.stderr ?? null,
      });
    },
  };
}
