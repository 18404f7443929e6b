/**
 * The failures a model provider can report. Each is its own class so that the retry layer (and
 * callers) can decide by type: HTTP 429/5xx, timeouts and network errors are transient; a 4xx, a
 * malformed response, a bad spec or configuration are not.
 */

/** How much of a response body an error message quotes; bodies can be megabytes of HTML. */
const BODY_EXCERPT_CHARS = 500;

export function excerpt(text: string): string {
  return text.length > BODY_EXCERPT_CHARS ? `${text.slice(0, BODY_EXCERPT_CHARS)}…` : text;
}

/** The server answered with a non-2xx status. */
export class ProviderHttpError extends Error {
  override readonly name = "ProviderHttpError";
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
  }
}

/** One attempt took longer than its budget and was aborted. */
export class ProviderTimeoutError extends Error {
  override readonly name = "ProviderTimeoutError";
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

/** The request never got an HTTP answer: connection refused, reset, DNS failure. */
export class ProviderNetworkError extends Error {
  override readonly name = "ProviderNetworkError";
  constructor(
    readonly url: string,
    override readonly cause: unknown,
  ) {
    super(`${url} failed before a response: ${describeCause(cause)}`);
  }
}

/** The server answered 2xx but the body is not a chat completion we can read. */
export class ProviderResponseError extends Error {
  override readonly name = "ProviderResponseError";
  constructor(
    message: string,
    /** The offending body (or the part of it that was read). */
    readonly body?: string,
  ) {
    super(body === undefined ? message : `${message}; body: ${excerpt(body)}`);
  }
}

/** A provider spec string (`hf:…`, `llama-cpp:…`, `openai-compatible:…`) could not be parsed. */
export class ProviderSpecError extends Error {
  override readonly name = "ProviderSpecError";
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
export class ProviderConfigError extends Error {
  override readonly name = "ProviderConfigError";
}

/** This provider cannot serve this particular request (e.g. a JSON schema its grammar engine rejects, a prompt longer than the context). */
export class ProviderRequestError extends Error {
  override readonly name = "ProviderRequestError";
}

function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  // undici hides the useful part (ECONNREFUSED, "other side closed") one level down.
  const inner = (cause as { cause?: unknown }).cause;
  return inner instanceof Error ? `${cause.message} (${inner.message})` : cause.message;
}
