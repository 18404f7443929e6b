import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseFlatRubric } from "@rubric/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { scoreOutputs } from "../engine/engine.js";
import { chatReply, startOpenAIChatServer, type OpenAIChatServer } from "@rubric/providers/testing";
import { openAICompatible } from "@rubric/providers";
import { rulesRegistry } from "../registry/registry.js";
import { fileCache } from "../verifier/cache.js";
import { llmJudge } from "./llm-judge.js";
import { judgePairwise } from "./pairwise.js";

/**
 * The judge against a real HTTP server speaking the OpenAI wire format, through the real
 * openAICompatible client (its keep-alive node:http transport), with scripted replies and faults.
 */
let server: OpenAIChatServer;
beforeAll(async () => {
  server = await startOpenAIChatServer();
});
afterAll(() => server.close());
beforeEach(() => server.reset());

const model = () =>
  openAICompatible({
    baseUrl: server.url,
    model: "judge-7b",
    apiKeyEnv: false,
    retry: { retries: 2, baseDelayMs: 5, maxDelayMs: 20, timeoutMs: 2_000 },
  });

const rubric = parseFlatRubric({
  id: "memo",
  criteria: [
    { id: "clear", text: "The memo is clear", weight: 1, verifier: { kind: "llm-judge", scale: { min: 0, max: 4 } } },
    {
      id: "tone",
      text: "The tone is professional",
      weight: 1,
      verifier: { kind: "llm-judge", prompt: "Judge the register.", expectation: "No slang." },
    },
    { id: "figures", text: "Mentions revenue", weight: 2, verifier: { kind: "includes", terms: ["revenue"] } },
  ],
});
const registryWith = (judge: ReturnType<typeof llmJudge>) => rulesRegistry().register(judge);

