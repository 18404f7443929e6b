import { type ChildProcessByStdio, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { formatZodIssues } from "@rubric/core";
import { runEffect } from "@rubric/core/effect";
import { Duration, Effect, Option } from "effect";
import type { OutputFile } from "../../verifier/verifier.js";
import {
  InvalidPythonRuleRequestError,
  InvalidPythonRuleResultError,
  PythonRuleExceptionError,
  PythonRuleMemoryError,
  PythonRuleTimeoutError,
  PythonSandboxCrashedError,
  PythonSandboxUnavailableError,
  type PythonRuleError,
  type PythonRuleErrorKind,
} from "./errors.js";
import { HarnessResponseSchema, pythonHarnessPath, type HarnessRequest } from "./harness.js";
import { guessMimeType } from "./mime-type.js";
import {
  BWRAP_ARGS_FD,
  BWRAP_HARNESS_FD,
  BWRAP_SECCOMP_FD,
  SANDBOX_OUTPUTS_DIR,
  bwrapArguments,
  resolveExecutable,
  sandboxFileName,
} from "./sandbox.js";
import { SECCOMP_ARCHITECTURES, processFilter } from "./seccomp.js";
import { inTaskCgroup, makeTaskCgroup, removeTaskCgroup } from "./task-limit.js";

/** One code rule to run against one output. */
export interface PythonRuleRequest {
  /** Python source defining `evaluate(workflow, context)`, written against the ARCANE reference API. */
  readonly code: string;
  /** The output's files; mounted read-only and listed by `context.get_all_outputs()`. */
  readonly files?: readonly OutputFile[];
  /** The task prompt (`workflow.workflow_goal`). */
  readonly input?: string;
  /** The output's text; with no files it is the one resource the rule sees (`output.md`). */
  readonly output?: string;
  /** The rule's weight: `evaluate` returns points in [0, maxScore]. Default 1. */
  readonly maxScore?: number;
}

/** How rules are sandboxed. Every field has a default that works on Debian with `bubblewrap` installed. */
export interface PythonSandboxOptions {
  /** Wall-clock limit for the whole run, interpreter start-up included. Default 10 000. */
  readonly timeoutMs?: number;
  /** Address-space limit of the interpreter in MiB. Default 512. */
  readonly memoryMb?: number;
  /** Interpreter, which must be visible in the sandbox (under /usr, or in `readOnlyPaths`). Default `/usr/bin/python3`. */
  readonly python?: string;
  /** bubblewrap executable, looked up on PATH without a slash. Default `bwrap`. */
  readonly bwrap?: string;
  /**
   * util-linux `prlimit`, which applies the limits before the interpreter starts. `null` skips
   * it; harness.py sets the same limits itself first thing. Default `prlimit` when on PATH.
   */
  readonly prlimit?: string | null;
  /** Override for where harness.py is (default: {@link pythonHarnessPath}). */
  readonly harnessPath?: string;
  /** More host paths to mount read-only at the same place, e.g. a virtualenv. */
  readonly readOnlyPaths?: readonly string[];
  /** Cap on what the sandbox may write to stdout; more is an invalid result. Default 1 MiB. */
  readonly maxOutputBytes?: number;
  /**
   * Threads the rule's interpreter may run, its main thread included; one more fails to start
   * (`RuntimeError: can't start new thread`, EAGAIN from pthread_create). Default 64. Enforced
   * by RLIMIT_NPROC in the sandbox, and on a root host, which the kernel exempts from that, by
   * a pids cgroup of the run's own (see `task-limit.ts`).
   */
  readonly maxThreads?: number;
}

export interface PythonRuleRunOptions extends PythonSandboxOptions {
  /** Aborting kills the sandbox; the promise then rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

export interface PythonRuleOk {
  readonly status: "ok";
  /** `raw / maxScore`, clamped to [0, 1]. */
  readonly score: number;
  /** What `evaluate` returned, in the rule's points. */
  readonly raw: number;
  readonly feedback?: string;
  readonly durationMs: number;
}

export interface PythonRuleFailed {
  readonly status: "error";
  readonly kind: PythonRuleErrorKind;
  readonly message: string;
  readonly traceback?: string;
  readonly stderr?: string;
  readonly durationMs: number;
}

export type PythonRuleResult = PythonRuleOk | PythonRuleFailed;

export const PYTHON_SANDBOX_DEFAULTS = {
  timeoutMs: 10_000,
  memoryMb: 512,
  python: "/usr/bin/python3",
  bwrap: "bwrap",
  maxOutputBytes: 1 << 20,
  maxThreads: 64,
} as const;

const STDERR_TAIL_BYTES = 16 * 1024;
const TMP_BYTES = 64 * 1024 * 1024;
/**
 * Open descriptors per sandbox. Kernel buffers behind descriptors (pipes, socket pairs) are
 * memory no rlimit counts, so their number is kept small; a rule reads a handful of files.
 */
const MAX_OPEN_FILES = 256;

/**
 * Runs one code rule in a bubblewrap sandbox and scores it. Fails with a typed error for each
 * way a rule can end without a score; never runs the rule outside the sandbox.
 *
 * @example
 * const ok = await Effect.runPromise(
 *   runPythonRuleEffect({ code: "def evaluate(workflow, context):\n    return 0.5", maxScore: 2 }),
 * ); // ok.score === 0.25
 */
export function runPythonRuleEffect(
  request: PythonRuleRequest,
  options: PythonSandboxOptions = {},
): Effect.Effect<PythonRuleOk, PythonRuleError> {
  return Effect.gen(function* () {
    const timeoutMs = options.timeoutMs ?? PYTHON_SANDBOX_DEFAULTS.timeoutMs;
    const memoryMb = options.memoryMb ?? PYTHON_SANDBOX_DEFAULTS.memoryMb;
    const maxScore = request.maxScore ?? 1;
    if (!(Number.isFinite(maxScore) && maxScore > 0))
      return yield* new InvalidPythonRuleRequestError({
        message: `maxScore must be a finite number > 0, got ${maxScore}`,
      });
    if (!(Number.isFinite(timeoutMs) && timeoutMs > 0))
      return yield* new InvalidPythonRuleRequestError({
        message: `timeoutMs must be a finite number > 0, got ${timeoutMs}`,
      });
    if (!(Number.isFinite(memoryMb) && memoryMb >= 32))
      return yield* new InvalidPythonRuleRequestError({ message: `memoryMb must be at least 32, got ${memoryMb}` });
    const maxThreads = options.maxThreads ?? PYTHON_SANDBOX_DEFAULTS.maxThreads;
    if (!(Number.isInteger(maxThreads) && maxThreads >= 1))
      return yield* new InvalidPythonRuleRequestError({
        message: `maxThreads must be an integer ≥ 1, got ${maxThreads}`,
      });

    const tools = yield* locateTools(options);
    const files = yield* mountFiles(request.files ?? []);
    const cpuSeconds = Math.ceil(timeoutMs / 1000) + 1;
    const limits = {
      cpu_seconds: cpuSeconds,
      memory_bytes: memoryMb * 1024 * 1024,
      file_size_bytes: TMP_BYTES,
      open_files: MAX_OPEN_FILES,
      threads: maxThreads,
    };
    const harnessRequest: HarnessRequest = {
      code: request.code,
      files: files.map((f) => f.wire),
      input: request.input ?? "",
      output: request.output ?? "",
      max_score: maxScore,
      limits,
    };
    const sandboxArgs = bwrapArguments({
      python: tools.python,
      harnessFd: BWRAP_HARNESS_FD,
      files: files.map((f) => ({ hostPath: f.hostPath, sandboxPath: f.wire.path })),
      readOnlyPaths: options.readOnlyPaths ?? [],
      tmpBytes: TMP_BYTES,
      seccompFd: BWRAP_SECCOMP_FD,
    });
    const bwrapCommand = [tools.bwrap, "--args", String(BWRAP_ARGS_FD), "--", ...sandboxArgs.command];
    // Not RLIMIT_NPROC here: prlimit would set it on bwrap in the host's user namespace, where it
    // counts every task of the host uid. harness.py sets it inside, where it counts the sandbox's.
    const [limited, limitedArgs] = tools.prlimit
      ? [
          tools.prlimit,
          [
            `--cpu=${cpuSeconds}:${cpuSeconds + 1}`,
            `--as=${limits.memory_bytes}`,
            "--core=0",
            `--fsize=${TMP_BYTES}`,
            `--nofile=${MAX_OPEN_FILES}`,
            "--",
            ...bwrapCommand,
          ],
        ]
      : [tools.bwrap, bwrapCommand.slice(1)];
    // The kernel exempts a root host's tasks from RLIMIT_NPROC, so there a pids cgroup holds the cap.
    const cgroup = runsAsRoot()
      ? yield* Effect.acquireRelease(makeTaskCgroup(maxThreads), removeTaskCgroup)
      : undefined;
    const [command, args] = cgroup ? inTaskCgroup(cgroup, limited, limitedArgs) : [limited, limitedArgs];

    const started = performance.now();
    const finished = yield* runProcess(
      command,
      args,
      {
        stdin: JSON.stringify(harnessRequest),
        fds: {
          [BWRAP_ARGS_FD]: Buffer.from(sandboxArgs.options.map((arg) => `${arg}\0`).join(""), "utf8"),
          [BWRAP_SECCOMP_FD]: tools.seccompFilter,
          [BWRAP_HARNESS_FD]: tools.harnessSource,
        },
      },
      options.maxOutputBytes ?? PYTHON_SANDBOX_DEFAULTS.maxOutputBytes,
    ).pipe(Effect.timeoutOption(Duration.millis(timeoutMs)));
    const durationMs = performance.now() - started;
    if (Option.isNone(finished))
      return yield* new PythonRuleTimeoutError({
        message: `the rule did not finish within ${timeoutMs} ms; the sandbox was killed`,
      });
    return yield* interpretOutcome(finished.value, { maxScore, cpuSeconds, memoryMb, durationMs });
  }).pipe(Effect.scoped);
}

function runsAsRoot(): boolean {
  return process.getuid?.() === 0;
}

/**
 * {@link runPythonRuleEffect} as a promise that resolves to a result for every outcome of the
 * rule (it rejects only when `signal` aborts).
 *
 * @example
 * const result = await runPythonRule(
 *   { code: "def evaluate(workflow, context):\n    return 3, 'three of four'", maxScore: 4 },
 *   { timeoutMs: 5_000 },
 * );
 * if (result.status === "ok") console.log(result.score); // 0.75
 */
export async function runPythonRule(
  request: PythonRuleRequest,
  options: PythonRuleRunOptions = {},
): Promise<PythonRuleResult> {
  const started = performance.now();
  // A typed sandbox failure is a result the caller inspects; only defects and aborts reject.
  const program = runPythonRuleEffect(request, options).pipe(
    Effect.catchAll((error) =>
      Effect.succeed<PythonRuleResult>({
        status: "error",
        kind: error.kind,
        message: error.message,
        traceback: error.traceback,
        stderr: error.stderr,
        durationMs: performance.now() - started,
      }),
    ),
  );
  return runEffect(program, options.signal);
}

// --- setup -------------------------------------------------------------------------------------

interface Tools {
  readonly bwrap: string;
  readonly prlimit: string | undefined;
  readonly python: string;
  readonly harnessSource: Buffer;
  readonly seccompFilter: Buffer;
}

function locateTools(options: PythonSandboxOptions): Effect.Effect<Tools, PythonSandboxUnavailableError> {
  return Effect.gen(function* () {
    const bwrapName = options.bwrap ?? PYTHON_SANDBOX_DEFAULTS.bwrap;
    const bwrap = resolveExecutable(bwrapName);
    if (bwrap === undefined)
      return yield* new PythonSandboxUnavailableError({
        message: `bubblewrap (${bwrapName}) is not installed or not executable, and Python rules never run unsandboxed; install it: apt-get install bubblewrap`,
      });
    const python = options.python ?? PYTHON_SANDBOX_DEFAULTS.python;
    if (!existsSync(python))
      return yield* new PythonSandboxUnavailableError({
        message: `the Python interpreter ${python} does not exist; install python3 (with python3-pandas, python3-numpy, python3-openpyxl for GDPval rules) or pass options.python`,
      });
    const harnessPath = options.harnessPath ?? pythonHarnessPath();
    if (!existsSync(harnessPath))
      return yield* new PythonSandboxUnavailableError({
        message: `harness.py is missing at ${harnessPath}; the package build must copy src/sandbox/python/harness.py next to the bundle (dist/harness.py)`,
      });
    const seccompFilter = processFilter();
    // The filter is what stops a rule from forking; without one for this CPU the rule does not run.
    if (seccompFilter === undefined)
      return yield* new PythonSandboxUnavailableError({
        message: `no seccomp filter for the ${process.arch} architecture (known: ${SECCOMP_ARCHITECTURES.join(", ")}); Python rules never run without their process limit`,
      });
    const prlimit = options.prlimit === null ? undefined : resolveExecutable(options.prlimit ?? "prlimit");
    return { bwrap, prlimit, python, harnessSource: readFileSync(harnessPath), seccompFilter };
  });
}

interface MountedFile {
  readonly hostPath: string;
  readonly wire: HarnessRequest["files"][number];
}

function mountFiles(files: readonly OutputFile[]): Effect.Effect<MountedFile[], InvalidPythonRuleRequestError> {
  return Effect.forEach(files, (file, index) =>
    Effect.gen(function* () {
      const isFile = (() => {
        try {
          return statSync(file.path).isFile();
        } catch {
          return false;
        }
      })();
      // A missing file is the caller's mistake; the rule would read it as an empty deliverable and score 0.
      if (!isFile)
        return yield* new InvalidPythonRuleRequestError({
          message: `files[${index}] (${file.name}): ${file.path} is not a readable file`,
        });
      return {
        hostPath: file.path,
        wire: {
          id: resourceId(index, file.name),
          name: file.name,
          path: `${SANDBOX_OUTPUTS_DIR}/${index}/${sandboxFileName(file.name, index)}`,
          mime_type: file.mimeType ?? guessMimeType(file.name),
        },
      };
    }),
  );
}

// The reference keys resources by UUID; a stable one per (position, name) keeps feedback that
// quotes ids reproducible, which verdict caching relies on.
function resourceId(index: number, name: string): string {
  const hex = createHash("sha256").update(`${index}\0${name}`).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

// --- the process -------------------------------------------------------------------------------

interface ProcessInputs {
  readonly stdin: string;
  /** Bytes to feed the child on descriptors beyond stdio, by descriptor number. */
  readonly fds: Readonly<Record<number, Buffer>>;
}

interface ProcessOutcome {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stdoutOverflow: boolean;
  readonly stderr: string;
  readonly spawnError?: Error;
}

/**
 * Runs the sandbox to completion. Interrupting the effect (timeout, abort) kills the process
 * group and waits until it is gone; bwrap's --die-with-parent then takes the sandbox down.
 */
function runProcess(
  command: string,
  args: readonly string[],
  inputs: ProcessInputs,
  maxOutputBytes: number,
): Effect.Effect<ProcessOutcome> {
  return Effect.async<ProcessOutcome>((resume) => {
    const extraFds = Object.keys(inputs.fds).map(Number);
    const stdio = Array.from({ length: Math.max(3, ...extraFds.map((fd) => fd + 1)) }, (_, fd) =>
      fd < 3 || fd in inputs.fds ? ("pipe" as const) : ("ignore" as const),
    );
    // The host environment may hold secrets, and the sandbox can read bwrap's (its /proc/1/environ):
    // every executable is an absolute path, so bwrap gets an empty environment.
    const child = spawn(command, args, { stdio, detached: true, env: {} }) as ChildProcessByStdio<
      Writable,
      Readable,
      Readable
    >;
    for (const fd of extraFds) {
      const stream = child.stdio[fd] as Writable | null;
      stream?.on("error", () => {});
      stream?.end(inputs.fds[fd]);
    }
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stdoutOverflow = false;
    let stderr = Buffer.alloc(0);
    let spawnError: Error | undefined;
    let closed = false;
    const whenClosed: Array<() => void> = [];
    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    };

    child.stdout.on("data", (chunk: Buffer) => {
      if (stdoutOverflow) return;
      stdoutBytes += chunk.length;
      if (stdoutBytes > maxOutputBytes) {
        stdoutOverflow = true;
        killGroup();
      } else stdout.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = Buffer.concat([stderr, chunk]);
      if (stderr.length > 2 * STDERR_TAIL_BYTES) stderr = stderr.subarray(stderr.length - STDERR_TAIL_BYTES);
    });
    // The sandbox may die before reading its request (EPIPE); its exit status says why.
    child.stdin.on("error", () => {});
    child.stdin.end(inputs.stdin);
    child.on("error", (error) => {
      spawnError = error;
    });
    child.on("close", (code, signal) => {
      closed = true;
      const tail = stderr.length > STDERR_TAIL_BYTES ? stderr.subarray(stderr.length - STDERR_TAIL_BYTES) : stderr;
      resume(
        Effect.succeed({
          code,
          signal,
          stdout: Buffer.concat(stdout).toString("utf8"),
          stdoutOverflow,
          stderr: tail.toString("utf8"),
          spawnError,
        }),
      );
      for (const f of whenClosed) f();
    });

    return Effect.async<void>((done) => {
      if (closed) return done(Effect.void);
      whenClosed.push(() => done(Effect.void));
      killGroup();
    });
  });
}

// --- reading the outcome -----------------------------------------------------------------------

interface RunFacts {
  readonly maxScore: number;
  readonly cpuSeconds: number;
  readonly memoryMb: number;
  readonly durationMs: number;
}

const SIGKILL = 9;
const SIGXCPU = 24;
const OUT_OF_MEMORY = /MemoryError|Cannot allocate memory|std::bad_alloc|out of memory/i;

function interpretOutcome(outcome: ProcessOutcome, facts: RunFacts): Effect.Effect<PythonRuleOk, PythonRuleError> {
  const stderr = outcome.stderr.trim() === "" ? {} : { stderr: outcome.stderr };
  if (outcome.spawnError)
    return Effect.fail(
      new PythonSandboxUnavailableError({
        message: `could not start the sandbox: ${outcome.spawnError.message}`,
        ...stderr,
      }),
    );
  if (outcome.stdoutOverflow)
    return Effect.fail(
      new InvalidPythonRuleResultError({
        message: `the sandbox wrote more than the allowed stdout; the rule's prints belong on stderr`,
        ...stderr,
      }),
    );

  const lines = outcome.stdout.split("\n").filter((line) => line.trim() !== "");
  if (lines.length === 0) return Effect.fail(explainSilentExit(outcome, facts));
  if (lines.length > 1)
    return Effect.fail(
      new InvalidPythonRuleResultError({
        message: `expected one JSON line from the harness, got ${lines.length}`,
        ...stderr,
      }),
    );
  let json: unknown;
  try {
    json = JSON.parse(lines[0]!);
  } catch (error) {
    return Effect.fail(
      new InvalidPythonRuleResultError({
        message: `the harness's answer is not JSON: ${(error as Error).message}`,
        ...stderr,
      }),
    );
  }
  const parsed = HarnessResponseSchema.safeParse(json);
  if (!parsed.success)
    return Effect.fail(
      new InvalidPythonRuleResultError({
        message: `the harness's answer has the wrong shape: ${formatZodIssues(parsed.error, { separator: "; " })}`,
        ...stderr,
      }),
    );
  const answer = parsed.data;
  if (!answer.ok) {
    const detail = {
      message: answer.message,
      ...(answer.traceback === null ? {} : { traceback: answer.traceback }),
      ...stderr,
    };
    if (answer.kind === "memory")
      return Effect.fail(
        new PythonRuleMemoryError({ ...detail, message: `${answer.message} (limit ${facts.memoryMb} MiB)` }),
      );
    if (answer.kind === "invalid-result") return Effect.fail(new InvalidPythonRuleResultError(detail));
    return Effect.fail(new PythonRuleExceptionError(detail));
  }
  if (!Number.isFinite(answer.score))
    return Effect.fail(new InvalidPythonRuleResultError({ message: `non-finite score ${answer.score}` }));
  const fraction = answer.score / facts.maxScore;
  return Effect.succeed({
    status: "ok",
    score: fraction < 0 ? 0 : fraction > 1 ? 1 : fraction,
    raw: answer.score,
    ...(answer.feedback === null ? {} : { feedback: answer.feedback }),
    durationMs: facts.durationMs,
  });
}

/** Why the sandbox ended without writing an answer. */
function explainSilentExit(outcome: ProcessOutcome, facts: RunFacts): PythonRuleError {
  const stderr = outcome.stderr.trim() === "" ? {} : { stderr: outcome.stderr };
  // bwrap reports a child killed by signal N as exit status 128 + N.
  const signal = outcome.signal ?? (outcome.code !== null && outcome.code > 128 ? outcome.code - 128 : null);
  const bwrapComplaint = outcome.stderr.split("\n").find((line) => line.startsWith("bwrap: "));
  if (signal === SIGXCPU || signal === "SIGXCPU")
    return new PythonRuleTimeoutError({
      message: `the rule used more than its ${facts.cpuSeconds} s of CPU time and was killed`,
      ...stderr,
    });
  if (OUT_OF_MEMORY.test(outcome.stderr))
    return new PythonRuleMemoryError({
      message: `the sandbox ran out of memory (limit ${facts.memoryMb} MiB)`,
      ...stderr,
    });
  if (bwrapComplaint !== undefined && outcome.code === 1)
    return new PythonSandboxUnavailableError({
      message: `bubblewrap could not set up the sandbox (${bwrapComplaint.slice("bwrap: ".length)}); it needs unprivileged user namespaces, and the interpreter must be under /usr or in readOnlyPaths`,
      ...stderr,
    });
  const how =
    signal === SIGKILL || signal === "SIGKILL"
      ? "was killed by SIGKILL (the kernel's OOM killer, or the CPU hard limit)"
      : signal !== null
        ? `was killed by signal ${signal}`
        : `exited with status ${outcome.code}`;
  return new PythonSandboxCrashedError({ message: `the sandboxed interpreter ${how} without an answer`, ...stderr });
}
