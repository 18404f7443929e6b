/**
 * A real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions wire format
 * (`POST /v1/chat/completions`, no streaming), so tests run the real provider clients against
 * it instead of mocking them. It records every request and answers from a scripted queue of
 * replies, then from a handler function, with helpers for the faults real servers produce.
 *
 * @example
 * const server = await startOpenAIChatServer({
 *   replies: [chatReply.rateLimited(1), chatReply.json({ score: 3 })],
 * });
 * const model = openAICompatible({ baseUrl: server.url, model: "m", apiKeyEnv: false });
 * await model.generate({ messages: [{ role: "user", content: "hi" }] });
 * server.requests[1]?.body; // what the client sent the second time
 * await server.close();
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One token's log-probability, with its alternatives, as a test writes it. */
export interface ScriptedLogprob {
  readonly token: string;
  readonly logprob: number;
  readonly top?: readonly { readonly token: string; readonly logprob: number }[];
}

export interface ScriptedChoice {
  readonly content: string;
  /** Default `stop`. */
  readonly finishReason?: string;
  /** Rendered in OpenAI's `choices[].logprobs.content[]` format. */
  readonly logprobs?: readonly ScriptedLogprob[];
}

interface ReplyTiming {
  /** Wait this long before answering (a slow server). */
  readonly delayMs?: number;
}

export type ChatServerReply =
  | (ReplyTiming & {
      readonly kind: "completion";
      readonly choices: readonly ScriptedChoice[];
      /** Default: the request's `model`, else `test-model`. */
      readonly model?: string;
      /** Default: a rough count from the characters sent and returned. */
      readonly usage?: { readonly promptTokens: number; readonly completionTokens: number } | null;
    })
  | (ReplyTiming & {
      readonly kind: "raw";
      readonly status: number;
      readonly body: string;
      readonly contentType?: string;
      readonly headers?: Readonly<Record<string, string>>;
    })
  /**
   * The body's bytes in `pieces` writes `gapMs` apart (chunked transfer encoding, pieces cut
   * regardless of UTF-8 boundaries); with `cut`, the socket is destroyed instead of ending the
   * response (a connection lost mid-body).
   */
  | (ReplyTiming & {
      readonly kind: "chunked";
      readonly status: number;
      readonly body: string;
      readonly pieces: number;
      readonly gapMs: number;
      readonly cut?: boolean;
    })
  /** Never answers; the connection stays open until the client gives up or the server closes. */
  | { readonly kind: "hang" }
  /** Destroys the socket without an HTTP answer (a network error for the client). */
  | { readonly kind: "drop-connection" };

/** A request as the server received it. */
export interface RecordedRequest {
  /** 0-based arrival order. */
  readonly index: number;
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The client's port: requests sharing one are on one (kept-alive) connection. */
  readonly remotePort: number | undefined;
  readonly rawBody: string;
  /** The parsed JSON body, or `undefined` when it was not JSON. */
  readonly body: ChatRequestBody | undefined;
  /** `performance.now()` at arrival, to measure waits between attempts. */
  readonly receivedAt: number;
  /**
   * Settles with `performance.now()` when the exchange ends: the answer was sent, or the client
   * hung up (an aborted request closes its connection while its reply still hangs).
   */
  readonly closed: Promise<number>;
}

/** The request fields tests look at most; everything the client sent is there. */
export interface ChatRequestBody {
  readonly model?: string;
  readonly messages?: readonly { readonly role: string; readonly content: string }[];
  readonly n?: number;
  readonly seed?: number;
  readonly max_tokens?: number;
  readonly temperature?: number;
  readonly logprobs?: boolean;
  readonly top_logprobs?: number;
  readonly response_format?: {
    readonly type: string;
    readonly json_schema?: { readonly name: string; readonly schema: unknown; readonly strict?: boolean };
  };
  readonly [field: string]: unknown;
}

export type ChatServerHandler = (request: RecordedRequest) => ChatServerReply | Promise<ChatServerReply>;

export interface OpenAIChatServerOptions {
  /** Answers for the first requests, in order. */
  readonly replies?: readonly ChatServerReply[];
  /** Answers once the queue is empty. Without one, an empty queue answers 500 with a message saying so. */
  readonly handler?: ChatServerHandler;
  /** Latency added to every reply, on top of a reply's own `delayMs`. */
  readonly latencyMs?: number;
  /**
   * Model ids `GET /v1/models` lists, in OpenAI's format (what a preflight probes); without them
   * that route answers 404, as a server that lists no models does.
   */
  readonly models?: readonly string[];
  /** A key every request must carry as `Authorization: Bearer <key>`; others get 401, as OpenAI and `vllm --api-key` answer. */
  readonly requireKey?: string;
}