describe("llmJudge, batched (one call per output)", () => {
  it("judges every llm criterion of an output in one structured-output call", async () => {
    server.enqueue(
      chatReply.json({ clear: { rationale: "Plain words.", score: 3 }, tone: { rationale: "Formal.", score: 10 } }),
    );
    const [result] = await scoreOutputs(rubric, [{ id: "a", input: "Write a memo", output: "Revenue rose 4%." }], {
      registry: registryWith(llmJudge(model())),
    });
    expect(server.requestCount).toBe(1);
    const body = server.requests[0]!.body!;
    const format = body["response_format"] as {
      type: string;
      json_schema: {
        schema: { required: string[]; properties: Record<string, { properties: { score: { enum: number[] } } }> };
      };
    };
    expect(format.type).toBe("json_schema");
    expect(format.json_schema.schema.required).toEqual(["clear", "tone"]);
    expect(format.json_schema.schema.properties["clear"]!.properties.score.enum).toEqual([
      0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4,
    ]);
    expect(body.seed).toBe(0);
    expect(body["temperature"]).toBe(0);
    expect(body.messages![1]!.content).toContain("Judge the register.");
    expect(body.messages![1]!.content).toContain("What a good response does: No slang.");
    // clear 3/4, tone 10/10, figures 1 → (0.75 + 1 + 2) / 4
    expect(result!.score?.normalized).toBeCloseTo(3.75 / 4, 12);
    expect(result!.verdicts[0]).toMatchObject({
      criterionId: "clear",
      score: 0.75,
      status: "ok",
      rationale: "Plain words.",
      verifier: "llm-judge:judge-7b",
    });
    expect(result!.verdicts[0]!.tokens).toBeGreaterThan(0);
  });

  it("parses fenced JSON and JSON followed by commentary", async () => {
    server.enqueue(chatReply.fencedJson({ clear: { rationale: "ok", score: 4 }, tone: { rationale: "ok", score: 5 } }));
    server.enqueue(
      chatReply.jsonWithTrailingText({ clear: { rationale: "ok", score: 2 }, tone: { rationale: "ok", score: 0 } }),
    );
    const results = await scoreOutputs(
      rubric,
      [
        { id: "a", output: "x" },
        { id: "b", output: "y" },
      ],
      { registry: registryWith(llmJudge(model())), concurrency: 1 },
    );
    expect(results.map((r) => r.verdicts.slice(0, 2).map((v) => v.score))).toEqual([
      [1, 0.5],
      [0.5, 0],
    ]);
  });

  it("asks again when a reply does not parse, then reports an error verdict carrying the raw text", async () => {
    server.setHandler(() => chatReply.completion("I think it is quite good, maybe a 7?"));
    const [result] = await scoreOutputs(rubric, [{ id: "a", output: "Revenue" }], {
      registry: registryWith(llmJudge(model(), { parseRetries: 2 })),
    });
    server.setHandler(undefined);
    expect(server.requestCount).toBe(3);
    expect(result!.errors).toBe(2);
    expect(result!.verdicts[0]).toMatchObject({
      status: "error",
      score: null,
      error: expect.stringContaining("did not parse"),
    });
    expect((result!.verdicts[0]!.evidence as { raw: string[] }).raw[0]).toBe("I think it is quite good, maybe a 7?");
    // A score off the scale is not a verdict either.
    server.enqueue(chatReply.json({ clear: { rationale: "?", score: 3.7 }, tone: { rationale: "ok", score: 7 } }));
    server.enqueue(chatReply.json({ clear: { rationale: "ok", score: 1 }, tone: { rationale: "ok", score: 7 } }));
    const [retried] = await scoreOutputs(rubric, [{ id: "b", output: "Revenue" }], {
      registry: registryWith(llmJudge(model())),
    });
    expect(retried!.verdicts.slice(0, 2).map((v) => v.score)).toEqual([0.25, 0.7]);
  });

  it("a judge that always fails yields error verdicts, never zeros", async () => {
    server.setHandler(() => chatReply.serverError(503));
    const [result] = await scoreOutputs(rubric, [{ id: "a", output: "Revenue" }], {
      registry: registryWith(llmJudge(model())),
    });
    server.setHandler(undefined);
    expect(server.requestCount).toBe(3); // one attempt + two retries
    expect(result!.verdicts.slice(0, 2).every((v) => v.status === "error" && v.score === null)).toBe(true);
    expect(result!.verdicts[0]!.error).toMatch(/503/);
    expect(result!.score).toBeNull();
  });

  it("rationaleMaxLength puts maxLength on every rationale of the schema it sends, and only then", async () => {
    const reply = chatReply.json({ clear: { rationale: "ok", score: 3 }, tone: { rationale: "ok", score: 7 } });
    server.enqueue(reply, reply);
    const outputs = [{ id: "a", input: "Write a memo", output: "Revenue rose." }];
    await scoreOutputs(rubric, outputs, { registry: registryWith(llmJudge(model(), { rationaleMaxLength: 80 })) });
    await scoreOutputs(rubric, outputs, { registry: registryWith(llmJudge(model())) });
    const rationales = (i: number) => {
      const schema = (
        server.requests[i]!.body as {
          response_format: {
            json_schema: { schema: { properties: Record<string, { properties: { rationale: unknown } }> } };
          };
        }
      ).response_format.json_schema.schema;
      return Object.values(schema.properties).map((p) => p.properties.rationale);
    };
    expect(rationales(0)).toEqual([
      { type: "string", maxLength: 80 },
      { type: "string", maxLength: 80 },
    ]);
    expect(rationales(1)).toEqual([{ type: "string" }, { type: "string" }]);
    expect(() => llmJudge(model(), { rationaleMaxLength: 0 })).toThrow(
      expect.objectContaining({ code: "verification.options" }),
    );
  });

  it("a cached rerun makes no requests", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rubric-judge-cache-"));
    server.setHandler(() =>
      chatReply.json({ clear: { rationale: "ok", score: 2 }, tone: { rationale: "ok", score: 6 } }),
    );
    const outputs = Array.from({ length: 4 }, (_, i) => ({ id: `o${i}`, output: `revenue ${i}` }));
    const first = await scoreOutputs(rubric, outputs, {
      registry: registryWith(llmJudge(model())),
      cache: fileCache(dir),
    });
    expect(server.requestCount).toBe(4);
    const second = await scoreOutputs(rubric, outputs, {
      registry: registryWith(llmJudge(model())),
      cache: fileCache(dir),
    });
    server.setHandler(undefined);
    expect(server.requestCount).toBe(4);
    expect(second.map((r) => r.score?.normalized)).toEqual(first.map((r) => r.score?.normalized));
    // Another judge model is another cache identity.
    server.setHandler(() =>
      chatReply.json({ clear: { rationale: "ok", score: 2 }, tone: { rationale: "ok", score: 6 } }),
    );
    await scoreOutputs(rubric, outputs.slice(0, 1), {
      registry: registryWith(llmJudge(openAICompatible({ baseUrl: server.url, model: "other", apiKeyEnv: false }))),
      cache: fileCache(dir),
    });
    server.setHandler(undefined);
    expect(server.requestCount).toBe(5);
  });
});

