import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { GenerateRequest, LanguageModel } from "@rubric/core";
import { llamaCpp, openAICompatible, ProviderHttpError } from "@rubric/providers";
import {
  chatReply,
  type OpenAIChatServer,
  type RecordedRequest,
  startOpenAIChatServer,
} from "@rubric/providers/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AgentView } from "../environment/environment.js";
import { rollout } from "../rollout/rollout.js";
import { PolicyGenerateError } from "../errors.js";
import { TOY_TASKS, toyGrammar, toyQa } from "./__fixtures__/toy-qa.js";
import { llmPolicy, rowSeed } from "./llm-policy.js";
import { policyMessages, policySystemPrompt } from "./prompts.js";

const MODEL_PATH = fileURLToPath(new URL("../../../../../shared/models/stories260K.gguf", import.meta.url));
if (!existsSync(MODEL_PATH))
  throw new Error(`${MODEL_PATH} is missing: these tests run the real local model from ../shared/models`);

const env = toyQa();

/** The model, with every request it was sent. */
function recording(model: LanguageModel): { model: LanguageModel; requests: GenerateRequest[] } {
  const requests: GenerateRequest[] = [];
  return {
    requests,
    model: {
      provider: model.provider,
      modelId: model.modelId,
      generate: (request) => {
        requests.push(request);
        return model.generate(request);
      },
    },
  };
}

describe("llmPolicy on the real local model (stories260K: garbage words, real plumbing)", () => {
  const llama = llamaCpp({ modelPath: MODEL_PATH, threads: 1 });
  afterAll(() => llama.dispose());

  it("answers every view of a rollout, with ARCO's prompts, and the environment judges each output", async () => {
    const { model, requests } = recording(llama);
    const policy = llmPolicy(model, { environment: env, concurrency: 2 });
    const episodes = await rollout(env, TOY_TASKS, policy, { temperature: 0.8, seed: "llama", replicas: 2 });
    expect(episodes).toHaveLength(4);
    const steps = episodes.flatMap((e) => e.steps);
    expect(requests).toHaveLength(steps.length);
    for (const step of steps) {
      const parsed = toyGrammar.parse(step.decision.text);
      // Whatever the model wrote, the environment read it as its grammar says.
      expect(step.transition.kind === "invalid").toBe(parsed === undefined);
      const request = requests.find(
        (r) => JSON.stringify(r.messages) === JSON.stringify(policyMessages(env, step.view)),
      );
      expect(
        request,
        `no request carried the prompt of ${step.view.taskId} step ${step.view.history.length}`,
      ).toBeDefined();
      expect(request?.maxTokens).toBe(64);
      expect(request?.temperature).toBe(0.8);
    }
    // An episode that ran out of budget saw the forced-finish prompt.
    const forced = steps.filter((s) => s.view.mustFinish);
    for (const s of forced) expect(policyMessages(env, s.view)[1]?.content).toContain("You must answer now");
  }, 120_000);

  it("draws from the row's seed: the same seeds give the same texts, another seed another text", async () => {
    const policy = llmPolicy(llama, { environment: env, logProbs: true });
    const view: AgentView = {
      taskId: "q1",
      task: TOY_TASKS[0]!.question,
      history: [],
      budgetLeft: 2,
      mustFinish: false,
    };
    const a = await policy.act([view, view], { temperature: 1, seeds: ["s/1", "s/2"] });
    const b = await policy.act([view], { temperature: 1, seeds: ["s/1"] });
    expect(b[0]?.text).toBe(a[0]?.text);
    expect(a[1]?.text).not.toBe(a[0]?.text);
    // Asked for, the provider's token log-probs come back summed: a log-probability of the text.
    expect(a[0]?.logProb).toBeLessThan(0);
    expect(Number.isFinite(a[0]?.logProb)).toBe(true);
  }, 60_000);
});