export interface OpenAIChatServer {
  /** `http://127.0.0.1:<port>`: pass as `baseUrl` / `endpointUrl`. */
  readonly url: string;
  /** Every request so far, in arrival order (live view). */
  readonly requests: readonly RecordedRequest[];
  /** Number of requests received so far. */
  readonly requestCount: number;
  /** The chat-completion requests alone (the model calls; a preflight's `GET /v1/models` is not one), live view. */
  readonly chatRequests: readonly RecordedRequest[];
  /** Adds replies to the end of the queue. */
  enqueue(...replies: ChatServerReply[]): void;
  /** Replaces the handler used once the queue is empty. */
  setHandler(handler: ChatServerHandler | undefined): void;
  /** Closes kept-alive connections that carry no request now, as servers do after their keep-alive timeout. */
  closeIdleConnections(): void;
  /** Forgets recorded requests and queued replies. */
  reset(): void;
  /** Stops the server, cutting hanging connections. */
  close(): Promise<void>;
}

export const CHAT_COMPLETIONS_PATH = "/v1/chat/completions";
export const MODELS_PATH = "/v1/models";

export async function startOpenAIChatServer(options: OpenAIChatServerOptions = {}): Promise<OpenAIChatServer> {
  const queue: ChatServerReply[] = [...(options.replies ?? [])];
  const requests: RecordedRequest[] = [];
  let handler = options.handler;
  const latencyMs = options.latencyMs ?? 0;
  const pendingTimers = new Set<NodeJS.Timeout>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    const closed = new Promise<number>((resolve) => res.once("close", () => resolve(performance.now())));
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      const recorded: RecordedRequest = {
        index: requests.length,
        method: req.method ?? "",
        path: (req.url ?? "").split("?")[0] ?? "",
        headers: req.headers,
        remotePort: req.socket.remotePort,
        rawBody,
        body: parseBody(rawBody),
        receivedAt: performance.now(),
        closed,
      };
      requests.push(recorded);
      void answer(recorded, res).catch((error: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { error: { message: `openai-chat-server: ${String(error)}` } });
      });
    });
  });

  async function answer(request: RecordedRequest, res: ServerResponse): Promise<void> {
    if (options.requireKey !== undefined && request.headers.authorization !== `Bearer ${options.requireKey}`) {
      sendJson(res, 401, { error: { message: "Incorrect API key provided", type: "invalid_request_error" } });
      return;
    }
    if (request.method === "GET" && request.path === MODELS_PATH && options.models !== undefined) {
      sendJson(res, 200, {
        object: "list",
        data: options.models.map((id) => ({ id, object: "model", owned_by: "test" })),
      });
      return;
    }
    if (request.method !== "POST" || request.path !== CHAT_COMPLETIONS_PATH) {
      sendJson(res, 404, { error: { message: `no route ${request.method} ${request.path}` } });
      return;
    }
    const reply =
      queue.shift() ??
      (handler === undefined
        ? chatReply.raw(
            500,
            JSON.stringify({
              error: { message: `openai-chat-server: no scripted reply for request #${request.index}` },
            }),
          )
        : await handler(request));
    if (reply.kind === "hang") return;
    if (reply.kind === "drop-connection") {
      res.socket?.destroy();
      return;
    }
    const delay = latencyMs + (reply.delayMs ?? 0);
    if (delay > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          pendingTimers.delete(timer);
          resolve();
        }, delay);
        pendingTimers.add(timer);
      });
    }
    if (res.destroyed) return;
    if (reply.kind === "chunked") {
      await writeInPieces(res, reply);
      return;
    }
    if (reply.kind === "raw") {
      res.writeHead(reply.status, { "content-type": reply.contentType ?? "application/json", ...reply.headers });
      res.end(reply.body);
      return;
    }
    sendJson(res, 200, renderCompletion(reply, request));
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get requestCount() {
      return requests.length;
    },
    get chatRequests() {
      return requests.filter((request) => request.method === "POST" && request.path === CHAT_COMPLETIONS_PATH);
    },
    enqueue: (...replies) => void queue.push(...replies),
    setHandler: (next) => {
      handler = next;
    },
    closeIdleConnections: () => server.closeIdleConnections(),
    reset: () => {
      requests.length = 0;
      queue.length = 0;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const timer of pendingTimers) clearTimeout(timer);
        pendingTimers.clear();
        server.close((error) => (error ? reject(error) : resolve()));
        // Hanging replies keep their sockets open; close() alone would wait for them forever.
        server.closeAllConnections();
      }),
  };
}

