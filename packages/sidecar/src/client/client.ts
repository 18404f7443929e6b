import { existsSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runEffect } from "@rubric/core/effect";
import { Effect } from "effect";
import {
  SidecarClosedError,
  SidecarCrashedError,
  SidecarPolicyLostError,
  SidecarStartError,
  SidecarStateLostError,
  type SidecarFailure,
} from "../errors.js";
import { SidecarProcess, type SidecarLaunch } from "../process/process.js";
import type { TrainingMetrics } from "../wire/envelope.js";
import type { ParamsOf, ResultOf, SidecarMethod } from "../wire/methods.js";
import { MU_CALLS, POLICY_CALLS, type RestorePlan, RestorePoint } from "./restore.js";

export interface SidecarOptions {
  /** The Python interpreter. Default `/usr/bin/python3` when it exists (Debian's, where python3-torch installs), else `python3` on PATH. */
  readonly python?: string;
  /**
   * The folder that holds the `rubric_trainer` package, put first on PYTHONPATH. Default: this
   * repository's `python/rubric-trainer/src` when it is found above this module, else nothing
   * (the package must then be installed in the interpreter: `pip install python/rubric-trainer`).
   */
  readonly trainerPath?: string;
  /**
   * Run under torchrun (`python -m torch.distributed.run`) with DDP over `nprocPerNode` processes.
   * `args` are torchrun's rendezvous flags, `["--standalone"]` (one machine) by default; for several
   * machines use a static rendezvous so that global rank 0, which speaks the protocol, is here:
   * `["--nnodes", "2", "--node_rank", "0", "--master_addr", host, "--master_port", "29500"]`.
   */
  readonly torchrun?: { readonly nprocPerNode: number; readonly args?: readonly string[] };
  /** torch's intra-op threads in the sidecar (default: torch's own choice). */
  readonly threads?: number;
  /** Extra environment for the sidecar (CUDA_VISIBLE_DEVICES, …). */
  readonly env?: Readonly<Record<string, string>>;
  /** Default 120 000: importing torch is slow on a busy machine. */
  readonly startupTimeoutMs?: number;
  /** Default time limit of a request, overridable per call. Default 600 000. */
  readonly requestTimeoutMs?: number;
  /** After a timeout or abort, how long the sidecar may take to answer the cancel before it is killed (and restarted on the next call). Default 30 000. */
  readonly cancelGraceMs?: number;
  /**
   * The longest line read from the sidecar (default 256 MiB): a longer one fails the call it
   * answers with `SidecarProtocolError` instead of being buffered whole.
   */
  readonly maxLineBytes?: number;
  /** How long `close()` waits for a clean exit before SIGTERM, then SIGKILL. Default 10 000. */
  readonly shutdownGraceMs?: number;
  /** Restarts after crashes before giving up. Default 3. */
  readonly maxRestarts?: number;
  /** Called with each training step's metrics as the sidecar streams them. */
  readonly onMetrics?: (metrics: TrainingMetrics) => void;
  /** Each line the sidecar writes to stderr (its logs), and the client's own notes. Default: dropped (a crash error carries the tail). */
  readonly onLog?: (line: string) => void;
  /**
   * Called after a crashed sidecar was restarted and its policy restored: from the last
   * checkpoint (`lostSteps` training steps taken after it are gone, and said so in the log too),
   * or from `policy.init` when no step had been taken since, then the state calls made since
   * that can be replayed exactly (`replayed`: a KL reference frozen at those weights, an
   * optimiser reset). A trained policy with no checkpoint is not reset to its initial weights:
   * the call fails with `SidecarPolicyLostError`; a reference frozen after lost steps fails it
   * with `SidecarStateLostError`.
   */
  readonly onRestart?: (restart: {
    readonly attempt: number;
    readonly restoredFrom: "checkpoint" | "init" | "nothing";
    readonly checkpoint?: string;
    readonly lostSteps: number;
    readonly replayed: readonly SidecarMethod[];
  }) => void;
}

export interface CallOptions {
  readonly timeoutMs?: number;
  /** Aborting fails the call with the signal's reason and asks the sidecar to cancel the request. */
  readonly signal?: AbortSignal;
}