describe("llmPolicy against an OpenAI-compatible server on 127.0.0.1", () => {
  let server: OpenAIChatServer;
  beforeAll(async () => {
    server = await startOpenAIChatServer();
  });
  afterEach(() => {
    server.reset();
    server.setHandler(undefined);
  });
  afterAll(() => server.close());

  const remote = () =>
    openAICompatible({ baseUrl: server.url, model: "pi", apiKeyEnv: false, retry: { retries: 2, baseDelayMs: 1 } });

  /** A server-side agent that acts on the prompt it receives: it only succeeds when the prompt is right. */
  function promptReadingAgent() {
    server.setHandler((request) => {
      const [system, user] = request.body?.messages ?? [];
      if (system?.content !== policySystemPrompt(env)) return chatReply.error(400, "wrong system prompt");
      const content = user?.content ?? "";
      if (content.includes("You must answer now")) return chatReply.completion("Finish[Aln]");
      if (content.includes("History:\n(none)"))
        return chatReply.completion("Thought: find it.\nSearch[capital of Norland]");
      return chatReply.completion("Search[river Vessby]");
    });
  }

  it("plays whole episodes from the prompts it sends, with a seed per row and 64 tokens", async () => {
    promptReadingAgent();
    const policy = llmPolicy(remote(), { environment: env });
    const [episode] = await rollout(env, [TOY_TASKS[0]!], policy, { temperature: 0.7, seed: 9 });
    expect(episode?.steps.map((s) => s.transition.actionText)).toEqual([
      "Search[capital of Norland]",
      "Search[river Vessby]",
      "Finish[Aln]",
    ]);
    expect(episode?.reward).toBe(1);
    expect(server.requests.map((r) => r.body?.seed)).toEqual([0, 1, 2].map((step) => rowSeed(`9/q1/0/${step}`)));
    expect(server.requests.every((r) => r.body?.max_tokens === 64 && r.body?.temperature === 0.7)).toBe(true);
  });

  it("survives a 500 through the provider's retry, and a permanent failure names the task and step", async () => {
    promptReadingAgent();
    server.enqueue(chatReply.serverError(500));
    const policy = llmPolicy(remote(), { environment: env });
    const view: AgentView = { taskId: "q7", task: "Q?", history: [], budgetLeft: 2, mustFinish: false };
    const [decision] = await policy.act([view], { temperature: 0, seeds: ["x"] });
    expect(decision?.text).toContain("Search[capital of Norland]");
    expect(server.requestCount).toBe(2);

    server.setHandler(() => chatReply.serverError(500));
    const later = { ...view, history: [{ action: "Search[a]", observation: "b" }] };
    const error = await policy.act([view, later], { temperature: 0, seeds: ["x", "y"] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PolicyGenerateError);
    expect((error as PolicyGenerateError).code).toBe("rlxar.policy-generate");
    expect((error as PolicyGenerateError).message).toMatch(/task "q7", step [01]:/);
    expect((error as PolicyGenerateError).cause).toBeInstanceOf(ProviderHttpError);
  });

  it("a failed row aborts the batch's other requests: none of them is retried afterwards", async () => {
    const TASK = "Which request does the abort cut?";
    // Row 1's server never answers and its timeout is 10 s: only an abort ends its request soon.
    // Row 0 fails once row 1 is on the wire, so the abort has a request to cut.
    const isFirst = (request: RecordedRequest) => request.body?.messages?.[1]?.content.includes("History:\n(none)");
    // Only this test's rows count: a retry the previous test aborted may still reach the server.
    const ours = (request: RecordedRequest) => request.body?.messages?.[1]?.content.includes(TASK) === true;
    server.setHandler(async (request) => {
      if (!isFirst(request)) return chatReply.hang();
      while (!server.requests.some((r) => ours(r) && !isFirst(r)))
        await new Promise((resolve) => setTimeout(resolve, 5));
      return chatReply.serverError(500);
    });
    const model = openAICompatible({
      baseUrl: server.url,
      model: "pi",
      apiKeyEnv: false,
      retry: { retries: 2, baseDelayMs: 1, timeoutMs: 10_000 },
    });
    const policy = llmPolicy(model, { environment: env });
    const first: AgentView = { taskId: "q8", task: TASK, history: [], budgetLeft: 2, mustFinish: false };
    const hanging = { ...first, taskId: "q9", history: [{ action: "Search[a]", observation: "b" }] };
    const error = await policy.act([first, hanging], { temperature: 0, seeds: ["x", "y"] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ taskId: "q8", step: 0 });
    const attempts = () => server.requests.filter((r) => ours(r) && !isFirst(r));
    expect(attempts()).toHaveLength(1);
    // Without the abort this waits for the 10 s timeout and the test's own 5 s limit fails it.
    await attempts()[0]!.closed;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(attempts()).toHaveLength(1);
  }, 5_000);

  it("keeps at most `concurrency` requests in flight, and returns decisions in view order", async () => {
    let inFlight = 0;
    let most = 0;
    server.setHandler(async (request) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 30));
      inFlight--;
      return chatReply.completion(`Finish[${request.body?.seed}]`);
    });
    const policy = llmPolicy(remote(), { environment: env, concurrency: 2 });
    const views = TOY_TASKS.flatMap((t) =>
      [0, 1, 2].map(
        (i): AgentView => ({ taskId: `${t.id}-${i}`, task: t.question, history: [], budgetLeft: 2, mustFinish: false }),
      ),
    );
    const seeds = views.map((v) => v.taskId);
    const decisions = await policy.act(views, { temperature: 0.7, seeds });
    expect(most).toBe(2);
    expect(decisions.map((d) => d.text)).toEqual(seeds.map((s) => `Finish[${rowSeed(s)}]`));
  });

  it("reports the sum of the server's token log-probs as logProb, when asked", async () => {
    server.enqueue(
      chatReply.withLogprobs("Finish[yes]", [
        { token: "Finish", logprob: -0.5 },
        { token: "[yes]", logprob: -0.25 },
      ]),
    );
    const policy = llmPolicy(remote(), { environment: env, logProbs: true });
    const view: AgentView = { taskId: "q2", task: "Is it?", history: [], budgetLeft: 2, mustFinish: false };
    const [decision] = await policy.act([view], { temperature: 1, seeds: ["z"] });
    expect(decision).toEqual({ text: "Finish[yes]", logProb: -0.75, trace: { finishReason: "stop" } });
    expect(server.requests[0]?.body?.logprobs).toBe(true);
  });
});
