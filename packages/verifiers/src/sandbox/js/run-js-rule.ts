import { formatZodIssues } from "@rubric/core";
import { runEffect } from "@rubric/core/effect";
import { Effect } from "effect";
import { z } from "zod";
import {
  InvalidJsRuleLimitsError,
  InvalidJsRuleResultError,
  JsRuleExceptionError,
  JsRuleMemoryError,
  JsRuleSyntaxError,
  JsRuleTimeoutError,
  JsSandboxCrashedError,
  type JsRuleError,
  type JsRuleErrorKind,
} from "./errors.js";
import { sharedJsSandbox, type JsSandbox, type SandboxOutcome } from "./sandbox.js";
import { JS_RULE_DEFAULTS, JsRuleLimitsSchema, type JsRuleLimits } from "./spec.js";
import type { Leaf, Returned, RuleForm, Thrown, WorkerOutcome } from "./worker-protocol.js";

/** What a rule is run on. `files` are described by name and type only; the rule cannot read them. */
export interface JsRule {
  readonly code: string;
  /** The task's input; the rule sees `""` when there is none. */
  readonly input?: string;
  readonly output: string;
  readonly files?: readonly { readonly name: string; readonly mimeType?: string }[];
}

export interface JsRuleOptions extends Partial<JsRuleLimits> {
  /** Where to run (default: the process-wide `sharedJsSandbox()`). */
  readonly sandbox?: JsSandbox;
}

export interface JsRuleSuccess {
  /** The rule's score clamped to [0, 1]. */
  readonly score: number;
  readonly rationale?: string;
  /** Time the sandbox spent on the rule: VM setup, compiling, running, reading the result. */
  readonly durationMs: number;
}

/** `runJsRule`'s answer: a score, or why there is none. Never a 0 standing in for an error. */
export type JsRuleResult =
  | ({ readonly status: "ok" } & JsRuleSuccess)
  | { readonly status: "error"; readonly kind: JsRuleErrorKind; readonly message: string; readonly stack?: string };

/**
 * What a rule may return: a score in [0, 1] (clamped; NaN and ±Infinity are errors), a boolean
 * (true = 1), or `{ score, rationale? }`.
 */
export const JsRuleReturnSchema = z.union([
  z.number(),
  z.boolean(),
  z.object({ score: z.number(), rationale: z.string().nullish() }),
]);

/**
 * Runs a JavaScript rule in the sandbox, as an Effect whose failure says why there is no score.
 *
 * @example
 * const { score } = yield* runJsRuleEffect({ code: "output.length <= 280", output: tweet });
 */
export function runJsRuleEffect(rule: JsRule, options: JsRuleOptions = {}): Effect.Effect<JsRuleSuccess, JsRuleError> {
  const limits = checkLimits(options);
  const sandbox = options.sandbox ?? sharedJsSandbox();
  const job = {
    code: rule.code,
    input: rule.input ?? "",
    output: rule.output,
    // Only what the rule may know: a host path (or anything else on the object) stays outside.
    files: (rule.files ?? []).map((file) =>
      file.mimeType === undefined ? { name: file.name } : { name: file.name, mimeType: file.mimeType },
    ),
    memoryBytes: limits.memoryBytes,
  };
  // The texts are copied into the rule's heap, one byte a character at best: texts that fill half
  // of it leave the rule no room, and copying a 40 Mi-character output once ran past the time limit
  // and was reported as a timeout. Said up front, as what it is.
  const textBytes = job.input.length + job.output.length;
  if (textBytes > limits.memoryBytes / 2)
    return Effect.fail(
      new JsRuleMemoryError({
        message: `the input and output hold ${textBytes.toLocaleString("en-US")} characters, more than the rule's memory limit of ${formatBytes(limits.memoryBytes)} can hold beside the rule (at most half of it); raise memoryBytes or shorten the text`,
      }),
    );
  return sandbox.run(job, limits.timeoutMs).pipe(Effect.flatMap((outcome) => interpret(outcome, limits)));
}

