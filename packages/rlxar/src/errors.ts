import { RubricError } from "@rubric/core";

/**
 * Every error `@rubric/rlxar` throws. Callers branch on `code` (stable across releases) or on
 * `instanceof`; the message names the offending task, field, line or file.
 */
export abstract class RlxarError extends RubricError {
  abstract override readonly code: `rlxar.${string}`;
}

/** An option, task or batch handed to a function here is not one it can use. */
export class RlxarInputError extends RlxarError {
  override readonly name = "RlxarInputError";
  readonly code = "rlxar.input";
  constructor(
    /** Where in the argument the fault is, e.g. `options.groupSize` or `episodes[3].steps`. */
    readonly path: string,
    detail: string,
  ) {
    super(`${path}: ${detail}`);
  }
}

/** A data, predictions or checkpoint file that does not read: every bad line or field, numbered. */
export class RlxarFileError extends RlxarError {
  override readonly name = "RlxarFileError";
  readonly code = "rlxar.file";
  constructor(
    readonly source: string,
    /** `line 3: context[2]: …` per fault. */
    readonly problems: readonly string[],
  ) {
    super(
      problems.length === 1
        ? `${source}: ${problems[0]}`
        : `${source}: ${problems.length} problems:\n${problems.map((p) => `  ${p}`).join("\n")}`,
    );
  }
}

/** `step` or `view` was called on an episode that has already ended. */
export class EpisodeDoneError extends RlxarError {
  override readonly name = "EpisodeDoneError";
  readonly code = "rlxar.episode-done";
  constructor(readonly taskId: string) {
    super(`episode of task ${JSON.stringify(taskId)} has ended; reset the environment for a new one`);
  }
}

/**
 * A policy's model call for one view failed (the provider's error, after its own retries, is the
 * `cause`): it names the policy, the task and the step, so one bad row of a batch is found at once.
 * Never turned into an empty action: an empty output would be scored as the agent's mistake.
 */
export class PolicyGenerateError extends RlxarError {
  override readonly name = "PolicyGenerateError";
  readonly code = "rlxar.policy-generate";
  constructor(
    readonly policy: string,
    readonly taskId: string,
    /** The step of the episode (turns already taken). */
    readonly step: number,
    detail: string,
    options?: { readonly cause?: unknown },
  ) {
    super(`policy ${policy}: task ${JSON.stringify(taskId)}, step ${step}: ${detail}`, options);
  }
}

/**
 * The inference server did not take a new adapter (`POST /v1/load_lora_adapter` failed or was
 * unreachable). The adapter it served before stays in service; the trainer's weights have moved
 * on, so the served policy is stale until a later publish succeeds.
 */
export class AdapterLoadError extends RlxarError {
  override readonly name = "AdapterLoadError";
  readonly code = "rlxar.adapter-load";
  constructor(
    readonly server: string,
    readonly adapter: string,
    readonly path: string,
    /** The HTTP status, or undefined when no answer came (network error, timeout). */
    readonly status: number | undefined,
    detail: string,
    /** The adapter still in service, if any. */
    readonly serving: string | undefined,
  ) {
    super(
      `${server}: loading adapter ${JSON.stringify(adapter)} from ${path} failed` +
        `${status === undefined ? "" : ` (HTTP ${status})`}: ${detail}; ` +
        (serving === undefined ? "no adapter is in service" : `${JSON.stringify(serving)} stays in service`),
    );
  }
}

/**
 * A decision handed back to a policy's `update` or `sft` is not one this policy made for that
 * view: no trace, or a trace whose candidate count or text differs from the view's candidates
 * now (another policy's decision, or candidate options changed since). Training on it would be
 * a silently wrong gradient.
 */
export class DecisionTraceError extends RlxarError {
  override readonly name = "DecisionTraceError";
  readonly code = "rlxar.decision-trace";
  constructor(
    /** Where the decision is, e.g. `samples[3].decision.trace`. */
    readonly path: string,
    detail: string,
  ) {
    super(`${path}: ${detail}`);
  }
}

/** A policy checkpoint written for another feature set or candidate options than this policy's. */
export class CheckpointMismatchError extends RlxarError {
  override readonly name = "CheckpointMismatchError";
  readonly code = "rlxar.checkpoint-mismatch";
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: ${detail}`);
  }
}
