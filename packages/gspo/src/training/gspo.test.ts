import { fileURLToPath } from "node:url";
import { createRng, gspoObjective } from "@rubric/core";
import { type GymTask, gymTask, loadGdpval, policyManager, runEpisode, simulatedStakeholder, simulatedWorker } from "@rubric/autointeract";
import { beforeAll, describe, expect, it } from "vitest";
import { featurize } from "../policy/features.js";
import { RubricPolicy } from "../policy/rubric-policy.js";
import { Adam } from "../policy/sft.js";
import { expectedReturn, gspoBatch, policyObjective, type TrainingTask } from "./gspo.js";

const GDPVAL = `${process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../shared/", import.meta.url))}/data/gdpval`;
const STAKEHOLDER_SEED = 21;
let train: TrainingTask[];
let heldOut: TrainingTask[];

async function dialogues(tasks: GymTask[]): Promise<TrainingTask[]> {
  const out: TrainingTask[] = [];
  for (const task of tasks) {
    const episode = await runEpisode({ task, manager: policyManager(), stakeholder: simulatedStakeholder(task, STAKEHOLDER_SEED), questionBudget: 5 });
    out.push({ task, answers: episode.transcript.flatMap((t) => (t.type === "answer" ? [t.text] : [])) });
  }
  return out;
}

beforeAll(async () => {
  const gdpval = await loadGdpval(GDPVAL);
  const asTask = (e: (typeof gdpval.train)[number]): GymTask => gymTask(e.task);
  train = await dialogues(gdpval.train.slice(0, 24).map(asTask));
  heldOut = await dialogues(gdpval.eval.slice(0, 12).map(asTask));
});

describe("GSPO on the rubric policy", () => {
  it("chains core's per-token GSPO gradient into the parameters exactly (ratio and clipping included)", () => {
    const policy = new RubricPolicy({ dim: 32, seed: 5 });
    const x = featurize(train[0]!.task, train[0]!.answers, 32);
    const rng = createRng(8);
    const group = Array.from({ length: 5 }, () => policy.sample(x, rng));
    const logpOld = group.map((a) => policy.tokenLogProbs(x, a));
    // Move θ off θ_old so that ratios differ from 1.
    for (let i = 0; i < policy.W.length; i++) policy.W[i]! += 0.05 * Math.sin(i * 1.7);
    const ratios = gspoObjective({ logpNew: group.map((a) => policy.tokenLogProbs(x, a)), logpOld, advantages: [1, 1, 1, 1, 1] }).ratios;
    // Advantages that put the first two sequences in the clipped state (A pushing s further out
    // of the band) and the rest not, with a band narrower than every |s − 1|.
    const advantages = ratios.map((r, k) => (k < 2 ? 1 : -1) * Math.sign(r - 1) * (k + 1));
    const eps = Math.min(...ratios.map((r) => Math.abs(r - 1))) / 2;
    const objective = () => gspoObjective({ logpNew: group.map((a) => policy.tokenLogProbs(x, a)), logpOld, advantages, epsLow: eps, epsHigh: eps });
    const loss = () => objective().loss;
    const result = objective();
    expect(result.clippedFraction).toBe(2 / 5);
    const gW = new Float64Array(policy.W.length);
    const gU = new Float64Array(policy.U.length);
    group.forEach((a, k) => policy.accumulateGradient(x, a, result.gradLogpNew[k]!, gW, gU));
    let checked = 0;
    for (let i = 0; i < gW.length && checked < 20; i++) {
      if (gW[i] === 0) continue;
      const h = 1e-6;
      const saved = policy.W[i]!;
      policy.W[i] = saved + h;
      const up = loss();
      policy.W[i] = saved - h;
      const down = loss();
      policy.W[i] = saved;
      expect(gW[i]!).toBeCloseTo((up - down) / (2 * h), 7);
      checked++;
    }
    expect(checked).toBe(20);
  });

  it("raises the expected return on held-out tasks over training (fixed seed)", async () => {
    const worker = simulatedWorker();
    const policy = new RubricPolicy({ seed: 1 });
    const evaluate = () => expectedReturn(policy, heldOut, { seed: 77, samples: 3, worker, stakeholderSeed: STAKEHOLDER_SEED });
    const before = await evaluate();
    const adam = new Adam([policy.W, policy.U], 0.1);
    const rewards: number[] = [];
    for (let batch = 0; batch < 8; batch++) {
      // A wider clip than the paper's 3e-4/4e-4: this small policy moves far per step (see README).
      const stats = await gspoBatch(policy, adam, train, { seed: 3, batch, groupSize: 6, stepsPerBatch: 4, epsLow: 0.2, epsHigh: 0.28, worker, stakeholderSeed: STAKEHOLDER_SEED });
      rewards.push(stats.meanReward);
    }
    const after = await evaluate();
    expect(after).toBeGreaterThan(before + 0.03);
    expect(rewards.slice(-2).reduce((a, b) => a + b) / 2).toBeGreaterThan(rewards.slice(0, 2).reduce((a, b) => a + b) / 2);
  });

  it.each(["grpo", "dr-grpo"] as const)("%s: token-ratio objectives chain into the parameters exactly too", (objective) => {
    const policy = new RubricPolicy({ dim: 32, seed: 6 });
    const x = featurize(train[1]!.task, train[1]!.answers, 32);
    const rng = createRng(4);
    const group = Array.from({ length: 4 }, () => policy.sample(x, rng));
    const logpOld = group.map((a) => policy.tokenLogProbs(x, a));
    for (let i = 0; i < policy.W.length; i++) policy.W[i]! += 0.3 * Math.cos(i * 0.9);
    for (let i = 0; i < policy.U.length; i++) policy.U[i]! += 0.3 * Math.sin(i);
    const rewards = [0.1, 0.8, 0.5, 0.3];
    const run = () => policyObjective(objective, { logpNew: group.map((a) => policy.tokenLogProbs(x, a)), logpOld, rewards, epsLow: 0.05, epsHigh: 0.05 });
    const result = run();
    const gW = new Float64Array(policy.W.length);
    const gU = new Float64Array(policy.U.length);
    group.forEach((a, k) => policy.accumulateGradient(x, a, result.gradLogpNew[k]!, gW, gU));
    let checked = 0;
    for (const [params, grad] of [[policy.W, gW], [policy.U, gU]] as const)
      for (let i = 0; i < grad.length && checked < 30; i += 3) {
        const h = 1e-6;
        const saved = params[i]!;
        params[i] = saved + h;
        const up = run().loss;
        params[i] = saved - h;
        const down = run().loss;
        params[i] = saved;
        expect(grad[i]!).toBeCloseTo((up - down) / (2 * h), 7);
        if (grad[i] !== 0) checked++;
      }
    expect(checked).toBeGreaterThan(10);
  });
});
