import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { parseFlatRubric } from "@rubric/core";
import { aiSdk } from "@rubric/providers";
import { chatReply, startOpenAIChatServer, type OpenAIChatServer } from "@rubric/providers/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scoreOutputs } from "../engine/engine.js";
import { rulesRegistry } from "../registry/registry.js";
import { llmJudge } from "./llm-judge.js";

/**
 * A rubric judged by a Vercel AI SDK model: the real `@ai-sdk/openai-compatible` provider,
 * adapted by `aiSdk`, against a local server speaking the OpenAI chat wire.
 */
let server: OpenAIChatServer;
beforeAll(async () => {
  server = await startOpenAIChatServer();
});
afterAll(() => server.close());

const rubric = parseFlatRubric({
  id: "memo",
  criteria: [
    { id: "clear", text: "The memo is clear", weight: 1, verifier: { kind: "llm-judge", scale: { min: 0, max: 4 } } },
    { id: "figures", text: "Mentions revenue", weight: 1, verifier: { kind: "includes", terms: ["revenue"] } },
  ],
});

describe("an AI SDK model as the judge", () => {
  it("scores a rubric's llm-judge criteria through the SDK, beside its rules, and an SDK error is an error verdict", async () => {
    const model = createOpenAICompatible({
      name: "local",
      baseURL: `${server.url}/v1`,
      supportsStructuredOutputs: true,
    })("judge-7b");
    const registry = rulesRegistry().register(llmJudge(aiSdk(model, { retry: false })));
    server.enqueue(
      chatReply.json({ rationale: "Plain words.", score: 3 }),
      chatReply.raw(400, '{"error": {"message": "context length exceeded"}}'),
    );
    const [good, failed] = await scoreOutputs(
      rubric,
      [
        { id: "a", input: "Write a memo", output: "Revenue rose 4%." },
        { id: "b", input: "Write a memo", output: "Revenue fell." },
      ],
      { registry, concurrency: 1 },
    );
    // clear 3/4 and figures 1 → (0.75 + 1) / 2
    expect(good!.score?.normalized).toBeCloseTo(1.75 / 2, 12);
    expect(good!.verdicts.find((v) => v.criterionId === "clear")).toMatchObject({
      status: "ok",
      score: 0.75,
      rationale: "Plain words.",
    });
    expect(server.requests[0]!.body!.response_format).toMatchObject({ type: "json_schema" });
    // A refused call is an error verdict naming the cause, never a 0; the output stays unscored.
    const verdict = failed!.verdicts.find((v) => v.criterionId === "clear")!;
    expect(verdict.status).toBe("error");
    expect(verdict.error).toMatch(/400.*context length exceeded/);
    expect(failed!.score).toBeNull();
  });
});