describe("llmJudge, per criterion", () => {
  const one = parseFlatRubric({
    id: "one",
    criteria: [
      { id: "clear", text: "Clear", weight: 1, verifier: { kind: "llm-judge", scale: { min: 0, max: 4, step: 1 } } },
    ],
  });

  it("weights the score by the score token's log-probabilities", async () => {
    const text = '{"rationale": "fine", "score": 3}';
    const prefix = '{"rationale": "fine", "score": ';
    server.enqueue(
      chatReply.withLogprobs(text, [
        { token: prefix, logprob: -0.01 },
        {
          token: "3",
          logprob: Math.log(0.6),
          top: [
            { token: "3", logprob: Math.log(0.6) },
            { token: "4", logprob: Math.log(0.3) },
            { token: "2", logprob: Math.log(0.1) },
          ],
        },
        { token: "}", logprob: 0 },
      ]),
    );
    const [result] = await scoreOutputs(one, [{ id: "a", output: "x" }], {
      registry: registryWith(llmJudge(model(), { mode: "per-criterion" })),
    });
    expect(server.requests[0]!.body!["logprobs"]).toBe(true);
    // (0.6·3 + 0.3·4 + 0.1·2) / 4 = 0.8
    expect(result!.verdicts[0]!.score).toBeCloseTo(0.8, 12);
    expect(result!.verdicts[0]!.evidence).toMatchObject({ logprobWeighted: true });
  });

  it("combines k samples by mean or majority", async () => {
    const replies = ["2", "4", "4"].map((s) => `{"rationale": "r", "score": ${s}}`);
    server.enqueue(chatReply.completion(replies));
    const [mean] = await scoreOutputs(one, [{ id: "a", output: "x" }], {
      registry: registryWith(llmJudge(model(), { mode: "per-criterion", samples: 3 })),
    });
    expect(server.requests[0]!.body!.n).toBe(3);
    expect(server.requests[0]!.body!["temperature"]).toBe(0.7);
    expect(mean!.verdicts[0]!.score).toBeCloseTo(10 / 12, 12);
    server.enqueue(chatReply.completion(replies));
    const [majority] = await scoreOutputs(one, [{ id: "b", output: "x" }], {
      registry: registryWith(llmJudge(model(), { mode: "per-criterion", samples: 3, aggregate: "majority" })),
    });
    expect(majority!.verdicts[0]!.score).toBe(1);
  });
});

describe("judgePairwise", () => {
  it("judges both orders and keeps a preference only when they agree", async () => {
    // A shown first: "first" (A); B shown first: "second" (A) → A, consistent.
    server.setHandler((request) => {
      const content = request.body!.messages![1]!.content;
      const aFirst = content.indexOf("ANSWER-A") < content.indexOf("ANSWER-B");
      return chatReply.json({ rationale: "A cites sources", preferred: aFirst ? "first" : "second" });
    });
    const verdict = await judgePairwise(model(), { criterion: "Cites sources", a: "ANSWER-A [1]", b: "ANSWER-B" });
    expect(verdict).toMatchObject({ winner: "a", consistent: true });
    // A judge that always picks the first shown is inconsistent: a tie.
    server.setHandler(() => chatReply.json({ rationale: "the first", preferred: "first" }));
    const biased = await judgePairwise(model(), { criterion: "Cites sources", a: "ANSWER-A", b: "ANSWER-B" });
    server.setHandler(undefined);
    expect(biased).toMatchObject({ winner: "tie", consistent: false });
  });
});
