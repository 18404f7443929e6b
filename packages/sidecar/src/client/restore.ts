import type { ParamsOf, SidecarMethod } from "../wire/methods.js";

/** The calls that build, checkpoint, train and set the state of one resource the sidecar holds. */
export interface ResourceCalls {
  readonly name: "policy" | "μ";
  readonly init: "policy.init" | "mu.init";
  readonly save: "checkpoint.save" | "mu.save";
  readonly load: "checkpoint.load" | "mu.load";
  /** Calls that change the weights (and the optimiser's moments). */
  readonly steps: readonly SidecarMethod[];
  readonly setReference: "policy.set_reference" | "mu.set_reference";
  readonly resetOptimizer?: "policy.reset_optimizer";
}

export const POLICY_CALLS: ResourceCalls = {
  name: "policy",
  init: "policy.init",
  save: "checkpoint.save",
  load: "checkpoint.load",
  steps: ["policy.step", "policy.sft_step"],
  setReference: "policy.set_reference",
  resetOptimizer: "policy.reset_optimizer",
};

export const MU_CALLS: ResourceCalls = {
  name: "μ",
  init: "mu.init",
  save: "mu.save",
  load: "mu.load",
  steps: ["mu.step", "mu.sft", "mu.pretrain", "mu.embed"],
  setReference: "mu.set_reference",
};

/** One call a restore sends to a fresh sidecar. */
export interface RestoreCall {
  readonly method: SidecarMethod;
  readonly params: object;
}

/** What a fresh sidecar must be sent to hold the resource again, or why it cannot. */
export type RestorePlan =
  | { readonly kind: "nothing" }
  | {
      readonly kind: "restore";
      readonly from: "init" | "checkpoint";
      readonly checkpoint?: string;
      readonly calls: readonly RestoreCall[];
      /** Training steps taken after the restore point: gone with the crashed process. */
      readonly lostSteps: number;
      /** The state calls replayed after the restore point (`policy.set_reference`, …). */
      readonly replayed: readonly SidecarMethod[];
    }
  /** Weights or a reference that nothing can rebuild: the resource is dropped, never reset. */
  | {
      readonly kind: "lost";
      readonly state: "weights" | "reference";
      readonly lostSteps: number;
      readonly why: string;
    };

/**
 * Where a resource can be rebuilt from after a crash, and what happened to it since: its
 * `init` params or the checkpoint it was last saved to or loaded from, the training steps taken
 * after that, and the state calls made after it. A checkpoint holds weights, optimiser and
 * reference, so state set before it travels inside it; state set after it is replayed, and only
 * where replaying is exact: a reference frozen before any later step is the restore point's own
 * weights, so `set_reference` after the restore gives the same reference, while one frozen after
 * steps that died with the process cannot be rebuilt, and the restore says so instead of
 * training on without it. Resetting the optimiser is exact whenever it happened.
 */
type Origin =
  | { readonly kind: "init"; readonly params: object }
  | { readonly kind: "checkpoint"; readonly dir: string };

export class RestorePoint {
  #origin: Origin | undefined;
  #steps = 0;
  /** The reference frozen since the origin: at the origin's weights (replayable), or after steps (not). */
  #reference: "none" | "at-origin" | "after-steps" = "none";
  #reset = false;

  constructor(readonly calls: ResourceCalls) {}

  /** The checkpoint directory the resource would be restored from, if its restore point is one. */
  get checkpoint(): string | undefined {
    return this.#origin?.kind === "checkpoint" ? this.#origin.dir : undefined;
  }

  /** Training steps since the restore point. */
  get stepsSince(): number {
    return this.#steps;
  }

  /** Whether this method concerns the resource (so the client remembers it). */
  owns(method: SidecarMethod): boolean {
    const c = this.calls;
    return (
      method === c.init ||
      method === c.save ||
      method === c.load ||
      method === c.setReference ||
      method === c.resetOptimizer ||
      c.steps.includes(method)
    );
  }

  /** Records a call that succeeded. */
  remember<M extends SidecarMethod>(method: M, params: ParamsOf<M>): void {
    const c = this.calls;
    if (method === c.init) this.#start({ kind: "init", params });
    else if (method === c.save || method === c.load)
      this.#start({ kind: "checkpoint", dir: (params as { dir: string }).dir });
    else if (method === c.setReference) this.#reference = this.#steps === 0 ? "at-origin" : "after-steps";
    else if (method === c.resetOptimizer) this.#reset = true;
    else if (c.steps.includes(method)) this.#steps++;
  }

  /** What to send a fresh sidecar; afterwards the restored state is the new restore point's. */
  plan(): RestorePlan {
    const origin = this.#origin;
    const lostSteps = this.#steps;
    if (origin === undefined) return { kind: "nothing" };
    if (origin.kind === "init" && lostSteps > 0) {
      this.#forget();
      return {
        kind: "lost",
        state: "weights",
        lostSteps,
        why: `the ${this.calls.name} was trained for ${lostSteps} step(s) with no checkpoint since ${this.calls.init}`,
      };
    }
    if (this.#reference === "after-steps") {
      this.#forget();
      return {
        kind: "lost",
        state: "reference",
        lostSteps,
        why: `the ${this.calls.name}'s KL reference (${this.calls.setReference}) was frozen after ${lostSteps === 1 ? "a training step" : "training steps"} taken since the last checkpoint, and those weights died with the sidecar`,
      };
    }
    const calls: RestoreCall[] =
      origin.kind === "init"
        ? [{ method: this.calls.init, params: origin.params }]
        : [{ method: this.calls.load, params: { dir: origin.dir } }];
    const replayed: SidecarMethod[] = [];
    if (this.#reference === "at-origin") replayed.push(this.calls.setReference);
    if (this.#reset && this.calls.resetOptimizer !== undefined) replayed.push(this.calls.resetOptimizer);
    for (const method of replayed) calls.push({ method, params: {} });
    // The restored state is now the restore point's: its lost steps are reported once.
    this.#steps = 0;
    return {
      kind: "restore",
      from: origin.kind,
      checkpoint: origin.kind === "checkpoint" ? origin.dir : undefined,
      calls,
      lostSteps,
      replayed,
    };
  }

  #start(origin: Origin): void {
    this.#origin = origin;
    this.#steps = 0;
    this.#reference = "none";
    this.#reset = false;
  }

  #forget(): void {
    this.#origin = undefined;
    this.#steps = 0;
    this.#reference = "none";
    this.#reset = false;
  }
}
