import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { formatZodIssues, formatZodPath } from "@rubric/core";
import { Duration, Effect } from "effect";
import {
  SidecarClosedError,
  SidecarCrashedError,
  SidecarError,
  SidecarProtocolError,
  SidecarStartError,
  SidecarTimeoutError,
} from "../errors.js";
import { readBoundedLines } from "./lines.js";
import { NotificationSchema, ReplySchema, type SidecarNotification } from "../wire/envelope.js";
import { SIDECAR_METHODS, type ParamsOf, type ResultOf, type SidecarMethod } from "../wire/methods.js";

/** How to start one sidecar process and what to do with what it says besides replies. */
export interface SidecarLaunch {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd?: string;
  readonly startupTimeoutMs: number;
  /** How long a timed-out or aborted request may take to answer its `$/cancel` before the process is killed. */
  readonly cancelGraceMs: number;
  /** The longest stdout line read; see `SidecarClientOptions.maxLineBytes`. */
  readonly maxLineBytes: number;
  readonly onNotification: (notification: SidecarNotification) => void;
  readonly onLog: (line: string) => void;
}

type RequestFailure =
  | SidecarError
  | SidecarTimeoutError
  | SidecarCrashedError
  | SidecarProtocolError
  | SidecarClosedError;

interface Pending {
  readonly method: SidecarMethod;
  readonly resume: (effect: Effect.Effect<unknown, RequestFailure>) => void;
}

const STDERR_TAIL_CHARS = 16 * 1024;

/**
 * One running sidecar: a child process speaking JSON lines, with requests in flight matched to
 * replies by id. It runs in its own process group, so that killing it also kills what it started
 * (torchrun's worker ranks) and leaves no orphans. Crashes, timeouts and cancellation are failures
 * of the requests concerned; restarting is the client's business ({@link SidecarClient}).
 */
export class SidecarProcess {
  readonly #child: ChildProcess;
  readonly #launch: SidecarLaunch;
  readonly #pending = new Map<number, Pending>();
  /** Requests given up on (timeout, abort) whose `$/cancel` has not been answered yet. */
  readonly #abandoned = new Map<number, NodeJS.Timeout>();
  readonly #closeWaiters: (() => void)[] = [];
  #nextId = 1;
  #stderr = "";
  #exit: { readonly code: number | null; readonly signal: string | null } | undefined;
  #closing = false;
  #onReady: (() => void) | undefined;

