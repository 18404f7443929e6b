import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { ProviderConfigError, ProviderHttpError, ProviderNetworkError, ProviderResponseError } from "../errors.js";

/**
 * JSON POSTs over `node:http` / `node:https` with keep-alive connection pools: the transport of
 * the OpenAI-compatible providers. Node 20's `fetch` runs every request and response through
 * WHATWG streams and costs about 1 ms of CPU per call; at judge concurrency the client's CPU,
 * not the server, then sets the pace. This does the same exchange for a fraction of that.
 */

/**
 * One pool per protocol for the whole process, so every model talking to the same server shares
 * warm connections; the settings of Node's own global agents, but private to us. No `maxSockets`
 * cap: callers (the engine's permit pool) already bound the requests in flight, and a cap here
 * would queue requests out of sight while their timeouts tick. `lifo` reuses the most recently
 * used socket, letting surplus ones go idle. An idle socket closes after 4 s, or sooner when the
 * server announces a shorter `Keep-Alive: timeout`, so that we are not the one sending on a
 * connection the server is closing (servers commonly keep idle ones 5 s). The timeout never
 * touches a socket with a request in flight: Node destroys only free sockets on it.
 */
const IDLE_SOCKET_MS = 4_000;
const AGENTS = {
  "http:": new HttpAgent({ keepAlive: true, scheduling: "lifo", timeout: IDLE_SOCKET_MS }),
  "https:": new HttpsAgent({ keepAlive: true, scheduling: "lifo", timeout: IDLE_SOCKET_MS }),
} as const;

/**
 * The largest response body read by default: 16 MiB, far above any chat completion (n = 8
 * samples with top-5 logprobs over 1,000 tokens is under 1 MiB), far below what would hurt the
 * process. A server that sends more (a 1.5 GB reply once took a client to 3.2 GB) is cut off.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** The error for a body over the cap: not retryable, since the same server would send it again. */
export function responseTooLarge(url: string, limitBytes: number, declaredBytes?: number): ProviderResponseError {
  return new ProviderResponseError(
    `${url} sent a response ${
      declaredBytes === undefined ? "over" : `of ${declaredBytes} bytes, over`
    } the ${limitBytes}-byte cap (maxResponseBytes); it was not read`,
  );
}

/**
 * A fetch `Response`'s body as text, read only up to `limitBytes`: a declared `content-length`
 * over the cap is refused before reading, a stream that runs past it is cancelled there.
 */
