import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EOS_ID, byteBpeTokenizer } from "@rubric/arco-heads";
import { SidecarClient } from "@rubric/sidecar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentView } from "../environment/environment.js";
import { RlxarInputError } from "../errors.js";
import { TOY_TASKS, toyQa } from "./__fixtures__/toy-qa.js";
import type { PolicyDecision, TrainablePolicy } from "./policy.js";
import { policyPromptIds, sidecarPolicy, trainPolicyTokenizer } from "./sidecar-policy.js";

const TIMEOUT_MS = 120_000; // a guard for a busy 2-core machine, not a measurement
const env = toyQa();
const tokenizer = trainPolicyTokenizer(
  env,
  TOY_TASKS.flatMap((t) => [t.question, ...t.paragraphs, `Finish[${t.answer}]`, "Search[capital of Norland]"]),
  400,
);
const MAX_SEQ = 384;
const view: AgentView = { taskId: "q1", task: TOY_TASKS[0]!.question, history: [], budgetLeft: 2, mustFinish: false };
const later: AgentView = {
  ...view,
  history: [{ action: "Search[capital of Norland]", observation: TOY_TASKS[0]!.paragraphs[0]! }],
  budgetLeft: 1,
};

describe("sidecarPolicy: a causal LM on token ids in the Python sidecar", () => {
  let client: SidecarClient;
  let policy: TrainablePolicy;
  let dir: string;
  const promptOf = (v: AgentView) => policyPromptIds({ environment: env, tokenizer }, v, MAX_SEQ - 8 + 1).ids;
  const logProbOf = async (v: AgentView, tokens: readonly number[]) => {
    const { logprobs } = await client.request("policy.logprobs", { prompt: promptOf(v), sequences: [[...tokens]] });
    return (logprobs[0] ?? []).reduce((s, x) => s + x, 0);
  };
  const tokensOf = (d: PolicyDecision) => (d.trace as { tokens: number[] }).tokens;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "rlxar-sidecar-policy-"));
    client = await SidecarClient.start({ threads: 1 });
    policy = await sidecarPolicy(client, {
      environment: env,
      tokenizer,
      maxNewTokens: 8,
      init: {
        model: { kind: "tiny", vocab_size: 400, d_model: 16, n_heads: 2, n_layers: 1, max_seq_len: MAX_SEQ },
        seed: 3,
        learning_rate: 1e-2,
      },
    });
  }, TIMEOUT_MS);
  afterAll(async () => {
    await client?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("fits the prompt into the model's positions by dropping the oldest turns", () => {
    const whole = policyPromptIds({ environment: env, tokenizer }, later, 10_000);
    expect(whole.droppedTurns).toBe(0);
    const fitted = policyPromptIds({ environment: env, tokenizer }, later, whole.ids.length - 1);
    expect(fitted.droppedTurns).toBe(1);
    expect(() => policyPromptIds({ environment: env, tokenizer }, view, 10)).toThrow(RlxarInputError);
  });

  it(
    "acts from per-row seeds, and each decision's logProb is log π of its tokens",
    async () => {
      const a = await policy.act([view, later, view], { temperature: 1, seeds: ["r/0", "r/1", "r/2"] });
      const b = await policy.act([view], { temperature: 1, seeds: ["r/0"] });
      expect(b[0]).toEqual(a[0]);
      expect(a.map((d) => d.text)).not.toEqual([a[0]?.text, a[0]?.text, a[0]?.text]);
      for (const [i, d] of a.entries()) {
        const tokens = tokensOf(d);
        expect(tokens.length).toBeGreaterThan(0);
        expect(tokens.length).toBeLessThanOrEqual(8);
        expect(d.text).toBe(tokenizer.decode(tokens.filter((t) => t !== EOS_ID)));
        // float32: the sampler's incremental forwards and the batch forward differ in the last bits.
        expect(d.logProb).toBeCloseTo(await logProbOf([view, later, view][i]!, tokens), 4);
      }
      // Greedy: the same text whatever the seed.
      const g1 = await policy.act([view], { temperature: 0, seeds: ["x"] });
      const g2 = await policy.act([view], { temperature: 0, seeds: ["y"] });
      expect(g2[0]?.text).toBe(g1[0]?.text);
    },
    TIMEOUT_MS,
  );

  it(
    "update with a positive advantage raises that decision's log-prob, a negative one lowers it",
    async () => {
      const [up, down] = await policy.act([view, later], { temperature: 1, seeds: ["u/0", "u/1"] });
      const before = [await logProbOf(view, tokensOf(up!)), await logProbOf(later, tokensOf(down!))];
      const metrics = await policy.update(
        [
          { view, decision: up!, advantage: 1 },
          { view: later, decision: down!, advantage: -1 },
        ],
        { learningRate: 1e-2, klCoef: 0 },
      );
      // −(1/N) Σ A·log π before the step.
      expect(metrics.policyLoss).toBeCloseTo(-(before[0]! - before[1]!) / 2, 6);
      expect(metrics.samples).toBe(2);
      expect(metrics.gradNorm).toBeGreaterThan(0);
      expect(await logProbOf(view, tokensOf(up!))).toBeGreaterThan(before[0]!);
      expect(await logProbOf(later, tokensOf(down!))).toBeLessThan(before[1]!);
    },
    TIMEOUT_MS,
  );

  it(
    "steps on the gradient of −A·Σ_t log π (not a per-token mean): L times the SFT gradient of the same tokens",
    async () => {
      const at = join(dir, "before-gradient");
      await policy.save(at);
      const [d] = await policy.act([later], { temperature: 1, seeds: ["g/3"] });
      const tokens = tokensOf(d!);
      const reinforce = await policy.update([{ view: later, decision: d!, advantage: 1 }], {
        learningRate: 1e-2,
        klCoef: 0,
      });
      await policy.load(at);
      // SFT's loss is the mean NLL per token of the same ids, at the same weights.
      const sft = await client.request("policy.sft_step", {
        examples: [{ prompt: promptOf(later), tokens }],
        learning_rate: 1e-2,
      });
      expect(tokens.length).toBeGreaterThan(1);
      expect(reinforce.gradNorm).toBeCloseTo(tokens.length * sft.grad_norm, 4);
      await policy.load(at);
    },
    TIMEOUT_MS,
  );

  it(
    "refuses a KL term before a reference exists, then reports the k3 KL to it",
    async () => {
      const [d] = await policy.act([view], { temperature: 1, seeds: ["k"] });
      const sample = { view, decision: d!, advantage: 1 };
      await expect(policy.update([sample], { learningRate: 1e-2, klCoef: 0.05 })).rejects.toThrow(/setReference/);
      await policy.setReference();
      const first = await policy.update([sample], { learningRate: 1e-2, klCoef: 0.05 });
      expect(first.kl).toBeCloseTo(0, 12); // π = π_ref before the first step after setReference
      const second = await policy.update([sample], { learningRate: 1e-2, klCoef: 0.05 });
      expect(second.kl).toBeGreaterThan(0);
    },
    TIMEOUT_MS,
  );

  it(
    "sft makes the target action likelier, reporting the mean NLL before the step",
    async () => {
      const target = [...tokenizer.encode("Finish[Aln]"), EOS_ID];
      const before = await logProbOf(later, target);
      const { loss } = await policy.sft([{ view: later, text: "Finish[Aln]" }], { learningRate: 1e-2 });
      expect(loss).toBeCloseTo(-before / target.length, 6);
      expect(await logProbOf(later, target)).toBeGreaterThan(before);
    },
    TIMEOUT_MS,
  );

  it(
    "restores a checkpoint exactly: the same log-probs and the same decisions",
    async () => {
      await policy.save(dir);
      expect(
        byteBpeTokenizer(JSON.parse(await readFile(join(dir, "tokenizer.json"), "utf8"))).encode("Search[x]"),
      ).toEqual(tokenizer.encode("Search[x]"));
      const [saved] = await policy.act([view], { temperature: 1, seeds: ["c"] });
      const savedLogProb = await logProbOf(view, tokensOf(saved!));
      await policy.update([{ view, decision: saved!, advantage: 1 }], { learningRate: 1e-2, klCoef: 0.05 });
      expect(await logProbOf(view, tokensOf(saved!))).not.toBeCloseTo(savedLogProb, 6);
      await policy.load(dir);
      expect(await logProbOf(view, tokensOf(saved!))).toBeCloseTo(savedLogProb, 10);
      expect((await policy.act([view], { temperature: 1, seeds: ["c"] }))[0]).toEqual(saved);
      // The reference came back with it: a KL step is still allowed.
      await expect(
        policy.update([{ view, decision: saved!, advantage: 1 }], { learningRate: 1e-2, klCoef: 0.05 }),
      ).resolves.toMatchObject({ samples: 1 });
    },
    TIMEOUT_MS,
  );

  it("refuses the small transformer without a tokenizer here: it has none of its own to lend", async () => {
    await expect(
      sidecarPolicy(client, { environment: env, init: { model: { kind: "tiny", vocab_size: 64 }, seed: 1 } }),
    ).rejects.toThrow(/options\.tokenizer.*no tokenizer of its own/);
  });
});
