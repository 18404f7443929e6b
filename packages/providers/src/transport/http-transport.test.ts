import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { chatReply, startOpenAIChatServer, type OpenAIChatServer } from "../testing/openai-chat-server.js";
import { ProviderHttpError, ProviderNetworkError, ProviderResponseError } from "../errors.js";
import { jsonEndpoint, parseRetryAfter } from "./http-transport.js";

/** The keep-alive transport against a real HTTP server on 127.0.0.1, faults included. */
let server: OpenAIChatServer;
beforeAll(async () => {
  server = await startOpenAIChatServer();
});
afterEach(() => {
  server.reset();
  server.setHandler(undefined);
});
afterAll(async () => {
  await server.close();
});

const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] });
const chat = () => jsonEndpoint(`${server.url}/v1/chat/completions`, { "x-test": "yes" });
const contentOf = (value: unknown) =>
  (value as { choices: { message: { content: string } }[] }).choices[0]!.message.content;

describe("jsonEndpoint", () => {
  it("sends JSON with its byte length (not chunked) and the fixed headers", async () => {
    server.enqueue(chatReply.completion("ok"));
    const unicode = JSON.stringify({ model: "m", messages: [{ role: "user", content: "naïve ✓ 😀" }] });
    const reply = await chat().post(unicode);
    expect(reply.status).toBe(200);
    expect(contentOf(reply.value)).toBe("ok");
    const [request] = server.requests;
    expect(request?.method).toBe("POST");
    expect(request?.headers["content-type"]).toBe("application/json");
    expect(request?.headers["content-length"]).toBe(String(Buffer.byteLength(unicode)));
    expect(request?.headers["transfer-encoding"]).toBeUndefined();
    expect(request?.headers["x-test"]).toBe("yes");
    expect(request?.body?.messages?.[0]?.content).toBe("naïve ✓ 😀");
  });

  it("keeps connections alive: sequential calls share one, concurrent ones are reused afterwards", async () => {
    server.setHandler(() => chatReply.completion("ok", { delayMs: 20 }));
    const endpoint = chat();
    for (let i = 0; i < 5; i++) await endpoint.post(body);
    expect(new Set(server.requests.map((r) => r.remotePort)).size).toBe(1);

    server.reset();
    await Promise.all(Array.from({ length: 4 }, () => endpoint.post(body)));
    await Promise.all(Array.from({ length: 4 }, () => endpoint.post(body)));
    const ports = server.requests.map((r) => r.remotePort);
    expect(new Set(ports.slice(0, 4)).size).toBe(4);
    expect(new Set(ports)).toEqual(new Set(ports.slice(0, 4)));
  });

  it("opens a new connection when the server has closed an idle one", async () => {
    server.setHandler(() => chatReply.completion("ok"));
    const endpoint = chat();
    await endpoint.post(body);
    server.closeIdleConnections();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await expect(endpoint.post(body)).resolves.toMatchObject({ status: 200 });
    expect(server.requests[1]?.remotePort).not.toBe(server.requests[0]?.remotePort);
  });

  it("lets a request outlast the 4 s idle-socket timeout, on a reused and on a new connection", {
    timeout: 15_000,
  }, async () => {
    const endpoint = chat();
    server.enqueue(chatReply.completion("warm"));
    await endpoint.post(body);
    server.setHandler(() => chatReply.completion("slow but fine", { delayMs: 4_500 }));
    const replies = await Promise.all([endpoint.post(body), endpoint.post(body)]);
    expect(replies.map((r) => contentOf(r.value))).toEqual(["slow but fine", "slow but fine"]);
    expect(new Set(server.requests.map((r) => r.remotePort)).size).toBe(2);
  });

  it("reads a chunked body whose pieces split UTF-8 characters", async () => {
    const text = "Ünïcödé ✓ ".repeat(40);
    server.enqueue(chatReply.chunked(JSON.stringify({ choices: [{ message: { content: text } }] }), 37, 2));
    const reply = await chat().post(body);
    expect(contentOf(reply.value)).toBe(text);
  });

  it("rejects with the signal's reason on abort, and the pool keeps working", async () => {
    server.enqueue(chatReply.hang(), chatReply.completion("after"));
    const controller = new AbortController();
    const pending = chat().post(body, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const reason = new Error("caller gave up");
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await expect(
      chat()
        .post(body)
        .then((r) => contentOf(r.value)),
    ).resolves.toBe("after");
  });

  it("sends nothing when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort(new Error("too late"));
    await expect(chat().post(body, controller.signal)).rejects.toThrow("too late");
    expect(server.requestCount).toBe(0);
  });

  it("times out through AbortSignal.timeout, mid-body too", async () => {
    server.enqueue(chatReply.hang(), chatReply.chunked(JSON.stringify({ choices: [] }), 10, 100));
    await expect(chat().post(body, AbortSignal.timeout(100))).rejects.toMatchObject({ name: "TimeoutError" });
    await expect(chat().post(body, AbortSignal.timeout(150))).rejects.toMatchObject({ name: "TimeoutError" });
  });

  it("reports a non-2xx answer as ProviderHttpError with status, body and Retry-After", async () => {
    server.enqueue(chatReply.rateLimited(3));
    const error = await chat()
      .post(body)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderHttpError);
    expect(error).toMatchObject({ status: 429, retryAfterMs: 3_000, url: `${server.url}/v1/chat/completions` });
    expect((error as ProviderHttpError).body).toContain("rate limited (scripted)");
  });

  it("reports a 2xx body that is not JSON as ProviderResponseError naming the content type", async () => {
    server.enqueue(chatReply.raw(200, "<html>gateway</html>", "text/html"));
    const error = await chat()
      .post(body)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderResponseError);
    expect(String(error)).toMatch(/answered 200 with a body that is not JSON \(content-type text\/html\)/);
    expect((error as ProviderResponseError).body).toBe("<html>gateway</html>");
  });

  it("reports a connection lost before the answer, or mid-body, as ProviderNetworkError", async () => {
    server.enqueue(
      chatReply.dropConnection(),
      chatReply.chunked(JSON.stringify({ choices: [{ message: { content: "x".repeat(200) } }] }), 4, 5, { cut: true }),
    );
    await expect(chat().post(body)).rejects.toBeInstanceOf(ProviderNetworkError);
    await expect(chat().post(body)).rejects.toBeInstanceOf(ProviderNetworkError);
  });

  it("reports an unreachable server as ProviderNetworkError naming the cause", async () => {
    const closed = await startOpenAIChatServer();
    await closed.close();
    const error = await jsonEndpoint(`${closed.url}/v1/chat/completions`)
      .post(body)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderNetworkError);
    expect(String(error)).toMatch(/ECONNREFUSED/);
  });

  it("refuses a URL that is not http(s)", () => {
    expect(() => jsonEndpoint("ftp://127.0.0.1/x")).toThrow(/http\(s\) URL/);
  });
});

describe("parseRetryAfter", () => {
  it("reads delta-seconds and HTTP dates", () => {
    expect(parseRetryAfter("2")).toBe(2_000);
    expect(parseRetryAfter("0.5")).toBe(500);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});
