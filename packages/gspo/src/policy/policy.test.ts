import { fileURLToPath } from "node:url";
import { createRng } from "@rubric/core";
import { type GymTask, gymTask, loadGdpval, policyManager, runEpisode, simulatedStakeholder } from "@rubric/autointeract";
import { beforeAll, describe, expect, it } from "vitest";
import { featurize } from "./features.js";
import { RubricPolicy } from "./rubric-policy.js";
import { sftLoss, trainSft, type SftItem } from "./sft.js";

const GDPVAL = `${process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../shared/", import.meta.url))}/data/gdpval`;
let train: SftItem[];
let heldOut: SftItem[];

/** SFT data from the gym: the policy manager's elicited rubric is the teacher's imperfect reconstruction. */
async function items(tasks: GymTask[], seed: number): Promise<SftItem[]> {
  const out: SftItem[] = [];
  for (const task of tasks) {
    const episode = await runEpisode({ task, manager: policyManager(), stakeholder: simulatedStakeholder(task, seed), questionBudget: 5 });
    out.push({ task, answers: episode.transcript.flatMap((t) => (t.type === "answer" ? [t.text] : [])), reference: episode.rubric! });
  }
  return out;
}

beforeAll(async () => {
  const gdpval = await loadGdpval(GDPVAL);
  const asTask = (e: (typeof gdpval.train)[number]): GymTask => gymTask(e.task);
  train = await items(gdpval.train.slice(0, 80).map(asTask), 11);
  heldOut = await items(gdpval.eval.slice(0, 20).map(asTask), 11);
});

describe("RubricPolicy", () => {
  it("has exact per-token gradients (checked by finite differences)", () => {
    const policy = new RubricPolicy({ dim: 32, seed: 1 });
    for (let i = 0; i < policy.U.length; i++) policy.U[i] = 0.3 * Math.sin(i);
    const x = featurize({ id: "t", prompt: "quarterly revenue forecast with risks" }, ["Essential: it has a table."], 32);
    const actions = policy.sample(x, createRng(3), 1);
    const coefs = actions.flatMap((a) => (a.criterion < 0 ? [0.7] : [1.3, -0.4]));
    const objective = () => policy.tokenLogProbs(x, actions).reduce((s, lp, t) => s + coefs[t]! * lp, 0);
    const gW = new Float64Array(policy.W.length);
    const gU = new Float64Array(policy.U.length);
    policy.accumulateGradient(x, actions, coefs, gW, gU);
    const rng = createRng(9);
    for (const [params, grad] of [[policy.W, gW], [policy.U, gU]] as const) {
      for (let probe = 0; probe < 25; probe++) {
        // Probe where the gradient lives (features present) as well as at random.
        const i = probe % 2 === 0 ? grad.findIndex((g, k) => g !== 0 && k % 7 === probe % 7) : rng.int(params.length);
        if (i < 0) continue;
        const h = 1e-6;
        const saved = params[i]!;
        params[i] = saved + h;
        const up = objective();
        params[i] = saved - h;
        const down = objective();
        params[i] = saved;
        expect(grad[i]!).toBeCloseTo((up - down) / (2 * h), 6);
      }
    }
  });

  it("samples valid, reproducible rubrics that respect the exclusive groups", () => {
    const policy = new RubricPolicy({ seed: 2 });
    const x = featurize({ id: "t", prompt: "a memo" }, [], policy.dim);
    const a = policy.sample(x, createRng(5));
    expect(policy.sample(x, createRng(5))).toEqual(a);
    expect(a.at(-1)).toEqual({ criterion: -1 });
    const groups = a.filter((s) => s.criterion >= 0).map((s) => policy.vocab[s.criterion]!.group).filter(Boolean);
    expect(new Set(groups).size).toBe(groups.length);
    expect(policy.tokenLogProbs(x, a).every((lp) => lp <= 0 && Number.isFinite(lp))).toBe(true);
  });

  it("SFT lowers the loss on training and held-out references, and learns to write what it heard", () => {
    const policy = new RubricPolicy({ seed: 3 });
    const before = { train: sftLoss(policy, train), held: sftLoss(policy, heldOut) };
    const losses = trainSft(policy, train, { epochs: 12, seed: 4 });
    expect(losses.at(-1)!).toBeLessThan(before.train * 0.6);
    expect(sftLoss(policy, heldOut)).toBeLessThan(before.held);
    // Greedy-ish samples on held-out tasks overlap the teacher's rubric more than an untrained policy's do.
    const overlap = (p: RubricPolicy) =>
      heldOut.reduce((sum, item, k) => {
        const rubric = p.toRubric(p.sample(featurize(item.task, item.answers, p.dim), createRng(k), 0.3), "r");
        const reference = new Set(item.reference.criteria.map((c) => c.id));
        return sum + rubric.criteria.filter((c) => reference.has(c.id)).length / Math.max(1, rubric.criteria.length);
      }, 0) / heldOut.length;
    expect(overlap(policy)).toBeGreaterThan(overlap(new RubricPolicy({ seed: 3 })) + 0.1);
  });
});
