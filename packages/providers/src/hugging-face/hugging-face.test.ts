import type { GenerateRequest } from "@rubric/core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { chatReply, startOpenAIChatServer, type OpenAIChatServer } from "../testing/openai-chat-server.js";
import {
  ProviderConfigError,
  ProviderHttpError,
  ProviderNetworkError,
  ProviderResponseError,
  ProviderTimeoutError,
} from "../errors.js";
import { InferenceClient } from "@huggingface/inference";
import { openAICompatible } from "../openai-compatible/openai-compatible.js";
import { huggingFace, overInferenceClient } from "./hugging-face.js";

const ask: GenerateRequest = { messages: [{ role: "user", content: "Rate this answer." }] };
const scoreFormat = {
  type: "json-schema",
  name: "criterion verdict",
  schema: { type: "object", properties: { score: { enum: [0, 1, 2, 3] } }, required: ["score"] },
} as const;

// Fast retries so fault tests take milliseconds, not the production backoff.
const fastRetry = { retries: 2, baseDelayMs: 5, maxDelayMs: 20, timeoutMs: 2_000 };

let server: OpenAIChatServer;
beforeAll(async () => {
  server = await startOpenAIChatServer();
});
afterEach(() => {
  server.reset();
  server.setHandler(undefined);
  vi.unstubAllEnvs();
});
afterAll(async () => {
  await server.close();
});

function local(retry: typeof fastRetry | false = fastRetry) {
  return openAICompatible({ baseUrl: server.url, model: "judge-7b", apiKeyEnv: false, retry });
}

describe("openAICompatible request mapping", () => {
  it("sends messages, max_tokens, temperature, seed, n, response_format and logprobs in OpenAI form", async () => {
    server.enqueue(chatReply.completion(['{"score": 1}', '{"score": 2}']));
    await local().generate({
      ...ask,
      maxTokens: 64,
      temperature: 0.7,
      seed: 42,
      n: 2,
      topLogprobs: 3,
      responseFormat: scoreFormat,
    });
    const [request] = server.requests;
    expect(request?.path).toBe("/v1/chat/completions");
    expect(request?.body).toEqual({
      model: "judge-7b",
      messages: [{ role: "user", content: "Rate this answer." }],
      max_tokens: 64,
      temperature: 0.7,
      seed: 42,
      n: 2,
      logprobs: true,
      top_logprobs: 3,
      response_format: {
        type: "json_schema",
        json_schema: { name: "criterion_verdict", schema: scoreFormat.schema, strict: true },
      },
    });
  });

  it("leaves unset options out of the body", async () => {
    server.enqueue(chatReply.completion("ok"));
    await local().generate(ask);
    expect(Object.keys(server.requests[0]?.body ?? {}).sort()).toEqual(["messages", "model"]);
  });

  it("sends a self-hosted server no ambient OPENAI_API_KEY, only a key the caller names", async () => {
    vi.stubEnv("OPENAI_API_KEY", "sk-ambient");
    vi.stubEnv("MY_KEY", "sk-named");
    server.enqueue(chatReply.completion("a"), chatReply.completion("b"), chatReply.completion("c"));
    await openAICompatible({ baseUrl: server.url, model: "m" }).generate(ask);
    await openAICompatible({ baseUrl: server.url, model: "m", apiKeyEnv: "MY_KEY" }).generate(ask);
    await openAICompatible({ baseUrl: server.url, model: "m", apiKeyEnv: "OPENAI_API_KEY" }).generate(ask);
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([
      undefined,
      "Bearer sk-named",
      "Bearer sk-ambient",
    ]);
  });

  it("requires a key variable the user named", () => {
    vi.stubEnv("MY_KEY", "");
    expect(() => openAICompatible({ baseUrl: server.url, model: "m", apiKeyEnv: "MY_KEY" })).toThrow(
      /MY_KEY is not set/,
    );
  });
});