/** Builders for the replies tests script. */
export const chatReply = {
  /** A normal completion; one string per choice (`n` choices: pass `n` strings). */
  completion(
    content: string | readonly (string | ScriptedChoice)[],
    extra: Omit<Extract<ChatServerReply, { kind: "completion" }>, "kind" | "choices"> = {},
  ): ChatServerReply {
    const list = typeof content === "string" ? [content] : content;
    return {
      kind: "completion",
      choices: list.map((c) => (typeof c === "string" ? { content: c } : c)),
      ...extra,
    };
  },
  /** One choice whose content is `value` as JSON text. */
  json(value: unknown, extra: ReplyTiming = {}): ChatServerReply {
    return chatReply.completion(JSON.stringify(value), extra);
  },
  /** JSON wrapped in a ```json fence with a sentence before it, as chatty models answer. */
  fencedJson(value: unknown): ChatServerReply {
    return chatReply.completion(`Here is my assessment:\n\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\``);
  },
  /** JSON followed by commentary the model added anyway. */
  jsonWithTrailingText(
    value: unknown,
    trailing = "\n\nI hope this helps! Let me know {if} anything is unclear.",
  ): ChatServerReply {
    return chatReply.completion(`${JSON.stringify(value)}${trailing}`);
  },
  /** A choice carrying OpenAI-format logprobs. */
  withLogprobs(content: string, logprobs: readonly ScriptedLogprob[]): ChatServerReply {
    return chatReply.completion([{ content, logprobs }]);
  },
  /** An error status with an OpenAI-style error body. */
  error(
    status: number,
    message = `scripted ${status}`,
    headers: Readonly<Record<string, string>> = {},
  ): ChatServerReply {
    return { kind: "raw", status, body: JSON.stringify({ error: { message, type: "scripted" } }), headers };
  },
  serverError(status = 500): ChatServerReply {
    return chatReply.error(status, "internal server error (scripted)");
  },
  /** 429 with `Retry-After: <seconds>`. */
  rateLimited(retryAfterSeconds: number): ChatServerReply {
    return chatReply.error(429, "rate limited (scripted)", { "retry-after": String(retryAfterSeconds) });
  },
  /** 200 with a truncated JSON body. */
  malformedJson(): ChatServerReply {
    return { kind: "raw", status: 200, body: '{"id": "chatcmpl-x", "choices": [{"message": {"content": "hel' };
  },
  raw(status: number, body: string, contentType = "application/json"): ChatServerReply {
    return { kind: "raw", status, body, contentType };
  },
  /** `body` written in `pieces` chunks `gapMs` apart; `cut` loses the connection instead of ending. */
  chunked(body: string, pieces: number, gapMs = 5, extra: { status?: number; cut?: boolean } = {}): ChatServerReply {
    return { kind: "chunked", status: extra.status ?? 200, body, pieces, gapMs, ...(extra.cut ? { cut: true } : {}) };
  },
  hang(): ChatServerReply {
    return { kind: "hang" };
  },
  dropConnection(): ChatServerReply {
    return { kind: "drop-connection" };
  },
  /** The same reply, answered after `delayMs`. */
  slow(reply: ChatServerReply, delayMs: number): ChatServerReply {
    if (reply.kind === "hang" || reply.kind === "drop-connection") return reply;
    return { ...reply, delayMs };
  },
} as const;

function renderCompletion(reply: Extract<ChatServerReply, { kind: "completion" }>, request: RecordedRequest) {
  const sent = request.body?.messages?.reduce((sum, m) => sum + m.content.length, 0) ?? 0;
  const returned = reply.choices.reduce((sum, c) => sum + c.content.length, 0);
  const usage =
    reply.usage === null
      ? undefined
      : (reply.usage ?? { promptTokens: Math.ceil(sent / 4), completionTokens: Math.ceil(returned / 4) });
  return {
    id: `chatcmpl-${request.index}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: reply.model ?? request.body?.model ?? "test-model",
    system_fingerprint: "fp_test",
    choices: reply.choices.map((choice, index) => ({
      index,
      message: { role: "assistant", content: choice.content },
      logprobs:
        choice.logprobs === undefined
          ? null
          : {
              content: choice.logprobs.map((t) => ({
                token: t.token,
                logprob: t.logprob,
                bytes: [...Buffer.from(t.token, "utf8")],
                top_logprobs: (t.top ?? []).map((a) => ({
                  token: a.token,
                  logprob: a.logprob,
                  bytes: [...Buffer.from(a.token, "utf8")],
                })),
              })),
            },
      finish_reason: choice.finishReason ?? "stop",
    })),
    ...(usage === undefined
      ? {}
      : {
          usage: {
            prompt_tokens: usage.promptTokens,
            completion_tokens: usage.completionTokens,
            total_tokens: usage.promptTokens + usage.completionTokens,
          },
        }),
  };
}

async function writeInPieces(res: ServerResponse, reply: Extract<ChatServerReply, { kind: "chunked" }>): Promise<void> {
  const bytes = Buffer.from(reply.body, "utf8");
  const size = Math.ceil(bytes.length / reply.pieces);
  res.writeHead(reply.status, { "content-type": "application/json", "transfer-encoding": "chunked" });
  for (let at = 0; at < bytes.length; at += size) {
    if (res.destroyed) return;
    res.write(bytes.subarray(at, at + size));
    await new Promise((resolve) => setTimeout(resolve, reply.gapMs));
  }
  if (reply.cut) res.socket?.destroy();
  else res.end();
}

function parseBody(raw: string): ChatRequestBody | undefined {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === "object" && value !== null ? (value as ChatRequestBody) : undefined;
  } catch {
    return undefined;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