  private constructor(child: ChildProcess, launch: SidecarLaunch) {
    this.#child = child;
    this.#launch = launch;
    readBoundedLines(child.stdout!, launch.maxLineBytes, {
      line: (line) => this.#receive(line),
      overflow: () =>
        this.#failOldest(`a line of the sidecar's output ran past ${launch.maxLineBytes} bytes; it was skipped`),
    });
    createInterface({ input: child.stderr! }).on("line", (line) => {
      this.#stderr = (this.#stderr + line + "\n").slice(-STDERR_TAIL_CHARS);
      launch.onLog(line);
    });
    // Writing to a process that just died raises EPIPE here; the 'close' handler reports the death.
    child.stdin!.on("error", () => undefined);
    child.on("close", (code, signal) => this.#closed(code, signal));
    this.#holdEventLoop(false);
  }

  /** Starts the process and waits for its `ready` notification. */
  static start(launch: SidecarLaunch): Effect.Effect<SidecarProcess, SidecarStartError> {
    return Effect.async<SidecarProcess, SidecarStartError>((resume) => {
      let child: ChildProcess;
      try {
        child = spawn(launch.command, [...launch.args], {
          stdio: ["pipe", "pipe", "pipe"],
          env: launch.env,
          cwd: launch.cwd,
          detached: true,
        });
      } catch (error) {
        resume(
          Effect.fail(
            new SidecarStartError({
              message: `cannot start ${launch.command}: ${(error as Error).message}`,
              stderr: "",
            }),
          ),
        );
        return;
      }
      const sidecar = new SidecarProcess(child, launch);
      sidecar.#holdEventLoop(true);
      let settled = false;
      const settle = (effect: Effect.Effect<SidecarProcess, SidecarStartError>) => {
        if (settled) return;
        settled = true;
        sidecar.#onReady = undefined;
        sidecar.#holdEventLoop(false);
        resume(effect);
      };
      child.once("error", (error) =>
        settle(
          Effect.fail(
            new SidecarStartError({
              message: `cannot start ${launch.command}: ${error.message}`,
              stderr: sidecar.#stderr,
            }),
          ),
        ),
      );
      sidecar.#onReady = () => settle(Effect.succeed(sidecar));
      sidecar.#closeWaiters.push(() =>
        settle(
          Effect.fail(
            new SidecarStartError({
              message: `the sidecar (${launch.command} ${launch.args.join(" ")}) exited before it was ready (${describeExit(sidecar.#exit)}): ${lastLine(sidecar.#stderr)}`,
              stderr: sidecar.#stderr,
            }),
          ),
        ),
      );
      return Effect.sync(() => {
        // Interrupted while starting (the start-up timeout, or the caller gave up): nothing will use it.
        settled = true;
        sidecar.kill();
      });
    }).pipe(
      Effect.timeoutFail({
        duration: Duration.millis(launch.startupTimeoutMs),
        onTimeout: () =>
          new SidecarStartError({
            message: `the sidecar did not say it was ready within ${launch.startupTimeoutMs} ms`,
            stderr: "",
          }),
      }),
    );
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** False once the process has exited (or was killed). */
  get alive(): boolean {
    return this.#exit === undefined;
  }

  get stderrTail(): string {
    return this.#stderr;
  }

  /**
   * One request: its params are checked against the method's schema before sending, its result on
   * arrival. Timing out or being interrupted (an AbortSignal) sends `$/cancel` for it.
   */
  request<M extends SidecarMethod>(
    method: M,
    params: ParamsOf<M>,
    timeoutMs: number,
  ): Effect.Effect<ResultOf<M>, RequestFailure> {
    return Effect.suspend(() => {
      if (this.#exit !== undefined) return Effect.fail(this.#deathError());
      // Callers that bypass the types (JavaScript, `as never`) get the sidecar's own answer, without a round trip.
      if (!Object.hasOwn(SIDECAR_METHODS, method))
        return Effect.fail(
          new SidecarError({
            method,
            fault: "unknown_method",
            message: `no method ${JSON.stringify(method)}; the methods are ${Object.keys(SIDECAR_METHODS).sort().join(", ")}`,
            data: { method },
          }),
        );
      const checked = SIDECAR_METHODS[method].params.safeParse(params);
      if (!checked.success) {
        const issue = checked.error.issues[0]!;
        const path = formatZodPath(["params", ...issue.path]);
        return Effect.fail(
          new SidecarError({ method, fault: "invalid_params", message: `${path}: ${issue.message}`, data: { path } }),
        );
      }
      const id = this.#nextId++;
      return Effect.async<unknown, RequestFailure>((resume) => {
        this.#pending.set(id, { method, resume });
        this.#holdEventLoop(true);
        this.#write({ id, method, params: checked.data });
        return Effect.sync(() => {
          if (this.#pending.delete(id)) this.#abandon(id);
          this.#holdEventLoop(this.#pending.size > 0);
        });
      }).pipe(
        Effect.timeoutFail({
          duration: Duration.millis(timeoutMs),
          onTimeout: () =>
            new SidecarTimeoutError({ method, timeoutMs, message: `${method} got no reply within ${timeoutMs} ms` }),
        }),
      ) as Effect.Effect<ResultOf<M>, RequestFailure>;
    });
  }

  /**
   * Asks the sidecar to stop (`shutdown`, then end of input) and waits `graceMs` for it to exit;
   * then SIGTERM to its process group, and SIGKILL if that does not do it either.
   */
  shutdown(graceMs: number): Effect.Effect<void> {
    return Effect.gen(this, function* () {
      if (this.#exit !== undefined) return;
      this.#closing = true;
      this.#write({ id: 0, method: "shutdown", params: {} });
      this.#child.stdin!.end();
      if (yield* this.#waitForExit(graceMs)) return;
      this.#signalGroup("SIGTERM");
      if (yield* this.#waitForExit(graceMs)) return;
      this.#signalGroup("SIGKILL");
      yield* this.#waitForExit(graceMs);
    });
  }

  /** Kills the process group at once; in-flight requests fail with SidecarCrashedError. */
  kill(): void {
    this.#signalGroup("SIGKILL");
  }

  #waitForExit(ms: number): Effect.Effect<boolean> {
    return Effect.async<boolean>((resume) => {
      if (this.#exit !== undefined) return resume(Effect.succeed(true));
      const done = () => resume(Effect.succeed(true));
      this.#closeWaiters.push(done);
      return Effect.sync(() => {
        const index = this.#closeWaiters.indexOf(done);
        if (index >= 0) this.#closeWaiters.splice(index, 1);
      });
    }).pipe(Effect.timeoutTo({ duration: Duration.millis(ms), onSuccess: (exited) => exited, onTimeout: () => false }));
  }

  /**
   * An idle sidecar does not keep Node running: a program that forgets `close()` still exits, and
   * the sidecar then reads the end of its input and exits too. While requests (or the start-up)
   * are in flight, the child and its pipes hold the event loop so that their replies arrive.
   */
  #holdEventLoop(hold: boolean): void {
    for (const handle of [this.#child, this.#child.stdin, this.#child.stdout, this.#child.stderr] as ({
      ref?: () => void;
      unref?: () => void;
    } | null)[]) {
      if (hold) handle?.ref?.();
      else handle?.unref?.();
    }
  }

  #signalGroup(signal: NodeJS.Signals): void {
    const pid = this.#child.pid;
    if (pid === undefined || this.#exit !== undefined) return;
    try {
      // The negative pid is the process group the detached child leads (torchrun and its ranks).
      process.kill(-pid, signal);
    } catch {
      // ESRCH: the group is already gone.
    }
  }

  #write(message: object): void {
    if (this.#exit === undefined && this.#child.stdin!.writable)
      this.#child.stdin!.write(`${JSON.stringify(message)}\n`);
  }

  #abandon(id: number): void {
    this.#write({ method: "$/cancel", params: { id } });
    const watchdog = setTimeout(() => {
      if (!this.#abandoned.delete(id)) return;
      this.#launch.onLog(
        `rubric-sidecar: request ${id} did not answer its cancel within ${this.#launch.cancelGraceMs} ms; killing the sidecar`,
      );
      this.kill();
    }, this.#launch.cancelGraceMs);
    // The watchdog alone must not keep Node running.
    watchdog.unref();
    this.#abandoned.set(id, watchdog);
  }

  #receive(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      // The sidecar answers one request at a time: a line it wrote that is not JSON (a NaN, a
      // torn write) is the answer to the oldest call, which fails now rather than at its timeout.
      this.#failOldest(`the sidecar wrote a line that is not JSON: ${line.slice(0, 200)}`);
      return;
    }
    if (typeof message === "object" && message !== null && "id" in message) {
      this.#reply(message);
      return;
    }
    const notification = NotificationSchema.safeParse(message);
    if (!notification.success) {
      this.#launch.onLog(`rubric-sidecar: ignoring an unknown notification: ${line.slice(0, 200)}`);
      return;
    }
    if (notification.data.method === "ready") this.#onReady?.();
    this.#launch.onNotification(notification.data);
  }

  #reply(message: object): void {
    const reply = ReplySchema.safeParse(message);
    const id = (message as { id?: unknown }).id;
    const pending = typeof id === "number" ? this.#pending.get(id) : undefined;
    const wasAbandoned = typeof id === "number" && this.#abandoned.has(id);
    if (wasAbandoned) {
      clearTimeout(this.#abandoned.get(id));
      this.#abandoned.delete(id);
    }
    if (pending === undefined) {
      // A late answer to a request given up on is expected; any other id is a reply to nothing we
      // sent, and the call the sidecar was working on is the one it failed to answer.
      if (wasAbandoned) return;
      this.#failOldest(
        `the sidecar replied to id ${JSON.stringify(id)}, which no call is waiting for: ${JSON.stringify(message).slice(0, 200)}`,
      );
      return;
    }
    this.#pending.delete(id as number);
    this.#holdEventLoop(this.#pending.size > 0);
    const { method, resume } = pending;
    if (!reply.success) {
      resume(
        Effect.fail(
          new SidecarProtocolError({
            method,
            message: `${method}: the reply does not fit the protocol at ${formatZodIssues(reply.error, { limit: 1 })}`,
          }),
        ),
      );
      return;
    }
    if ("error" in reply.data) {
      const { code: fault, message: text, data } = reply.data.error;
      resume(Effect.fail(new SidecarError({ method, fault, message: `${method}: ${text}`, data })));
      return;
    }
    const result = SIDECAR_METHODS[method].result.safeParse(reply.data.result);
    if (!result.success) {
      resume(
        Effect.fail(
          new SidecarProtocolError({
            method,
            message: `${method}: the result does not fit its schema at ${formatZodIssues(result.error, { limit: 1 })}`,
          }),
        ),
      );
      return;
    }
    resume(Effect.succeed(result.data));
  }

  /** Fails the oldest call in flight (the one the sidecar is answering) with a protocol error. */
  #failOldest(problem: string): void {
    const oldest = [...this.#pending.keys()].sort((a, b) => a - b)[0];
    if (oldest === undefined) {
      this.#launch.onLog(`rubric-sidecar: ${problem}`);
      return;
    }
    const { method, resume } = this.#pending.get(oldest)!;
    this.#pending.delete(oldest);
    this.#holdEventLoop(this.#pending.size > 0);
    resume(Effect.fail(new SidecarProtocolError({ method, message: `${method}: ${problem}` })));
  }

  #closed(code: number | null, signal: NodeJS.Signals | null): void {
    this.#exit = { code, signal };
    for (const timer of this.#abandoned.values()) clearTimeout(timer);
    this.#abandoned.clear();
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const { resume } of pending) resume(Effect.fail(this.#deathError()));
    for (const waiter of this.#closeWaiters.splice(0)) waiter();
  }

  #deathError(): SidecarCrashedError | SidecarClosedError {
    if (this.#closing) return new SidecarClosedError({ message: "the sidecar was shut down" });
    return new SidecarCrashedError({
      message: `the sidecar exited (${describeExit(this.#exit)}): ${lastLine(this.#stderr)}`,
      exitCode: this.#exit?.code ?? null,
      signal: this.#exit?.signal ?? null,
      stderr: this.#stderr,
    });
  }
}

function describeExit(exit: { readonly code: number | null; readonly signal: string | null } | undefined): string {
  if (exit === undefined) return "still running";
  return exit.signal !== null ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
}

function lastLine(text: string): string {
  const lines = text.trim().split("\n");
  return lines[lines.length - 1] || "nothing on stderr";
}