export async function readCappedText(response: Response, url: string, limitBytes: number): Promise<string> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > limitBytes) {
    await response.body?.cancel();
    throw responseTooLarge(url, limitBytes, declared);
  }
  if (response.body === null) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limitBytes) {
      await reader.cancel();
      throw responseTooLarge(url, limitBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** What a POST got back: the parsed JSON and the text it was parsed from (for error messages). */
export interface JsonReply {
  readonly status: number;
  readonly value: unknown;
  readonly text: string;
}

/** One URL that takes JSON POSTs with fixed headers; see {@link jsonEndpoint}. */
export interface JsonEndpoint {
  readonly url: string;
  /**
   * POSTs `body` (JSON text). Resolves with the 2xx reply parsed; rejects with
   * `ProviderHttpError` (non-2xx, with `Retry-After`), `ProviderResponseError` (a 2xx body that
   * is not JSON), `ProviderNetworkError` (no complete answer), or the signal's reason once
   * `signal` aborts (the connection is destroyed, never returned to the pool half-read).
   */
  post(body: string, signal?: AbortSignal): Promise<JsonReply>;
}

/**
 * An endpoint at `url` (http or https) whose requests carry `headers` besides the JSON ones.
 * The URL is parsed once here, not per request.
 *
 * @example
 * const chat = jsonEndpoint("http://127.0.0.1:8000/v1/chat/completions", { authorization: "Bearer sk-…" });
 * const { value } = await chat.post(JSON.stringify({ model: "qwen", messages: [{ role: "user", content: "hi" }] }));
 */
export function jsonEndpoint(
  url: string,
  headers: Readonly<Record<string, string>> = {},
  /** Longest response body read (default {@link DEFAULT_MAX_RESPONSE_BYTES}). */
  maxResponseBytes: number = DEFAULT_MAX_RESPONSE_BYTES,
): JsonEndpoint {
  const parsed = new URL(url);
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new ProviderConfigError(`jsonEndpoint needs an http(s) URL, got ${JSON.stringify(url)}`);
  }
  const send = parsed.protocol === "https:" ? httpsRequest : httpRequest;
  const base: RequestOptions = {
    method: "POST",
    agent: AGENTS[parsed.protocol],
    protocol: parsed.protocol,
    // URL keeps IPv6 literals bracketed; the socket layer wants them bare.
    hostname: parsed.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: parsed.port === "" ? undefined : Number(parsed.port),
    path: `${parsed.pathname}${parsed.search}`,
    ...(parsed.username === ""
      ? {}
      : { auth: `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}` }),
  };
  const fixedHeaders = {
    "content-type": "application/json",
    accept: "application/json",
    // Compression buys nothing for replies of a few kB and costs CPU on both ends.
    "accept-encoding": "identity",
    "user-agent": "@rubric/verifiers",
    ...headers,
  };
  return {
    url,
    post: (body, signal) => post(url, send, base, fixedHeaders, body, signal, maxResponseBytes),
  };
}

function post(
  url: string,
  send: typeof httpRequest,
  base: RequestOptions,
  headers: Readonly<Record<string, string>>,
  body: string,
  signal: AbortSignal | undefined,
  maxResponseBytes: number,
): Promise<JsonReply> {
  // A promise settles once: whichever of answer, failure and abort comes first wins, the rest are no-ops.
  return new Promise<JsonReply>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const payload = Buffer.from(body, "utf8");
    const req = send({ ...base, headers: { ...headers, "content-length": payload.length } });
    const onAbort = (): void => {
      reject(signal!.reason);
      // Never back to the pool half-read.
      req.destroy();
    };
    const fail = (error: unknown): void => {
      signal?.removeEventListener("abort", onAbort);
      reject(signal?.aborted ? signal.reason : new ProviderNetworkError(url, error));
    };

    signal?.addEventListener("abort", onAbort, { once: true });
    req.on("error", fail);
    const tooLarge = (declared?: number): void => {
      signal?.removeEventListener("abort", onAbort);
      reject(responseTooLarge(url, maxResponseBytes, declared));
      // Never back to the pool half-read.
      req.destroy();
    };
    req.on("response", (res: IncomingMessage) => {
      const declared = Number(res.headers["content-length"] ?? Number.NaN);
      if (declared > maxResponseBytes) {
        tooLarge(declared);
        return;
      }
      const chunks: Buffer[] = [];
      let received = 0;
      res.on("data", (chunk: Buffer) => {
        received += chunk.length;
        if (received > maxResponseBytes) tooLarge();
        else chunks.push(chunk);
      });
      res.on("error", fail);
      res.on("end", () => {
        signal?.removeEventListener("abort", onAbort);
        try {
          resolve(readReply(url, res, (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString("utf8")));
        } catch (error) {
          reject(error);
        }
      });
      // A connection cut mid-body ends the stream without `end` (and, depending on timing, without `error`).
      res.on("close", () => {
        if (!res.complete) fail(new Error("the connection closed before the response was complete"));
      });
    });
    req.end(payload);
  });
}

function readReply(url: string, res: IncomingMessage, text: string): JsonReply {
  const status = res.statusCode ?? 0;
  if (status < 200 || status > 299) {
    throw new ProviderHttpError(url, status, text, parseRetryAfter(headerValue(res, "retry-after")));
  }
  try {
    return { status, value: JSON.parse(text) as unknown, text };
  } catch {
    const encoding = headerValue(res, "content-encoding");
    throw new ProviderResponseError(
      `${url} answered ${status} with a body that is not JSON (content-type ${headerValue(res, "content-type") ?? "none"}${
        encoding === null ? "" : `, content-encoding ${encoding}`
      })`,
      text,
    );
  }
}

function headerValue(res: IncomingMessage, name: string): string | null {
  const value = res.headers[name];
  return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
}

/**
 * `Retry-After` is either delta-seconds or an HTTP date (RFC 9110 §10.2.3).
 *
 * @example
 * parseRetryAfter("2"); // 2000
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const seconds = Number(value.trim());
  if (Number.isFinite(seconds)) return Math.max(0, Math.round(seconds * 1000));
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
