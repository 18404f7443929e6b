import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SidecarClient } from "@rubric/sidecar";
import { openAICompatible } from "@rubric/providers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentView } from "../environment/environment.js";
import { AdapterLoadError } from "../errors.js";
import { type LoraServer, startLoraServer } from "./__fixtures__/lora-server.js";
import { TOY_TASKS, toyQa } from "./__fixtures__/toy-qa.js";
import { rowSeed } from "./llm-policy.js";
import type { PolicyDecision } from "./policy.js";
import { type AdapterEvent, type ServedPolicy, servedPolicy } from "./served-policy.js";
import { policyPromptIds, trainPolicyTokenizer } from "./sidecar-policy.js";

const TIMEOUT_MS = 180_000; // a guard for a busy 2-core machine, not a measurement
const env = toyQa();
const tokenizer = trainPolicyTokenizer(
  env,
  TOY_TASKS.flatMap((t) => [t.question, ...t.paragraphs, `Finish[${t.answer}]`]),
  400,
);
const view: AgentView = { taskId: "q1", task: TOY_TASKS[0]!.question, history: [], budgetLeft: 2, mustFinish: false };

describe("servedPolicy: rollouts from a server that loads the trainer's adapters at runtime", () => {
  let trainerSidecar: SidecarClient;
  let servingSidecar: SidecarClient;
  let server: LoraServer;
  let root: string;
  let policy: ServedPolicy;
  const events: AdapterEvent[] = [];

  /** What the trainer's own weights sample for `view` at `seed`: the served text must be this. */
  const trainerSample = async (seed: string) => {
    const { sequences } = await trainerSidecar.request("policy.sample", {
      prompt: policyPromptIds({ environment: env, tokenizer }, view, 10_000).ids,
      n: 1,
      seed: rowSeed(seed),
      temperature: 1,
      max_new_tokens: 8,
      eos_token_id: 2,
    });
    const tokens = sequences[0]!.tokens;
    return {
      text: tokenizer.decode(tokens.at(-1) === 2 ? tokens.slice(0, -1) : tokens),
      logProb: sequences[0]!.logprobs.reduce((s, x) => s + x, 0),
    };
  };
  const served = async (seed: string): Promise<PolicyDecision> =>
    (await policy.act([view], { temperature: 1, seeds: [seed] }))[0]!;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "rlxar-served-"));
    [trainerSidecar, servingSidecar] = await Promise.all([
      SidecarClient.start({ threads: 1 }),
      SidecarClient.start({ threads: 1 }),
    ]);
    server = await startLoraServer(servingSidecar, tokenizer);
    policy = await servedPolicy(trainerSidecar, {
      environment: env,
      tokenizer,
      maxNewTokens: 8,
      init: {
        model: { kind: "tiny", vocab_size: 400, d_model: 16, n_heads: 2, n_layers: 1, max_seq_len: 384 },
        seed: 5,
        learning_rate: 1e-2,
      },
      serverUrl: server.url,
      modelFor: (adapter) =>
        openAICompatible({
          baseUrl: `${server.url}/v1`,
          model: adapter,
          apiKeyEnv: false,
          retry: { retries: 2, baseDelayMs: 1, timeoutMs: 1_000 },
        }),
      adapterRoot: root,
      completions: { logProbs: true },
      onAdapter: (event) => events.push(event),
    });
  }, TIMEOUT_MS);
  afterAll(async () => {
    await server?.close();
    await Promise.all([trainerSidecar?.close(), servingSidecar?.close()]);
    await rm(root, { recursive: true, force: true });
  });

  it(
    "serves the first version, sampled from the trainer's weights",
    async () => {
      expect(policy.adapter).toBe("pi-v0001");
      expect([...server.adapters.keys()]).toEqual(["pi-v0001"]);
      expect(server.adapters.get("pi-v0001")).toBe(join(root, "pi-v0001"));
      const decision = await served("a");
      const own = await trainerSample("a");
      expect(decision.text).toBe(own.text);
      expect(decision.logProb).toBeCloseTo(own.logProb, 4);
      expect(server.requests.at(-1)?.body).toMatchObject({ model: "pi-v0001", max_tokens: 8, seed: rowSeed("a") });
    },
    TIMEOUT_MS,
  );

  it(
    "after an update the server serves the new weights under a new name, and the old one is unloaded",
    async () => {
      const before = await served("b");
      const metrics = await policy.update([{ view, decision: before, advantage: 1 }], {
        learningRate: 5e-2,
        klCoef: 0,
      });
      expect(metrics.samples).toBe(1);
      expect(policy.adapter).toBe("pi-v0002");
      expect([...server.adapters.keys()]).toEqual(["pi-v0002"]);
      expect(events.slice(-2)).toEqual([
        { kind: "loaded", adapter: "pi-v0002", path: join(root, "pi-v0002") },
        { kind: "unloaded", adapter: "pi-v0001" },
      ]);
      const after = await served("b");
      const own = await trainerSample("b");
      expect(after.text).toBe(own.text);
      expect(after.logProb).toBeCloseTo(own.logProb, 4);
      // The served weights moved: the reinforced text is likelier under the new adapter.
      if (after.text === before.text) expect(after.logProb).toBeGreaterThan(before.logProb!);
      else expect(after.logProb).not.toBeCloseTo(before.logProb!, 4);
    },
    TIMEOUT_MS,
  );

  it(
    "a failed load is an AdapterLoadError and the old adapter stays in service; publish tries again",
    async () => {
      server.failNextLoad(500);
      const decision = await served("c");
      const error = await policy.sft([{ view, text: "Finish[Aln]" }], { learningRate: 1e-2 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AdapterLoadError);
      expect(error).toMatchObject({
        code: "rlxar.adapter-load",
        status: 500,
        adapter: "pi-v0003",
        serving: "pi-v0002",
      });
      expect((error as Error).message).toMatch(/"pi-v0002" stays in service/);
      expect(policy.adapter).toBe("pi-v0002");
      await served("c");
      expect(server.requests.at(-1)?.body).toMatchObject({ model: "pi-v0002" });
      expect(decision).toBeDefined();
      // The retry publishes the trained weights under the next name.
      expect(await policy.publish()).toBe("pi-v0004");
      expect([...server.adapters.keys()]).toEqual(["pi-v0004"]);
      expect((await served("d")).text).toBe((await trainerSample("d")).text);
    },
    TIMEOUT_MS,
  );

  it(
    "a failed unload leaves the old adapter loaded but serves the new one, and says so",
    async () => {
      server.failNextUnload(500);
      expect(await policy.publish()).toBe("pi-v0005");
      expect([...server.adapters.keys()]).toEqual(["pi-v0004", "pi-v0005"]);
      expect(events.at(-1)).toMatchObject({ kind: "unload-failed", adapter: "pi-v0004" });
      expect((events.at(-1) as { detail: string }).detail).toMatch(/^HTTP 500/);
      await served("f");
      expect(server.requests.at(-1)?.body).toMatchObject({ model: "pi-v0005" });
    },
    TIMEOUT_MS,
  );

  it(
    "a completion that times out is retried by the provider and answers",
    async () => {
      server.delayNextCompletion(2_500);
      const count = server.requests.length;
      const decision = await served("e");
      expect(decision.text).toBe((await trainerSample("e")).text);
      const chats = server.requests.slice(count).filter((r) => r.path === "/v1/chat/completions");
      expect(chats.length).toBe(2);
    },
    TIMEOUT_MS,
  );

  // Last: it takes the policy out of service.
  it(
    "close unloads the adapter in service, so the server holds no finished policy; act then refuses",
    async () => {
      const adapter = policy.adapter!;
      expect(server.adapters.has(adapter)).toBe(true);
      await policy.close();
      expect(server.adapters.has(adapter)).toBe(false);
      expect(events.at(-1)).toEqual({ kind: "unloaded", adapter });
      expect(policy.adapter).toBeUndefined();
      await expect(served("x")).rejects.toThrow(/no adapter is in service/);
      const asked = server.requests.length;
      await policy.close(); // nothing left to unload: asks nothing
      expect(server.requests.length).toBe(asked);
    },
    TIMEOUT_MS,
  );
});
