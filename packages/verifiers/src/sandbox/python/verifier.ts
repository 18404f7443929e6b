import { z } from "zod";
import { errorDraft, okDraft, type Verifier } from "../../verifier/verifier.js";
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

/**
 * The `python` verifier: runs each rule in a bubblewrap sandbox ({@link runPythonRule}) over
 * the output's files, or its text when it has none. A rule that raises, times out, runs out of
 * memory or returns a non-number yields an error verdict, never a 0.
 *
 * @example
 * const registry = new VerifierRegistry([pythonVerifier({ timeoutMs: 20_000 })]);
 */
export function pythonVerifier(options: PythonSandboxOptions = {}): Verifier<PythonVerifierSpec> {
  return {
    kind: "python",
    specSchema: PythonVerifierSpecSchema,
    cacheIdentity() {
      // The harness and interpreter decide what a rule sees; the limits decide whether it finishes.
      return {
        harness: PYTHON_HARNESS_VERSION,
        python: options.python ?? PYTHON_SANDBOX_DEFAULTS.python,
        timeoutMs: options.timeoutMs ?? PYTHON_SANDBOX_DEFAULTS.timeoutMs,
        memoryMb: options.memoryMb ?? PYTHON_SANDBOX_DEFAULTS.memoryMb,
      };
    },
    async verify(_criterion, spec, input, verifyOptions) {
      const result = await runPythonRule(
        {
          code: spec.code,
          maxScore: spec.maxScore,
          output: input.output,
          input: input.input,
          files: input.files,
        },
        {
          ...options,
          timeoutMs: spec.timeoutMs,
          memoryMb: spec.memoryMb,
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
