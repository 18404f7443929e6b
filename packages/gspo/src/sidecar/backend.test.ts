import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { groupAdvantages, parseFlatRubric } from "@rubric/core";
import type { TrainingMetrics } from "@rubric/sidecar";
import { createVerifierRegistry, scoreOutputs } from "@rubric/verifiers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RolloutGroup } from "../trainer/backend.js";
import { SidecarBackend, type TokenPrompt } from "./backend.js";

// A character LM: token 0 starts a sequence, 1 ends it, 2–9 are the letters a–h.
const BOS = 0;
const EOS = 1;
const LETTERS = "abcdefgh";
const decode = (tokens: readonly number[]) => tokens.map((t) => (t >= 2 ? LETTERS[t - 2] : "")).join("");
const POLICY = {
  model: { kind: "tiny", vocab_size: 2 + LETTERS.length, d_model: 32, n_heads: 2, n_layers: 1, max_seq_len: 16 },
  seed: 11,
  eos_token_id: EOS,
  max_new_tokens: 8,
} as const;
const PROMPT: TokenPrompt = [BOS];
const TIMEOUT_MS = 180_000; // a guard for a busy 2-core machine, not a measurement

/** The reward: a rule rubric over the decoded letters, scored by @rubric/verifiers. */
const rubric = parseFlatRubric({
  id: "letters",
  criteria: [
    { id: "starts-with-b", text: "Starts with the letter b", weight: 2, verifier: { kind: "regex", pattern: "^b" } },
    {
      id: "has-a-c-e",
      text: "Contains the letters a, c and e",
      weight: 2,
      verifier: { kind: "includes", terms: ["a", "c", "e"] },
    },
    { id: "short", text: "One to five letters", weight: 1, verifier: { kind: "regex", pattern: "^[a-h]{1,5}$" } },
  ],
});
const registry = createVerifierRegistry({ python: false, js: false });

async function rewards(sequences: readonly { readonly tokens: readonly number[] }[]): Promise<number[]> {
  const scored = await scoreOutputs(
    rubric,
    sequences.map((s, i) => ({ id: String(i), input: "", output: decode(s.tokens) })),
    { registry },
  );
  return scored.map((s) => s.score!.normalized);
}

async function expectedReward(backend: SidecarBackend, seed: number): Promise<number> {
  const r = await rewards(await backend.sample(PROMPT, 128, { seed }));
  return r.reduce((a, b) => a + b, 0) / r.length;
}

describe("SidecarBackend", () => {
  let backend: SidecarBackend;
  let dir: string;
  const metrics: TrainingMetrics[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "rubric-sidecar-backend-"));
    backend = await SidecarBackend.start({ policy: POLICY, threads: 1, onMetrics: (m) => metrics.push(m) });
  }, TIMEOUT_MS);
  afterAll(async () => {
    await backend.close();
    await rm(dir, { recursive: true, force: true });
  }, TIMEOUT_MS);

  it("samples seeded sequences whose log-probs the policy reproduces", async () => {
    expect(backend.kind).toBe("sidecar");
    const sampled = await backend.sample(PROMPT, 8, { seed: 4 });
    expect(await backend.sample(PROMPT, 8, { seed: 4 })).toEqual(sampled);
    const again = await backend.logprobs(
      PROMPT,
      sampled.map((s) => s.tokens),
    );
    sampled.forEach((s, k) => {
      expect(s.tokens.length).toBeGreaterThan(0);
      expect(s.tokens.slice(0, -1)).not.toContain(EOS);
      expect(again[k]).toEqual(s.logprobs.map((l) => expect.closeTo(l, 5)));
    });
  });

  it(
    "GSPO-trains the tiny LM on a rubric reward, and the expected reward rises",
    async () => {
      await backend.save(join(dir, "start"));
      const before = await expectedReward(backend, 1_000);
      metrics.length = 0;
      for (let batch = 0; batch < 30; batch++) {
        const groups: RolloutGroup<TokenPrompt>[] = [];
        for (let g = 0; g < 2; g++) {
          const sampled = await backend.sample(PROMPT, 8, { seed: batch * 10 + g });
          const advantages = groupAdvantages(await rewards(sampled));
          groups.push({
            prompt: PROMPT,
            sequences: sampled.map((s, k) => ({ tokens: s.tokens, logpOld: s.logprobs, advantage: advantages[k]! })),
          });
        }
        for (let step = 0; step < 2; step++)
          await backend.step(groups, { objective: "gspo", epsLow: 0.2, epsHigh: 0.2, learningRate: 0.01, klCoef: 0 });
      }
      const after = await expectedReward(backend, 1_000);
      expect(metrics).toHaveLength(60);
      expect(metrics.every((m) => m.method === "policy.step" && Number.isFinite(m.loss) && m.grad_norm >= 0)).toBe(
        true,
      );
      // Seeded throughout: from ≈ 0.35 (a random policy) to ≈ 0.89 on this run.
      expect(after).toBeGreaterThan(before + 0.3);
      expect(after).toBeGreaterThan(0.7);

      // Back to the start: the same expected reward as before training.
      await backend.load(join(dir, "start"));
      expect(await expectedReward(backend, 1_000)).toBe(before);
    },
    TIMEOUT_MS,
  );

  it("keeps the KL to the reference at zero until the policy moves, and SFT lowers the NLL", async () => {
    await backend.setReference();
    const sequences = await backend.sample(PROMPT, 4, { seed: 9 });
    const groups = [
      {
        prompt: PROMPT,
        sequences: sequences.map((s, k) => ({
          tokens: s.tokens,
          logpOld: s.logprobs,
          advantage: k % 2 === 0 ? 1 : -1,
        })),
      },
    ];
    const options = { objective: "grpo", epsLow: 0.2, epsHigh: 0.2, learningRate: 0.01, klCoef: 0.1 } as const;
    expect((await backend.step(groups, options)).kl).toBe(0);
    expect((await backend.step(groups, options)).kl).toBeGreaterThan(0);

    await backend.resetOptimizer();
    const target = [{ prompt: PROMPT, tokens: [3, 2, 4, 6, EOS] }];
    const first = await backend.sftStep(target, { learningRate: 0.01 });
    let last = first;
    for (let i = 0; i < 20; i++) last = await backend.sftStep(target, { learningRate: 0.01 });
    expect(last).toBeLessThan(first / 2);
  });
});