describe("openAICompatible response mapping", () => {
  it("maps choices, usage, finish reasons and the server's model id", async () => {
    server.enqueue(
      chatReply.completion([{ content: "one", finishReason: "length" }, "two"], {
        model: "judge-7b-q4",
        usage: { promptTokens: 11, completionTokens: 5 },
      }),
    );
    const response = await local().generate({ ...ask, n: 2 });
    expect(response.choices.map((c) => [c.text, c.finishReason])).toEqual([
      ["one", "length"],
      ["two", "stop"],
    ]);
    expect(response.usage).toEqual({ inputTokens: 11, outputTokens: 5 });
    expect(response.modelId).toBe("judge-7b-q4");
    expect(response.choices[0]?.json).toBeUndefined();
  });

  it("parses JSON from a fenced block and from text with commentary after it", async () => {
    server.enqueue(chatReply.fencedJson({ score: 3, why: "ok" }), chatReply.jsonWithTrailingText({ score: 2 }));
    const fenced = await local().generate({ ...ask, responseFormat: scoreFormat });
    const trailing = await local().generate({ ...ask, responseFormat: scoreFormat });
    expect(fenced.choices[0]?.json).toEqual({ score: 3, why: "ok" });
    expect(trailing.choices[0]?.json).toEqual({ score: 2 });
  });

  it("leaves json undefined when the text holds none", async () => {
    server.enqueue(chatReply.completion("I cannot rate this."));
    const response = await local().generate({ ...ask, responseFormat: scoreFormat });
    expect(response.choices[0]?.text).toBe("I cannot rate this.");
    expect(response.choices[0]?.json).toBeUndefined();
  });

  it("maps OpenAI logprobs with their alternatives", async () => {
    server.enqueue(
      chatReply.withLogprobs("Yes", [
        {
          token: "Yes",
          logprob: -0.1,
          top: [
            { token: "Yes", logprob: -0.1 },
            { token: "No", logprob: -2.4 },
          ],
        },
      ]),
    );
    const response = await local().generate({ ...ask, topLogprobs: 2 });
    expect(response.choices[0]?.logprobs).toEqual([
      {
        token: "Yes",
        logprob: -0.1,
        top: [
          { token: "Yes", logprob: -0.1 },
          { token: "No", logprob: -2.4 },
        ],
      },
    ]);
  });

  it("tops up samples with further seeded calls when the server ignores n", async () => {
    server.setHandler((request) => chatReply.completion(`seed ${String(request.body?.seed)}`));
    const response = await local().generate({ ...ask, n: 3, seed: 10 });
    expect(response.choices.map((c) => c.text)).toEqual(["seed 10", "seed 11", "seed 12"]);
    expect(server.requests.map((r) => [r.body?.n, r.body?.seed])).toEqual([
      [3, 10],
      [2, 11],
      [1, 12],
    ]);
  });
});

/** The same server reached through `huggingFace({endpointUrl})`, i.e. through the real @huggingface/inference client. */
function viaHf(retry: typeof fastRetry | false = fastRetry) {
  return huggingFace({ endpointUrl: server.url, model: "judge-7b", apiKeyEnv: false, retry });
}