/** The folder to put on PYTHONPATH: this repository's python/rubric-trainer/src, found by walking up from this module. */
export function defaultTrainerPath(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, "python", "rubric-trainer", "src");
    if (existsSync(join(candidate, "rubric_trainer", "__init__.py"))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** `/usr/bin/python3` when it exists (Debian's python3-torch lives there), else `python3` from PATH. */
export function defaultPython(): string {
  return existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

/** The sidecar's command line for these options. */
export function sidecarCommand(options: SidecarOptions): { command: string; args: string[] } {
  const serve = [
    "-m",
    "rubric_trainer",
    "serve",
    ...(options.threads === undefined ? [] : ["--threads", String(options.threads)]),
  ];
  const python = options.python ?? defaultPython();
  if (options.torchrun === undefined) return { command: python, args: serve };
  const { nprocPerNode, args = ["--standalone"] } = options.torchrun;
  if (!Number.isInteger(nprocPerNode) || nprocPerNode < 1)
    // It cannot start with such a launch: the start failure, named before any process is spawned.
    throw new SidecarStartError({
      message: `options.torchrun.nprocPerNode must be an integer ≥ 1, got ${nprocPerNode}`,
      stderr: "",
    });
  // --redirects/--tee 2: torch 1.13's parser of the default "0" breaks on Python 3.11 (its enum
  // iteration skips the zero flag); 2 sends the ranks' stderr to files and on to this stderr.
  return {
    command: python,
    args: [
      "-m",
      "torch.distributed.run",
      ...args,
      "--nproc_per_node",
      String(nprocPerNode),
      "--redirects",
      "2",
      "--tee",
      "2",
      ...serve,
    ],
  };
}

/**
 * A client of the Python training sidecar (python/rubric-trainer): starts it, sends requests
 * with time limits and cancellation, streams its training metrics, and restarts it after a crash
 * with the policy of the last checkpoint it saved or loaded (or, before any, the last
 * `policy.init`), and ARCO's μ the same way (its last `mu.save`/`mu.load`, or `mu.init` when it
 * was never trained). Every method has an Effect form and a promise form.
 *
 * @example
 * const client = await SidecarClient.start({ threads: 1 });
 * await client.request("policy.init", { model: { kind: "tiny", vocab_size: 16 }, seed: 1 });
 * const { sequences } = await client.request("policy.sample", { prompt: [0], n: 4, seed: 7 });
 * await client.close();
 */
export class SidecarClient {
  readonly #options: SidecarOptions;
  readonly #launch: SidecarLaunch;
  readonly #lock = Effect.unsafeMakeSemaphore(1);
  #process: SidecarProcess | undefined;
  #restarts = 0;
  /** One restore point per resource the sidecar holds: the policy's and μ's, kept apart. */
  readonly #policy = new RestorePoint(POLICY_CALLS);
  readonly #mu = new RestorePoint(MU_CALLS);
  #closed = false;

  private constructor(options: SidecarOptions) {
    this.#options = options;
    const { command, args } = sidecarCommand(options);
    const trainerPath = options.trainerPath ?? defaultTrainerPath();
    const pythonPath = [trainerPath, process.env.PYTHONPATH].filter((p): p is string => Boolean(p)).join(delimiter);
    this.#launch = {
      command,
      args,
      // A key set to undefined would still override a PYTHONPATH from the caller or the parent process.
      env: { ...process.env, ...options.env, ...(pythonPath ? { PYTHONPATH: pythonPath } : {}), PYTHONUNBUFFERED: "1" },
      startupTimeoutMs: options.startupTimeoutMs ?? 120_000,
      cancelGraceMs: options.cancelGraceMs ?? 30_000,
      maxLineBytes: options.maxLineBytes ?? 256 * 1024 * 1024,
      onNotification: (notification) => {
        if (notification.method === "metrics") options.onMetrics?.(notification.params);
      },
      onLog: options.onLog ?? (() => undefined),
    };
  }

  /** Starts a sidecar and waits until it is ready. */
  static startEffect(options: SidecarOptions = {}): Effect.Effect<SidecarClient, SidecarFailure> {
    return Effect.suspend(() => {
      const client = new SidecarClient(options);
      return Effect.as(client.#ensureProcess(), client);
    });
  }

  /** {@link SidecarClient.startEffect} as a promise. */
  static start(options: SidecarOptions = {}, signal?: AbortSignal): Promise<SidecarClient> {
    return runSidecarEffect(SidecarClient.startEffect(options), signal);
  }

  /** The process id of the running sidecar (torchrun's, under torchrun); undefined between a crash and the restart. */
  get pid(): number | undefined {
    return this.#process?.alive ? this.#process.pid : undefined;
  }

  /** How many times the sidecar has been restarted after a crash. */
  get restarts(): number {
    return this.#restarts;
  }

  /** The checkpoint a restart restores: the last one saved or loaded since the last policy.init. */
  get checkpoint(): string | undefined {
    return this.#policy.checkpoint;
  }

  /** One request, typed by method; fails with a {@link SidecarFailure}. */
  requestEffect<M extends SidecarMethod>(
    method: M,
    params: ParamsOf<M>,
    options: { readonly timeoutMs?: number } = {},
  ): Effect.Effect<ResultOf<M>, SidecarFailure> {
    const timeoutMs = options.timeoutMs ?? this.#options.requestTimeoutMs ?? 600_000;
    return this.#ensureProcess().pipe(
      Effect.flatMap((sidecar) => sidecar.request(method, params, timeoutMs)),
      Effect.tap(() => this.#remember(method, params)),
    );
  }

  /** {@link SidecarClient.requestEffect} as a promise; rejects with the failure, or the signal's reason when aborted. */
  request<M extends SidecarMethod>(method: M, params: ParamsOf<M>, options: CallOptions = {}): Promise<ResultOf<M>> {
    return runSidecarEffect(
      this.requestEffect(method, params, options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      options.signal,
    );
  }

  /** Shuts the sidecar down (waiting for it to exit, killing it if it will not). Safe to call twice. */
  close(): Promise<void> {
    this.#closed = true;
    // Under the start lock: a sidecar being started (or restarted) right now is shut down too.
    return Effect.runPromise(
      this.#lock.withPermits(1)(
        Effect.suspend(() =>
          this.#process === undefined ? Effect.void : this.#process.shutdown(this.#options.shutdownGraceMs ?? 10_000),
        ),
      ),
    );
  }

  #remember<M extends SidecarMethod>(method: M, params: ParamsOf<M>): Effect.Effect<void> {
    return Effect.sync(() => {
      // policy.init starts a new restore point: older checkpoints are another model's.
      for (const point of [this.#policy, this.#mu]) if (point.owns(method)) point.remember(method, params);
    });
  }

  /** The live sidecar: the current one, or a new one (restoring the policy) after a crash. One caller at a time starts it. */
  #ensureProcess(): Effect.Effect<SidecarProcess, SidecarFailure> {
    return this.#lock.withPermits(1)(
      Effect.gen(this, function* () {
        if (this.#closed) return yield* new SidecarClosedError({ message: "the sidecar client was closed" });
        if (this.#process?.alive) return this.#process;
        const previous = this.#process;
        if (previous !== undefined) {
          if (this.#restarts >= (this.#options.maxRestarts ?? 3))
            return yield* new SidecarCrashedError({
              message: `the sidecar crashed again after ${this.#restarts} restarts; giving up`,
              exitCode: null,
              signal: null,
              stderr: previous.stderrTail,
            });
          this.#restarts++;
          this.#launch.onLog(`rubric-sidecar: the sidecar died; restarting it (restart ${this.#restarts})`);
        }
        const sidecar = yield* SidecarProcess.start(this.#launch);
        this.#process = sidecar;
        if (previous !== undefined) {
          yield* this.#restoreMu(sidecar);
          yield* this.#restore(sidecar);
        }
        return sidecar;
      }),
    );
  }

  /**
   * μ after a restart, before the policy (whose restore may fail the call): from its checkpoint, or
   * re-initialised when it was never trained, then its reference when that can be rebuilt. A
   * trained μ with no checkpoint is not reset to its initial weights: the new sidecar holds no μ
   * (`mu.*` answers `no_policy`) and the log says why; a reference that cannot be rebuilt fails
   * the call.
   */
  #restoreMu(sidecar: SidecarProcess): Effect.Effect<void, SidecarFailure> {
    const plan = this.#mu.plan();
    if (plan.kind === "nothing") return Effect.void;
    if (plan.kind === "lost" && plan.state === "weights")
      return Effect.sync(() =>
        this.#launch.onLog(
          `rubric-sidecar: μ was trained for ${plan.lostSteps} step(s) with no checkpoint since mu.init and is lost; the new sidecar holds no μ (save with mu.save to survive a crash)`,
        ),
      );
    if (plan.kind === "lost") return Effect.fail(stateLost("μ", plan));
    if (plan.lostSteps > 0)
      this.#launch.onLog(
        `rubric-sidecar: restored μ from ${plan.checkpoint}; the ${plan.lostSteps} μ training step(s) taken after it were lost with the crashed sidecar`,
      );
    return this.#send(sidecar, plan);
  }

  #restore(sidecar: SidecarProcess): Effect.Effect<void, SidecarFailure> {
    const attempt = this.#restarts;
    const plan = this.#policy.plan();
    if (plan.kind === "nothing")
      return Effect.sync(() =>
        this.#options.onRestart?.({ attempt, restoredFrom: "nothing", lostSteps: 0, replayed: [] }),
      );
    if (plan.kind === "lost") {
      // Re-initialising would hand back the initial weights as if nothing had happened.
      if (plan.state === "weights")
        return Effect.fail(
          new SidecarPolicyLostError({
            message: `the sidecar crashed after ${plan.lostSteps} training step(s) with no checkpoint since policy.init; the trained policy is lost. The new sidecar holds no policy: save checkpoints (checkpoint.save) to survive a crash, or call policy.init again to start over`,
            lostSteps: plan.lostSteps,
          }),
        );
      return Effect.fail(stateLost("policy", plan));
    }
    if (plan.lostSteps > 0)
      this.#launch.onLog(
        `rubric-sidecar: restored ${plan.checkpoint}; the ${plan.lostSteps} training step(s) taken after it were lost with the crashed sidecar`,
      );
    return this.#send(sidecar, plan).pipe(
      Effect.andThen(() =>
        this.#options.onRestart?.({
          attempt,
          restoredFrom: plan.from,
          checkpoint: plan.checkpoint,
          lostSteps: plan.lostSteps,
          replayed: plan.replayed,
        }),
      ),
    );
  }

  /** The calls of a restore plan, in order, on the fresh sidecar. */
  #send(sidecar: SidecarProcess, plan: Extract<RestorePlan, { kind: "restore" }>): Effect.Effect<void, SidecarFailure> {
    const timeoutMs = this.#options.requestTimeoutMs ?? 600_000;
    return Effect.forEach(plan.calls, (call) => sidecar.request(call.method, call.params as never, timeoutMs), {
      discard: true,
    });
  }
}

function stateLost(resource: "policy" | "μ", plan: Extract<RestorePlan, { kind: "lost" }>): SidecarStateLostError {
  const load = resource === "policy" ? "checkpoint.load" : "mu.load";
  return new SidecarStateLostError({
    message: `the sidecar crashed and ${plan.why}; the new sidecar holds no ${resource}. Load a checkpoint (${load}) and set the reference again knowingly, or start over`,
    resource,
    state: "reference",
    lostSteps: plan.lostSteps,
  });
}

/**
 * Runs a sidecar Effect as a promise: resolves with its value, rejects with its failure, or with the
 * signal's reason when aborted. Kept as a typed alias of core's `runEffect` for callers who imported it.
 */
export async function runSidecarEffect<A>(effect: Effect.Effect<A, SidecarFailure>, signal?: AbortSignal): Promise<A> {
  return runEffect(effect, signal);
}