/**
 * Runs a JavaScript rule in the sandbox: QuickJS compiled to WebAssembly, in a worker thread,
 * with a fresh runtime per call, a wall-time limit, a heap limit and a stack limit, and no
 * filesystem, network, process, timers or host objects — only the ECMAScript built-ins and the
 * `input`, `output` and `files` handed in. Failures of the rule are returned, not thrown; it
 * rejects only for invalid limits or an aborted `signal`.
 *
 * @example
 * const result = await runJsRule({
 *   code: "function evaluate({ output }) { return { score: output.includes('Total') ? 1 : 0, rationale: 'has a total' }; }",
 *   output: "Total: 42",
 * });
 * // { status: "ok", score: 1, rationale: "has a total", durationMs: 0.4 }
 */
export async function runJsRule(
  rule: JsRule,
  options: JsRuleOptions & { readonly signal?: AbortSignal } = {},
): Promise<JsRuleResult> {
  const { signal } = options;
  signal?.throwIfAborted();
  const program = runJsRuleEffect(rule, options).pipe(
    Effect.match({
      onSuccess: (success): JsRuleResult => ({ status: "ok", ...success }),
      onFailure: (error): JsRuleResult => ({
        status: "error",
        kind: error.kind,
        message: error.message,
        stack: error.ruleStack,
      }),
    }),
  );
  return runEffect(program, signal);
}

function checkLimits(options: JsRuleOptions): JsRuleLimits {
  const limits = {
    timeoutMs: options.timeoutMs ?? JS_RULE_DEFAULTS.timeoutMs,
    memoryBytes: options.memoryBytes ?? JS_RULE_DEFAULTS.memoryBytes,
  };
  const parsed = JsRuleLimitsSchema.safeParse(limits);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const key = String(issue?.path[0] ?? "limits");
  throw new InvalidJsRuleLimitsError(
    `${key}: ${issue?.message ?? "invalid"}, got ${String(limits[key as keyof JsRuleLimits])}`,
  );
}

function interpret(outcome: SandboxOutcome, limits: JsRuleLimits): Effect.Effect<JsRuleSuccess, JsRuleError> {
  switch (outcome.type) {
    case "watchdog":
      return Effect.fail(
        new JsRuleTimeoutError({
          message: `ran past its ${limits.timeoutMs} ms time limit and could not be interrupted (a long-running built-in function); its worker thread was replaced`,
        }),
      );
    case "worker-died":
      return Effect.fail(
        outcome.outOfMemory
          ? new JsRuleMemoryError({ message: `the sandbox worker ran out of heap: ${outcome.message}` })
          : new JsSandboxCrashedError({ message: `the sandbox worker died: ${outcome.message}` }),
      );
    case "done":
      return interpretWorkerOutcome(outcome.outcome, outcome.durationMs, limits);
  }
}

function interpretWorkerOutcome(
  outcome: WorkerOutcome,
  durationMs: number,
  limits: JsRuleLimits,
): Effect.Effect<JsRuleSuccess, JsRuleError> {
  switch (outcome.type) {
    case "timeout":
      return Effect.fail(
        new JsRuleTimeoutError({ message: `ran past its ${limits.timeoutMs} ms time limit and was interrupted` }),
      );
    case "threw":
      return Effect.fail(thrownError(outcome.phase, outcome.error, outcome.outOfMemory, limits));
    case "crashed":
      // V8's stack ran out under a deep native recursion (a nested parse) before QuickJS's own check.
      if (outcome.message.includes("Maximum call stack size exceeded"))
        return Effect.fail(
          new JsRuleExceptionError({ message: "InternalError: stack overflow (nesting too deep for the engine)" }),
        );
      return Effect.fail(new JsSandboxCrashedError({ message: `the QuickJS engine failed: ${outcome.message}` }));
    case "pending":
      return Effect.fail(
        new InvalidJsRuleResultError({
          message: `${who(outcome.form)} returned a promise that never settles (the sandbox has no timers or I/O to wait for)`,
        }),
      );
    case "returned":
      return readScore(outcome.value, outcome.form, durationMs);
  }
}

