// The sidecar policy on a transformers model with its own tokenizer, chat template and LoRA: what
// `repro arco --policy sidecar:<model>` trains. Needs RUBRIC_HF_PYTHON (see the fixture); the same
// code path with a tokenizer on this side runs everywhere in sidecar-policy.test.ts.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SidecarClient } from "@rubric/sidecar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HF_PYTHON, HF_SKIP_REASON, writeHfModel } from "../../../sidecar/src/client/__fixtures__/hf-model.js";
import type { AgentView } from "../environment/environment.js";
import { TOY_TASKS, toyQa } from "./__fixtures__/toy-qa.js";
import type { PolicyDecision, TrainablePolicy } from "./policy.js";
import { policyMessages } from "./prompts.js";
import { sidecarPolicy } from "./sidecar-policy.js";

const TIMEOUT_MS = 180_000; // a guard for a busy 2-core machine, not a measurement
const env = toyQa();
const view: AgentView = { taskId: "q1", task: TOY_TASKS[0]!.question, history: [], budgetLeft: 2, mustFinish: false };
const later: AgentView = {
  ...view,
  history: [{ action: "Search[capital of Norland]", observation: TOY_TASKS[0]!.paragraphs[0]! }],
  budgetLeft: 1,
};
const corpus = [
  ...[view, later].flatMap((v) => policyMessages(env, v).map((m) => m.content)),
  ...TOY_TASKS.flatMap((t) => [t.question, ...t.paragraphs, `Finish[${t.answer}]`]),
];

describe.skipIf(HF_PYTHON === undefined)(`sidecarPolicy on a transformers model (${HF_SKIP_REASON})`, () => {
  let client: SidecarClient;
  let dir: string;
  let chatModel: string;
  let plainModel: string;
  let policy: TrainablePolicy;
  const tokensOf = (d: PolicyDecision) => (d.trace as { tokens: number[] }).tokens;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "rlxar-hf-policy-"));
    const shape = { vocab: 500, dModel: 32, layers: 2, heads: 4, maxPositions: 512 };
    chatModel = await writeHfModel(join(dir, "chat"), corpus, { ...shape, chatTemplate: true });
    plainModel = await writeHfModel(join(dir, "plain"), corpus, shape);
    client = await SidecarClient.start({ python: HF_PYTHON!, threads: 1 });
    policy = await sidecarPolicy(client, {
      environment: env,
      maxNewTokens: 8,
      init: {
        model: { kind: "transformers", name: chatModel },
        seed: 3,
      },
    });
  }, TIMEOUT_MS);
  afterAll(async () => {
    await client?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it(
    "prompts through the model's chat template and decodes with its own tokenizer",
    async () => {
      const [decision] = await policy.act([later], { temperature: 1, seeds: ["t/0"] });
      const [prompt] = await client
        .request("policy.chat", { conversations: [policyMessages(env, later)] })
        .then((r) => r.ids);
      const [text] = (await client.request("policy.detokenize", { ids: [prompt!] })).texts;
      expect(text).toMatch(/^<\|system\|>\n/);
      expect(text).toMatch(/<\|assistant\|>\n$/);
      const tokens = tokensOf(decision!);
      const { logprobs } = await client.request("policy.logprobs", { prompt: prompt!, sequences: [tokens] });
      // The decision's log-prob is log π of its tokens after exactly that prompt.
      expect(decision!.logProb).toBeCloseTo(
        logprobs[0]!.reduce((s, x) => s + x, 0),
        4,
      );
      const eos = (await client.request("health", {})).policy!.tokenizer!.eos_token_id!;
      const shown = tokens.at(-1) === eos ? tokens.slice(0, -1) : tokens;
      expect(decision!.text).toBe((await client.request("policy.detokenize", { ids: [shown] })).texts[0]);
    },
    TIMEOUT_MS,
  );

  it(
    "learns actions by SFT until greedy decoding writes them",
    async () => {
      const examples = [
        { view, text: "Search[capital of Norland]" },
        { view: later, text: `Finish[${TOY_TASKS[0]!.answer}]` },
      ];
      const losses: number[] = [];
      for (let step = 0; step < 60; step++) losses.push((await policy.sft(examples, { learningRate: 3e-2 })).loss);
      expect(losses.at(-1)!).toBeLessThan(losses[0]! / 4);
      const greedy = await policy.act([view, later], { temperature: 0, seeds: ["g/0", "g/1"] });
      expect(greedy.map((d) => d.text)).toEqual(examples.map((e) => e.text));
    },
    TIMEOUT_MS,
  );

  it(
    "REINFORCE steps with a KL leash to the reference: a positive advantage raises log π, the KL is measured",
    async () => {
      await policy.setReference();
      const [d] = await policy.act([view], { temperature: 1, seeds: ["r/1"] });
      const sample = { view, decision: d!, advantage: 1 };
      const first = await policy.update([sample], { learningRate: 1e-2, klCoef: 0.05 });
      expect(first.kl).toBeCloseTo(0, 10);
      const second = await policy.update([sample], { learningRate: 1e-2, klCoef: 0.05 });
      expect(second.kl).toBeGreaterThan(0);
      // −(1/N) Σ A·log π fell: the sampled action became likelier.
      expect(second.policyLoss).toBeLessThan(first.policyLoss);
    },
    TIMEOUT_MS,
  );

  it(
    "acts on a view whose whole prompt outgrows the model's positions, its oldest turns dropped",
    async () => {
      const long: AgentView = {
        ...later,
        history: Array.from({ length: 12 }, (_, i) => ({
          action: `Search[capital of Norland ${i}]`,
          observation: TOY_TASKS[i % TOY_TASKS.length]!.paragraphs.join(" "),
        })),
      };
      const [d] = await policy.act([long], { temperature: 1, seeds: ["l"] });
      expect(tokensOf(d!).length).toBeGreaterThan(0);
    },
    TIMEOUT_MS,
  );

  it(
    "writes role lines after the model's start token where the tokenizer has no chat template, and refuses a template it lacks",
    async () => {
      const plain = await sidecarPolicy(client, {
        environment: env,
        maxNewTokens: 4,
        init: { model: { kind: "transformers", name: plainModel }, seed: 1 },
      });
      const [d] = await plain.act([view], { temperature: 1, seeds: ["p"] });
      expect(tokensOf(d!).length).toBeGreaterThan(0);
      await expect(
        sidecarPolicy(client, {
          environment: env,
          promptFormat: "chat-template",
          init: { model: { kind: "transformers", name: plainModel }, seed: 1 },
        }),
      ).rejects.toThrow(/options\.promptFormat.*no chat template/);
    },
    TIMEOUT_MS,
  );

  it(
    "trains a LoRA adapter on q/v (ARCO's r 8, α 32): SFT lowers the loss through it",
    async () => {
      const adapted = await sidecarPolicy(client, {
        environment: env,
        maxNewTokens: 8,
        init: {
          model: { kind: "transformers", name: chatModel, lora: { r: 8, lora_alpha: 32, lora_dropout: 0 } },
          seed: 3,
        },
      });
      const examples = [{ view: later, text: `Finish[${TOY_TASKS[0]!.answer}]` }];
      const losses: number[] = [];
      for (let step = 0; step < 20; step++) losses.push((await adapted.sft(examples, { learningRate: 1e-1 })).loss);
      // A random 32-wide model adapts slowly through q/v alone; the loss must still fall.
      expect(losses.at(-1)!).toBeLessThan(losses[0]! - 0.1);
    },
    TIMEOUT_MS,
  );
});
