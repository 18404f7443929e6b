import { Data } from "effect";
import type { SidecarErrorCode } from "./wire/envelope.js";

/**
 * Why a sidecar request produced no result. Each failure is its own class, so Effect users can
 * `catchTag` one and promise users can test `instanceof`; every message names the method. Each
 * carries a stable toolkit `code` (`sidecar.*`, what `isRubricError` and the CLI's exit table read).
 */

/** The sidecar answered with an error reply (bad params, NaN loss, out of memory, …); it goes on serving. */
export class SidecarError extends Data.TaggedError("SidecarError")<{
  readonly method: string;
  /** The reply's own code, as the wire spells it (`invalid_params`, `out_of_memory`, …). */
  readonly fault: SidecarErrorCode;
  readonly message: string;
  /** The reply's `data`: `path` for invalid params, `traceback` for internal errors. */
  readonly data: Readonly<Record<string, unknown>>;
}> {
  /** `sidecar.reply.<fault>` in kebab case, e.g. `sidecar.reply.out-of-memory`. */
  readonly code = `sidecar.reply.${this.fault.replace(/_/g, "-")}` as const;
}

/** No reply within the request's time limit. The sidecar was asked to cancel it, and is restarted if it does not answer even that. */
export class SidecarTimeoutError extends Data.TaggedError("SidecarTimeoutError")<{
  readonly method: string;
  readonly timeoutMs: number;
  readonly message: string;
}> {
  readonly code = "sidecar.timeout";
}

/** The sidecar process died (a signal, a crash in native code, killed for memory) with requests in flight. The next request restarts it. */
export class SidecarCrashedError extends Data.TaggedError("SidecarCrashedError")<{
  readonly message: string;
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** The end of what the sidecar wrote to stderr. */
  readonly stderr: string;
}> {
  readonly code = "sidecar.crashed";
}

/** The sidecar could not be started: the interpreter is missing, torch is not installed, or it never said it was ready. */
export class SidecarStartError extends Data.TaggedError("SidecarStartError")<{
  readonly message: string;
  readonly stderr: string;
}> {
  readonly code = "sidecar.start";
}

/** The sidecar wrote something that is not the protocol (a reply that does not fit its method's schema). */
export class SidecarProtocolError extends Data.TaggedError("SidecarProtocolError")<{
  readonly method: string;
  readonly message: string;
}> {
  readonly code = "sidecar.protocol";
}

/** A request after `close()`, or one still waiting when `close()` was called. */
export class SidecarClosedError extends Data.TaggedError("SidecarClosedError")<{
  readonly message: string;
}> {
  readonly code = "sidecar.closed";
}

/**
 * The sidecar died after training its policy, and nothing could bring the trained policy back:
 * no checkpoint was saved since `policy.init`. Starting it over from the initial weights would
 * continue a run from a reset policy without saying so; the run must decide (save checkpoints,
 * or `policy.init` again knowingly).
 */
export class SidecarPolicyLostError extends Data.TaggedError("SidecarPolicyLostError")<{
  readonly message: string;
  /** Training steps taken since `policy.init` that were lost with the process. */
  readonly lostSteps: number;
}> {
  readonly code = "sidecar.policy-lost";
}

/**
 * The sidecar died holding state that nothing can rebuild exactly: a KL reference frozen after
 * training steps that died with it (a reference frozen at the restore point's weights is replayed
 * instead). Training on without it would drop the KL term unannounced; the restarted sidecar
 * holds neither the resource nor its reference, and the run must decide (load a checkpoint and
 * set the reference knowingly, or start over).
 */
export class SidecarStateLostError extends Data.TaggedError("SidecarStateLostError")<{
  readonly message: string;
  /** Which resource: the policy or μ. */
  readonly resource: "policy" | "μ";
  readonly state: "reference";
  /** Training steps since the last checkpoint that were lost with the process. */
  readonly lostSteps: number;
}> {
  readonly code = "sidecar.state-lost";
}

export type SidecarFailure =
  | SidecarError
  | SidecarTimeoutError
  | SidecarCrashedError
  | SidecarStartError
  | SidecarProtocolError
  | SidecarClosedError
  | SidecarPolicyLostError
  | SidecarStateLostError;