function thrownError(
  phase: "compile" | "run",
  thrown: Thrown,
  outOfMemory: boolean,
  limits: JsRuleLimits,
): JsRuleError {
  const text =
    thrown.name === undefined ? `threw a non-Error value: ${thrown.message}` : `${thrown.name}: ${thrown.message}`;
  const where = /\brule\.js:(\d+):(\d+)/.exec(thrown.stack ?? "");
  const message = where ? `${text} (line ${where[1]}, column ${where[2]})` : text;
  const details = { message, ruleStack: thrown.stack };
  if (phase === "compile") return new JsRuleSyntaxError(details);
  // QuickJS refusing an allocation: one over the limit, a string past its 2^30-character cap, or the
  // heap full (then the thrown value may be anything, even null: QuickJS had no memory to build an error).
  if (
    outOfMemory ||
    (thrown.name === "InternalError" && (thrown.message === "out of memory" || thrown.message === "string too long"))
  )
    return new JsRuleMemoryError({
      ...details,
      message: `${thrown.name === undefined ? "out of memory" : message}; the limit is ${formatBytes(limits.memoryBytes)}`,
    });
  return new JsRuleExceptionError(details);
}

function readScore(
  returned: Returned,
  form: RuleForm,
  durationMs: number,
): Effect.Effect<JsRuleSuccess, InvalidJsRuleResultError> {
  const plain =
    returned.type === "object"
      ? { score: plainLeaf(returned.score), rationale: plainLeaf(returned.rationale) }
      : plainLeaf(returned);
  const parsed = JsRuleReturnSchema.safeParse(plain);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const detail =
      returned.type === "object" && issue !== undefined && issue.path.length > 0 ? `: ${formatZodIssues([issue])}` : "";
    return Effect.fail(
      new InvalidJsRuleResultError({
        message: `${who(form)} returned ${describe(returned)}${detail}; expected a number in [0, 1], a boolean, or { score: number, rationale?: string }${hint(returned, form)}`,
      }),
    );
  }
  const value = parsed.data;
  const raw = typeof value === "number" ? value : typeof value === "boolean" ? (value ? 1 : 0) : value.score;
  const rationale = typeof value === "object" ? (value.rationale ?? undefined) : undefined;
  return Effect.succeed({
    score: Math.min(1, Math.max(0, raw)),
    rationale,
    durationMs,
  });
}

/** A stand-in of the right JavaScript type, so that the schema's messages name what was received. */
function plainLeaf(leaf: Leaf): unknown {
  switch (leaf.type) {
    case "number":
    case "string":
    case "boolean":
      return leaf.value;
    case "undefined":
      return undefined;
    case "null":
      return null;
    case "object":
      return {};
    case "function":
      return () => undefined;
    case "symbol":
      return Symbol("returned");
    case "bigint":
      return 0n;
  }
}

function describe(value: Returned | Leaf): string {
  if (value.type === "object")
    return "score" in value
      ? `{ score: ${describe(value.score)}, rationale: ${describe(value.rationale)} }`
      : "an object";
  if (value.type === "number" || value.type === "boolean") return String(value.value);
  if (value.type === "string")
    return JSON.stringify(value.value.length > 60 ? `${value.value.slice(0, 60)}…` : value.value);
  if (value.type === "undefined" || value.type === "null") return value.type;
  return `a ${value.type}`;
}

function who(form: RuleForm): string {
  return form === "function" ? "evaluate" : "the code";
}

function hint(value: Returned, form: RuleForm): string {
  if (value.type !== "undefined") return "";
  return form === "function"
    ? " (is a `return` missing?)"
    : " (its last statement has no value: end it with an expression, or define `function evaluate({ input, output, files })`)";
}

function formatBytes(bytes: number): string {
  const mib = bytes / 2 ** 20;
  return Number.isInteger(mib) ? `${mib} MiB` : `${bytes} bytes`;
}
