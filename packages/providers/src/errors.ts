import { RubricError } from "@rubric/core";

/**
 * The failures a model provider can report, all under {@link ProviderError}. Each says whether
 * repeating the same call may succeed (`isRetryable`), which is what the retry layer and callers
 * decide on: HTTP 429/5xx, timeouts and network errors are transient; any other 4xx, a malformed
 * response, a bad spec or configuration would fail the same way again.
 */

/** Every provider failure: a stable `code` and whether the same call is worth repeating. */
export abstract class ProviderError extends RubricError {
  abstract override readonly code: `provider.${string}`;
  abstract readonly isRetryable: boolean;
}

/** How much of a response body an error message quotes; bodies can be megabytes of HTML. */
const BODY_EXCERPT_CHARS = 500;

export function excerpt(text: string): string {
  return text.length > BODY_EXCERPT_CHARS ? `${text.slice(0, BODY_EXCERPT_CHARS)}…` : text;
}

/** The server answered with a non-2xx status. */
export class ProviderHttpError extends ProviderError {
  override readonly name = "ProviderHttpError";
  readonly code = "provider.http";
  /** Rate limits (429) and server errors (5xx) are transient; any other status is not. */
  readonly isRetryable: boolean;
  constructor(
    readonly url: string,
    readonly status: number,
    /** The raw response body (not truncated; the message quotes an excerpt). */
    readonly body: string,
    /** What `Retry-After` asked for, in milliseconds, when the server sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(
      `${url} answered ${status}${retryAfterMs === undefined ? "" : ` (Retry-After ${retryAfterMs} ms)`}: ${
        excerpt(body) || "(empty body)"
      }`,
    );
    this.isRetryable = status === 429 || status >= 500;
  }
}

/** One attempt took longer than its budget and was aborted. */
export class ProviderTimeoutError extends ProviderError {
  override readonly name = "ProviderTimeoutError";
  readonly code = "provider.timeout";
  readonly isRetryable = true;
  constructor(
    readonly timeoutMs: number,
    /** 1-based attempt number that timed out, when a retry layer ran it. */
    readonly attempt?: number,
    readonly maxAttempts?: number,
  ) {
    super(
      `model call timed out after ${timeoutMs} ms${
        attempt === undefined ? "" : ` (attempt ${attempt} of ${maxAttempts ?? "?"})`
      }`,
    );
  }
}

/**
 * The whole call, retries and backoff included, ran past its budget (`deadlineMs`); the attempt in
 * flight was aborted. Not retryable: the budget is the caller's answer to "how long may this take".
 */
export class ProviderDeadlineError extends ProviderError {
  override readonly name = "ProviderDeadlineError";
  readonly code = "provider.deadline";
  readonly isRetryable = false;
  constructor(
    readonly deadlineMs: number,
    /** Attempts started before the deadline. */
    readonly attempts: number,
  ) {
    super(`model call ran past its ${deadlineMs} ms deadline after ${attempts} attempt(s) (deadlineMs)`);
  }
}

/** The request never got an HTTP answer: connection refused, reset, DNS failure. */
export class ProviderNetworkError extends ProviderError {
  override readonly name = "ProviderNetworkError";
  readonly code = "provider.network";
  readonly isRetryable = true;
  constructor(
    readonly url: string,
    override readonly cause: unknown,
  ) {
    super(`${url} failed before a response: ${describeCause(cause)}`);
  }
}

/** The server answered 2xx but the body is not a chat completion we can read. */
export class ProviderResponseError extends ProviderError {
  override readonly name = "ProviderResponseError";
  readonly code = "provider.response";
  readonly isRetryable = false;
  constructor(
    message: string,
    /** The offending body (or the part of it that was read). */
    readonly body?: string,
  ) {
    super(body === undefined ? message : `${message}; body: ${excerpt(body)}`);
  }
}

/** A provider spec string (`hf:…`, `llama-cpp:…`, `openai-compatible:…`) could not be parsed. */
export class ProviderSpecError extends ProviderError {
  override readonly name = "ProviderSpecError";
  readonly code = "provider.spec";
  readonly isRetryable = false;
  constructor(
    readonly spec: string,
    reason: string,
  ) {
    super(
      `invalid provider spec ${JSON.stringify(spec)}: ${reason}. Accepted forms: ` +
        "llama-cpp:<path.gguf>, hf:<model>, hf:<model>@<provider>, openai-compatible:<baseUrl>#<model>",
    );
  }
}

/** The provider was set up wrongly: a missing API-key variable, conflicting options, a missing model file. */
export class ProviderConfigError extends ProviderError {
  override readonly name = "ProviderConfigError";
  readonly code = "provider.config";
  readonly isRetryable = false;
}

/** This provider cannot serve this particular request (e.g. a JSON schema its grammar engine rejects, a prompt longer than the context). */
export class ProviderRequestError extends ProviderError {
  override readonly name = "ProviderRequestError";
  readonly code = "provider.request";
  readonly isRetryable = false;
}

/**
 * A check before a run found the provider unusable: a server that cannot be reached or refuses
 * the key, a model file that is not GGUF (`preflightProvider`).
 */
export class ProviderPreflightError extends ProviderError {
  override readonly name = "ProviderPreflightError";
  readonly code = "provider.preflight";
  readonly isRetryable = false;
  constructor(
    readonly spec: string,
    readonly reason: string,
  ) {
    super(`${spec}: ${reason}`);
  }
}

export function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  // undici hides the useful part (ECONNREFUSED, "other side closed") one level down.
  const inner = (cause as { cause?: unknown }).cause;
  return inner instanceof Error ? `${cause.message} (${inner.message})` : cause.message;
}