describe.each([
  ["openAICompatible (keep-alive transport)", local],
  ["huggingFace({endpointUrl}) (@huggingface/inference)", viaHf],
])("retries and faults: %s", (_, local) => {
  it("retries a 500 and returns the later success", async () => {
    server.enqueue(chatReply.serverError(), chatReply.completion("fine"));
    const response = await local().generate(ask);
    expect(response.choices[0]?.text).toBe("fine");
    expect(server.requestCount).toBe(2);
  });

  it("waits at least Retry-After before retrying a 429", async () => {
    server.enqueue(chatReply.rateLimited(1), chatReply.completion("after the wait"));
    const response = await local().generate(ask);
    expect(response.choices[0]?.text).toBe("after the wait");
    const [first, second] = server.requests;
    expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(1_000);
  });

  it("gives up with ProviderTimeoutError when every attempt hangs", async () => {
    server.setHandler(() => chatReply.hang());
    const model = local({ retries: 1, baseDelayMs: 5, maxDelayMs: 10, timeoutMs: 150 });
    const error = await model.generate(ask).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderTimeoutError);
    expect(error).toMatchObject({ timeoutMs: 150, attempt: 2, maxAttempts: 2 });
    expect(server.requestCount).toBe(2);
  });

  it("gives up on a slow server, then succeeds once it answers in time", async () => {
    server.enqueue(chatReply.slow(chatReply.completion("late"), 400), chatReply.completion("on time"));
    const model = local({ retries: 1, baseDelayMs: 5, maxDelayMs: 10, timeoutMs: 150 });
    const response = await model.generate(ask);
    expect(response.choices[0]?.text).toBe("on time");
  });

  it("reports a malformed 200 body as ProviderResponseError without retrying", async () => {
    server.enqueue(chatReply.malformedJson());
    const error = await local()
      .generate(ask)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderResponseError);
    expect(String(error)).toMatch(/not JSON/);
    expect(server.requestCount).toBe(1);
  });

  it("reports JSON that is not a chat completion as ProviderResponseError", async () => {
    server.enqueue(chatReply.raw(200, JSON.stringify({ generated_text: "hi" })));
    await expect(local().generate(ask)).rejects.toBeInstanceOf(ProviderResponseError);
  });

  it("does not retry a 400, and keeps status and body", async () => {
    server.enqueue(chatReply.error(400, "max_tokens is too large"), chatReply.completion("never sent"));
    const error = await local()
      .generate(ask)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderHttpError);
    expect(error).toMatchObject({ status: 400 });
    expect((error as ProviderHttpError).body).toContain("max_tokens is too large");
    expect(server.requestCount).toBe(1);
  });

  it("retries a dropped connection as a network error", async () => {
    server.enqueue(chatReply.dropConnection(), chatReply.completion("reconnected"));
    const response = await local().generate(ask);
    expect(response.choices[0]?.text).toBe("reconnected");
  });

  it("surfaces the last transient error once retries run out", async () => {
    server.setHandler(() => chatReply.serverError(503));
    const error = await local()
      .generate(ask)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ProviderHttpError", status: 503 });
    expect(server.requestCount).toBe(fastRetry.retries + 1);
  });

  it("reports an unreachable server as ProviderNetworkError", async () => {
    const closed = await startOpenAIChatServer();
    await closed.close();
    const model = openAICompatible({ baseUrl: closed.url, model: "m", apiKeyEnv: false, retry: false });
    await expect(model.generate(ask)).rejects.toBeInstanceOf(ProviderNetworkError);
  });

  it("stops at once when the caller aborts, even during a backoff", async () => {
    server.setHandler(() => chatReply.rateLimited(30));
    const controller = new AbortController();
    const pending = local().generate({ ...ask, signal: controller.signal });
    setTimeout(() => controller.abort(new Error("caller gave up")), 100);
    await expect(pending).rejects.toThrow("caller gave up");
    expect(server.requestCount).toBe(1);
  });
});

describe("huggingFace", () => {
  it("reaches an endpoint through @huggingface/inference, reported as hf", async () => {
    server.enqueue(chatReply.json({ score: 1 }));
    const model = huggingFace({ endpointUrl: server.url, model: "tgi-model", apiKeyEnv: false, retry: fastRetry });
    const response = await model.generate({ ...ask, responseFormat: scoreFormat });
    expect(model.provider).toBe("hf");
    expect(model.modelId).toBe("tgi-model");
    expect(response.choices[0]?.json).toEqual({ score: 1 });
    expect(server.requests[0]?.body?.model).toBe("tgi-model");
  });

  it("keeps HF_TOKEN from third-party endpoints unless the variable is named", async () => {
    vi.stubEnv("HF_TOKEN", "hf_test");
    server.enqueue(chatReply.completion("ok"), chatReply.completion("ok"));
    await huggingFace({ endpointUrl: `${server.url}/v1` }).generate(ask);
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
    expect(server.requests[0]?.path).toBe("/v1/chat/completions");
    await huggingFace({ endpointUrl: `${server.url}/v1`, apiKeyEnv: "HF_TOKEN" }).generate(ask);
    expect(server.requests[1]?.headers.authorization).toBe("Bearer hf_test");
  });

  it("refuses endpointUrl combined with provider", () => {
    const options = { endpointUrl: server.url, provider: "together" } as unknown as Parameters<typeof huggingFace>[0];
    expect(() => huggingFace(options)).toThrow(ProviderConfigError);
    expect(() => huggingFace(options)).toThrow(/cannot be combined/);
  });

  it("needs HF_TOKEN for Inference Providers, and names the deployment model@provider", () => {
    vi.stubEnv("HF_TOKEN", "");
    expect(() => huggingFace({ model: "org/model" })).toThrow(/HF_TOKEN is not set/);
    vi.stubEnv("HF_TOKEN", "hf_test");
    expect(huggingFace({ model: "org/model", provider: "together" }).modelId).toBe("org/model@together");
    expect(huggingFace({ model: "org/model" }).modelId).toBe("org/model");
  });
});

