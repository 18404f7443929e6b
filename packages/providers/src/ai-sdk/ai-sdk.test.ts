import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModelV2, LanguageModelV3, LanguageModelV4 } from "@ai-sdk/provider";
import { checkLanguageModel, LanguageModelContractError } from "@rubric/core";
import { afterAll, afterEach, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { ProviderConfigError, ProviderHttpError } from "../errors.js";
import { chatReply, startOpenAIChatServer, type OpenAIChatServer } from "../testing/openai-chat-server.js";
import { type AiSdkLanguageModel, aiSdk } from "./ai-sdk.js";

/**
 * A real AI SDK provider package (`@ai-sdk/openai-compatible`, specification v4) against a local
 * server speaking the OpenAI chat wire, with faults injected: the adapter is exercised through the
 * SDK's own request building, response parsing and errors.
 */
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

const fastRetry = { retries: 2, baseDelayMs: 5, maxDelayMs: 20, timeoutMs: 2_000 };
const sdkModel = () => createOpenAICompatible({ name: "local", baseURL: `${server.url}/v1` })("judge-7b");

describe("aiSdk: any AI SDK language model as the toolkit's LanguageModel", () => {
  it("accepts the AI SDK's own model types (v2, v3, v4) where it asks for a model", () => {
    expectTypeOf<LanguageModelV4>().toExtend<AiSdkLanguageModel>();
    expectTypeOf<LanguageModelV3>().toExtend<AiSdkLanguageModel>();
    expectTypeOf<LanguageModelV2>().toExtend<AiSdkLanguageModel>();
  });

  it("sends the messages, sampling settings and JSON format through the SDK, and reads text, JSON, usage and finish", async () => {
    server.enqueue(
      chatReply.completion('{"score": 2}', { usage: { promptTokens: 31, completionTokens: 5 } }),
      chatReply.completion('{"score": 3}', { usage: { promptTokens: 31, completionTokens: 5 } }),
    );
    const model = aiSdk(sdkModel(), { retry: false });
    expect(checkLanguageModel(model)).toBe(model);
    expect(model).toMatchObject({ specificationVersion: "v1", provider: "ai-sdk:local.chat", modelId: "judge-7b" });
    const response = await model.generate({
      messages: [
        { role: "system", content: "You grade answers." },
        { role: "user", content: "Rate: Paris." },
      ],
      temperature: 0.7,
      maxTokens: 64,
      seed: 11,
      n: 2,
      responseFormat: { type: "json-schema", name: "verdict", schema: { type: "object" } },
    });
    expect(response.choices.map((c) => [c.text, c.json, c.finishReason])).toEqual([
      ['{"score": 2}', { score: 2 }, "stop"],
      ['{"score": 3}', { score: 3 }, "stop"],
    ]);
    // Two samples are two calls, usage summed.
    expect(response.usage).toEqual({ inputTokens: 62, outputTokens: 10 });
    const bodies = server.requests.map((r) => r.body!);
    expect(bodies.map((b) => b.seed)).toEqual([11, 12]);
    expect(bodies[0]).toMatchObject({
      model: "judge-7b",
      temperature: 0.7,
      max_tokens: 64,
      messages: [
        { role: "system", content: "You grade answers." },
        { role: "user", content: "Rate: Paris." },
      ],
    });
    // The SDK's OpenAI-compatible provider asks for JSON mode unless told the server takes schemas.
    expect(bodies[0]!.response_format).toEqual({ type: "json_object" });
  });

  it("passes the JSON schema and its name to a provider that takes structured outputs", async () => {
    server.enqueue(chatReply.json({ score: 1 }));
    const structured = createOpenAICompatible({
      name: "local",
      baseURL: `${server.url}/v1`,
      supportsStructuredOutputs: true,
    })("judge-7b");
    const schema = { type: "object", properties: { score: { type: "integer" } }, required: ["score"] };
    const response = await aiSdk(structured, { retry: false }).generate({
      messages: [{ role: "user", content: "Rate." }],
      responseFormat: { type: "json-schema", name: "verdict", schema },
    });
    expect(response.choices[0]!.json).toEqual({ score: 1 });
    expect(server.requests[0]!.body!.response_format).toMatchObject({
      type: "json_schema",
      json_schema: { name: "verdict", schema },
    });
  });

  it("turns the SDK's HTTP errors into ProviderHttpError, so 5xx and 429 are retried and a 400 is not", async () => {
    server.enqueue(chatReply.raw(503, '{"error": {"message": "busy"}}'), chatReply.completion("fine"));
    const model = aiSdk(sdkModel(), { retry: fastRetry });
    const ok = await model.generate({ messages: [{ role: "user", content: "hi" }] });
    expect(ok.choices[0]!.text).toBe("fine");
    expect(server.requests).toHaveLength(2);

    server.reset();
    server.enqueue(chatReply.raw(400, '{"error": {"message": "unknown model judge-7b"}}'));
    const failed = model.generate({ messages: [{ role: "user", content: "hi" }] });
    await expect(failed).rejects.toBeInstanceOf(ProviderHttpError);
    await expect(failed).rejects.toMatchObject({ status: 400 });
    await expect(failed).rejects.toThrow(/unknown model judge-7b/);
    expect(server.requests).toHaveLength(1);
  });

  it("gives no log-probabilities (the specification has none), and refuses a model of another version", async () => {
    const model = aiSdk(sdkModel(), { retry: false });
    server.enqueue(chatReply.completion("3"));
    const noLogprobs = await model.generate({ messages: [{ role: "user", content: "hi" }], topLogprobs: 3 });
    expect(noLogprobs.choices[0]).toEqual({ text: "3", finishReason: "stop" });
    const later = { specificationVersion: "v9", provider: "x", modelId: "y", doGenerate: sdkModel().doGenerate };
    expect(() => aiSdk(later as never)).toThrow(/specification "v9"/);
    expect(() => aiSdk({} as never)).toThrow(ProviderConfigError);
    // A model of a later toolkit interface is refused by name, not on its first call.
    expect(() => checkLanguageModel({ ...model, specificationVersion: "v2" }, "judge")).toThrow(
      LanguageModelContractError,
    );
    expect(() => checkLanguageModel({ generate: () => {} }, "judge")).toThrow(/judge: expected string provider/);
  });
});
