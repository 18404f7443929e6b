import { fileURLToPath } from "node:url";
import { parseRubric, readRubricJsonl, type StagedRubric } from "@rubric/core";
import { llamaCpp, openAICompatible } from "@rubric/providers";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
// The OpenAI-wire test server of @rubric/verifiers: a test fixture, not part of its public API.
import { chatReply, startOpenAIChatServer, type OpenAIChatServer } from "@rubric/providers/testing";
import { runEpisode } from "../dialogue/episode.js";
import { sftExample } from "../sft/corpus.js";
import { llmManager } from "./manager/llm-manager.js";
import { llmStakeholder } from "./stakeholder/llm-stakeholder.js";
import { llmWorker } from "./worker/llm-worker.js";

const SHARED = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../shared/", import.meta.url));
const gold = readRubricJsonl(readFileSync(`${SHARED}/data/gdpval/rubrics-eval.jsonl`, "utf8")).rubrics[0]!
  .rubric as StagedRubric;
const task = { id: gold.taskId!, prompt: "Plan the production schedule for the next quarter." };

describe("LLM roles on the real local model (stories260K: meaningless words, real plumbing)", () => {
  const model = llamaCpp({ modelPath: `${SHARED}/models/stories260K.gguf`, threads: 1 });
  afterAll(() => model.dispose());

  it("runs a whole episode whose grammar-constrained rubric validates", async () => {
    const result = await runEpisode({
      task,
      manager: llmManager(model, { questions: 2, maxCriteria: 4 }),
      stakeholder: llmStakeholder(model, { rubric: gold, persona: "a terse plant manager" }),
      questionBudget: 2,
    });
    expect(result.error).toBeUndefined();
    expect(result.transcript.map((t) => t.type)).toEqual([
      "task",
      "question",
      "answer",
      "question",
      "answer",
      "rubric",
      "end",
    ]);
    // It validates as `rubric validate` would.
    expect(parseRubric(JSON.parse(JSON.stringify(result.rubric))).kind).toBe("flat");
    expect(result.rubric!.criteria.length).toBeGreaterThanOrEqual(1);
    expect(result.costs.tokens).toBeGreaterThan(0);
    // The same episode as supervised data for the manager (SFT from LLM roles).
    const example = sftExample(result.transcript, result.rubric!, "llm");
    expect(example.messages.map((m) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(JSON.parse(example.messages.at(-1)!.content).criteria).toHaveLength(result.rubric!.criteria.length);
  });

  it("a worker produces n seeded samples", async () => {
    const worker = llmWorker(model, { maxTokens: 24 });
    const a = await worker.produce(task, undefined, 2, { seed: 5 });
    const b = await worker.produce(task, undefined, 2, { seed: 5 });
    expect(a.map((o) => o.text)).toEqual(b.map((o) => o.text));
    expect(a).toHaveLength(2);
  });
});

describe("LLM roles against an OpenAI-wire server", () => {
  let server: OpenAIChatServer;
  beforeAll(async () => {
    server = await startOpenAIChatServer();
  });
  afterAll(() => server.close());
  beforeEach(() => server.reset());
  const model = () => openAICompatible({ baseUrl: server.url, model: "m", apiKeyEnv: false, retry: false });

  it("the stakeholder sees the stage outline, never rules, code or judge prompts", async () => {
    server.enqueue(
      chatReply.json({ question: "What must the schedule show?" }),
      chatReply.completion("Weekday capacity per crew, mostly."),
    );
    server.enqueue(chatReply.json({ criteria: [{ text: "Shows weekday capacity per crew", weight: 3 }] }));
    const result = await runEpisode({
      task,
      manager: llmManager(model(), { questions: 1 }),
      stakeholder: llmStakeholder(model(), { rubric: gold }),
      questionBudget: 1,
    });
    expect(result.rubric?.criteria[0]).toMatchObject({
      id: "c1",
      text: "Shows weekday capacity per crew",
      weight: 3,
      verifier: { kind: "llm-judge" },
    });
    const system = server.requests[1]!.body!.messages![0]!.content;
    for (const stage of gold.stages) expect(system).toContain(stage.name);
    for (const rule of gold.stages.flatMap((s) => s.rules)) {
      if (rule.type === "code") expect(system).not.toContain(rule.code.slice(0, 40));
      else expect(system).not.toContain(rule.judge_prompt.slice(0, 40));
      expect(system).not.toContain(rule.name);
    }
    // The manager asked with a JSON schema and the rubric request carries the criteria bounds.
    expect(server.requests[2]!.body!["response_format"]).toMatchObject({ type: "json_schema" });
  });

  it("repairs an invalid rubric once, then fails with a typed error", async () => {
    server.enqueue(
      chatReply.json({ criteria: [{ text: "ok?", weight: 0 }] }),
      chatReply.json({ criteria: [{ text: "Cites sources", weight: 2 }] }),
    );
    const repaired = await runEpisode({
      task,
      manager: llmManager(model(), { questions: 0 }),
      stakeholder: llmStakeholder(model(), { rubric: gold }),
    });
    expect(repaired.rubric?.criteria[0]?.text).toBe("Cites sources");
    expect(server.requests[1]!.body!.messages!.at(-1)!.content).toMatch(
      /^That rubric is invalid \(criteria: expected at least one reward criterion/,
    );
    server.enqueue(chatReply.completion("no json"), chatReply.completion("still none"));
    const failed = await runEpisode({
      task,
      manager: llmManager(model(), { questions: 0 }),
      stakeholder: llmStakeholder(model(), { rubric: gold }),
    });
    expect(failed.error).toMatchObject({
      role: "manager",
      name: "RoleOutputError",
      message: expect.stringContaining("still invalid after 1 repair"),
    });
  });
});
