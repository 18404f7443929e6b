import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { Duration, Effect, Exit, Queue } from "effect";
import { formatZodIssues } from "@rubric/core";
import { JsSandboxUnavailableError } from "./errors.js";
import { QUICKJS_WORKER_SOURCE } from "./worker-source.js";
import { WorkerReplySchema, type SandboxJob, type WorkerOutcome } from "./worker-protocol.js";
import { VerifierOptionsError } from "../../errors.js";

const MIB = 1024 * 1024;

/** Fixed settings of every worker (see `worker-source.ts`). */
const WORKER_SETTINGS = {
  /** The WebAssembly heap QuickJS starts with; the module declares 16 MiB as its minimum. */
  initialHeapBytes: 16 * MIB,
  /**
   * QuickJS's stack limit. It counts only the WebAssembly shadow stack, while each interpreter
   * frame also takes V8 stack; at 256 KiB a nested parse (`JSON.parse("[".repeat(1e4))`, deeply
   * nested source) already overflows V8's stack first, which leaves the module half-unwound.
   * 128 KiB still allows ~700 levels of plain JavaScript recursion.
   */
  stackBytes: 128 * 1024,
  /** Extra heap granted after the rule has finished, to read its result or error. */
  headroomBytes: MIB,
  /** Longest rationale, message or stack passed back. */
  maxTextChars: 4000,
};

/** A worker's own V8 heap holds only QuickJS's glue and the strings passed in and out. */
const WORKER_RESOURCE_LIMITS = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32 };

/** Loading and compiling the WebAssembly module takes ~100 ms; this only catches a worker that never starts. */
const READY_TIMEOUT = Duration.seconds(30);

/**
 * How long past its deadline a rule may run before its worker is killed. QuickJS polls the
 * interrupt handler only while it interprets bytecode, so a rule stuck inside one native
 * built-in (`"a".repeat(3e6).includes("a".repeat(1e5) + "b")` runs for minutes) never sees its
 * deadline; terminating the thread is the only way out.
 */
const WATCHDOG_GRACE_MS = 500;

/** How a job ended, seen from the host. */
export type SandboxOutcome =
  | { readonly type: "done"; readonly outcome: WorkerOutcome; readonly durationMs: number }
  /** The rule outlived its deadline plus grace; its worker was terminated. */
  | { readonly type: "watchdog" }
  /** The worker thread died mid-job (its V8 heap limit, or an uncaught error in the worker itself). */
  | { readonly type: "worker-died"; readonly message: string; readonly outOfMemory: boolean };

export interface JsSandboxOptions {
  /**
   * Most rules run at the same time, each in its own worker thread (default: the number of
   * CPUs, at most 4). Workers start on demand and are kept for the next rule.
   */
  readonly maxWorkers?: number;
}

interface WorkerSlot {
  readonly worker: Worker;
  error?: Error & { code?: string };
  exited: boolean;
}

/**
 * The right to run one job: an idle worker, or `null` for room to start a new one. The pool is a
 * FIFO queue of `maxWorkers` tokens, so waiting rules are served in order at constant cost each.
 */
type Token = WorkerSlot | null;

/**
 * A pool of worker threads that run JavaScript rules in QuickJS (WebAssembly). Each worker loads
 * the module once and gives every rule a fresh runtime; a worker is replaced when a rule had to
 * be killed. Idle workers do not keep the process alive.
 *
 * Rules run off the main thread, so a rule that spins for its whole time limit does not block
 * the event loop (LLM calls, the reward server) meanwhile.
 *
 * @example
 * const sandbox = new JsSandbox({ maxWorkers: 2 });
 * await runJsRule({ code: "output.length > 0", output: "hi" }, { sandbox });
 * await sandbox.close();
 */
export class JsSandbox {
  readonly maxWorkers: number;
  readonly #tokens: Queue.Queue<Token>;
  readonly #live = new Set<WorkerSlot>();
  #closed = false;