describe("overInferenceClient (the Inference Providers path), through a real InferenceClient", () => {
  // Inference Providers live behind the HF router; an endpointUrl client runs the same client
  // code (request building, our checked fetch, error translation) against the local server.
  const viaClient = () => {
    const send = overInferenceClient(new InferenceClient("", { endpointUrl: server.url }), { model: "tgi-model" });
    return (signal?: AbortSignal) => send({ messages: [{ role: "user", content: "hi" }] }, signal);
  };

  it("sends the model and body, and validates the completion", async () => {
    server.enqueue(chatReply.completion("hello", { model: "tgi-model" }));
    const response = await viaClient()();
    expect(response.choices[0]?.message.content).toBe("hello");
    expect(server.requests[0]?.path).toBe("/v1/chat/completions");
    expect(server.requests[0]?.body).toMatchObject({ model: "tgi-model", messages: [{ role: "user", content: "hi" }] });
  });

  it("keeps status, body and Retry-After of an error answer", async () => {
    server.enqueue(chatReply.rateLimited(2));
    const error = await viaClient()().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderHttpError);
    expect(error).toMatchObject({ status: 429, retryAfterMs: 2_000 });
  });

  it("types a malformed body and a dropped connection", async () => {
    server.enqueue(chatReply.malformedJson(), chatReply.dropConnection());
    await expect(viaClient()()).rejects.toBeInstanceOf(ProviderResponseError);
    await expect(viaClient()()).rejects.toBeInstanceOf(ProviderNetworkError);
  });
});

describe("response size cap", () => {
  const big = "x".repeat(20_000);

  it("refuses a body over maxResponseBytes, declared or streamed, without retrying it", async () => {
    server.enqueue(chatReply.completion(big), chatReply.chunked(JSON.stringify({ filler: big }), 8, 1));
    const model = openAICompatible({ baseUrl: server.url, model: "m", maxResponseBytes: 4_096, retry: fastRetry });
    const declared = await model.generate(ask).catch((e: unknown) => e);
    expect(declared).toBeInstanceOf(ProviderResponseError);
    expect((declared as Error).message).toMatch(/over the 4096-byte cap \(maxResponseBytes\)/);
    const streamed = await model.generate(ask).catch((e: unknown) => e);
    expect(streamed).toBeInstanceOf(ProviderResponseError);
    expect((streamed as Error).message).toMatch(/over the 4096-byte cap/);
    expect(server.requests).toHaveLength(2);
    // The connection cut off mid-body is not reused: the next call on the pool still succeeds.
    server.enqueue(chatReply.completion("fine"));
    await expect(model.generate(ask)).resolves.toMatchObject({ choices: [{ text: "fine" }] });
  });

  it("caps the @huggingface/inference path as well", async () => {
    server.enqueue(chatReply.chunked(JSON.stringify({ filler: big }), 8, 1));
    const model = huggingFace({ endpointUrl: server.url, apiKeyEnv: false, maxResponseBytes: 4_096, retry: fastRetry });
    const error = await model.generate(ask).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderResponseError);
    expect((error as Error).message).toMatch(/over the 4096-byte cap/);
    expect(server.requests).toHaveLength(1);
  });

  it("reads a body under the cap as before", async () => {
    server.enqueue(chatReply.completion(big));
    const model = openAICompatible({ baseUrl: server.url, model: "m", maxResponseBytes: 64_000, retry: false });
    await expect(model.generate(ask)).resolves.toMatchObject({ choices: [{ text: big }] });
  });
});