  constructor(options: JsSandboxOptions = {}) {
    const maxWorkers = options.maxWorkers ?? Math.min(4, availableParallelism());
    if (!Number.isInteger(maxWorkers) || maxWorkers < 1)
      throw new VerifierOptionsError(`maxWorkers must be an integer ≥ 1, got ${maxWorkers}`);
    this.maxWorkers = maxWorkers;
    this.#tokens = Effect.runSync(Queue.unbounded<Token>());
    Effect.runSync(this.#tokens.offerAll(Array.from({ length: maxWorkers }, () => null)));
  }

  /** Runs one job on an idle (or new) worker. `timeoutMs` starts when the job is handed to the worker, not while it queues. */
  run(job: Omit<SandboxJob, "deadline">, timeoutMs: number): Effect.Effect<SandboxOutcome, JsSandboxUnavailableError> {
    return Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(restore(this.#tokens.take), (token) =>
        restore(this.#ready(token)).pipe(
          // No worker came of it (closed, failed to start, interrupted): the room goes back.
          Effect.onError(() => this.#tokens.offer(null)),
          Effect.flatMap((slot) =>
            restore(
              this.#exchange(slot, { ...job, deadline: Date.now() + timeoutMs }).pipe(
                Effect.timeoutTo({
                  duration: Duration.millis(timeoutMs + WATCHDOG_GRACE_MS),
                  onSuccess: (outcome): SandboxOutcome => outcome,
                  onTimeout: (): SandboxOutcome => ({ type: "watchdog" }),
                }),
              ),
            ).pipe(Effect.onExit((exit) => this.#release(slot, exit))),
          ),
        ),
      ),
    );
  }

  /** Terminates every worker; later runs fail with `JsSandboxUnavailableError`. */
  async close(): Promise<void> {
    this.#closed = true;
    const slots = [...this.#live];
    this.#live.clear();
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Workers alive now (idle or busy). */
  get workerCount(): number {
    return this.#live.size;
  }

  #ready(token: Token): Effect.Effect<WorkerSlot, JsSandboxUnavailableError> {
    return Effect.suspend(() => {
      if (this.#closed) {
        if (token !== null) this.#retire(token);
        return Effect.fail(new JsSandboxUnavailableError({ message: "the JS sandbox was closed" }));
      }
      if (token === null || token.exited) return this.#spawn();
      token.worker.ref();
      return Effect.succeed(token);
    });
  }

  #release(slot: WorkerSlot, exit: Exit.Exit<SandboxOutcome, unknown>): Effect.Effect<void> {
    // A worker killed by the watchdog, dead, or abandoned mid-job (an aborted signal) is not reused.
    const healthy = Exit.isSuccess(exit) && exit.value.type === "done" && !this.#closed && this.#live.has(slot);
    if (healthy) slot.worker.unref();
    else this.#retire(slot);
    return this.#tokens.offer(healthy ? slot : null);
  }

  #retire(slot: WorkerSlot): void {
    this.#live.delete(slot);
    // Nothing waits on the old thread; a failure to terminate one that already exited is moot.
    slot.worker.terminate().catch(() => undefined);
  }

  #spawn(): Effect.Effect<WorkerSlot, JsSandboxUnavailableError> {
    return Effect.async<WorkerSlot, JsSandboxUnavailableError>((resume) => {
      let worker: Worker;
      try {
        worker = new Worker(QUICKJS_WORKER_SOURCE, {
          eval: true,
          workerData: {
            ...WORKER_SETTINGS,
            quickjsEntry: createRequire(import.meta.url).resolve("quickjs-emscripten"),
          },
          // The rule never reaches Node, but the worker need not inherit the host's environment or flags either.
          // (Its stdio stays the host's: piping it would keep the process alive even while the worker is unref'd.)
          env: {},
          execArgv: [],
          resourceLimits: WORKER_RESOURCE_LIMITS,
        });
      } catch (error) {
        resume(
          Effect.fail(
            new JsSandboxUnavailableError({ message: `cannot start a QuickJS worker: ${(error as Error).message}` }),
          ),
        );
        return;
      }
      const slot: WorkerSlot = { worker, exited: false };
      // Kept for the whole life of the worker: an 'error' event without a listener would crash the host.
      worker.on("error", (error) => {
        slot.error = error;
      });
      worker.on("exit", () => {
        slot.exited = true;
        this.#live.delete(slot);
      });
      const onMessage = (message: unknown) => {
        if (WorkerReplySchema.safeParse(message).data?.type !== "ready") return;
        stop();
        this.#live.add(slot);
        resume(Effect.succeed(slot));
      };
      const onExit = () => {
        stop();
        resume(
          Effect.fail(
            new JsSandboxUnavailableError({
              message: `the QuickJS worker exited before it was ready: ${deathNote(slot)}`,
            }),
          ),
        );
      };
      const stop = () => {
        worker.off("message", onMessage);
        worker.off("exit", onExit);
      };
      worker.on("message", onMessage);
      worker.on("exit", onExit);
      return Effect.sync(() => {
        stop();
        worker.terminate().catch(() => undefined);
      });
    }).pipe(
      Effect.timeoutFail({
        duration: READY_TIMEOUT,
        onTimeout: () =>
          new JsSandboxUnavailableError({
            message: `the QuickJS worker was not ready within ${Duration.format(READY_TIMEOUT)}`,
          }),
      }),
    );
  }

  #exchange(slot: WorkerSlot, job: SandboxJob): Effect.Effect<SandboxOutcome> {
    return Effect.async((resume) => {
      const onMessage = (message: unknown) => {
        stop();
        const reply = WorkerReplySchema.safeParse(message);
        if (reply.success && reply.data.type === "done") {
          resume(Effect.succeed({ type: "done", outcome: reply.data.outcome, durationMs: reply.data.durationMs }));
        } else {
          const problem = reply.success
            ? "not a result"
            : formatZodIssues(reply.error, { separator: "; " }).slice(0, 500);
          resume(
            Effect.succeed({
              type: "worker-died",
              message: `the worker sent a malformed reply: ${problem}`,
              outOfMemory: false,
            }),
          );
        }
      };
      const onExit = () => {
        stop();
        resume(
          Effect.succeed({
            type: "worker-died",
            message: deathNote(slot),
            outOfMemory: slot.error?.code === "ERR_WORKER_OUT_OF_MEMORY",
          }),
        );
      };
      const stop = () => {
        slot.worker.off("message", onMessage);
        slot.worker.off("exit", onExit);
      };
      slot.worker.on("message", onMessage);
      slot.worker.on("exit", onExit);
      slot.worker.postMessage(job);
      return Effect.sync(stop);
    });
  }
}

function deathNote(slot: WorkerSlot): string {
  return slot.error ? `${slot.error.name}: ${slot.error.message}` : "it exited";
}

let shared: JsSandbox | undefined;

/**
 * The process-wide sandbox `runJsRule` and `jsVerifier` use unless given one; created on first
 * use, and again after someone closed it.
 */
export function sharedJsSandbox(): JsSandbox {
  if (shared === undefined || shared.closed) shared = new JsSandbox();
  return shared;
}
