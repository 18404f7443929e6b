import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRng } from "@rubric/core";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentView } from "../environment/environment.js";
import { CheckpointMismatchError, DecisionTraceError, RlxarFileError, RlxarInputError } from "../errors.js";
import type { PolicySample } from "../policy/policy.js";
import { rollout } from "../rollout/rollout.js";
import { arcoGym } from "./environment.js";
import { GYM_FEATURE_NAMES } from "./features.js";
import { type GymPolicy, gymPolicy } from "./policy.js";
import { gymNoisyTeacher } from "./teachers.js";
import { generateGymTasks } from "./world.js";

const env = arcoGym();
const tasks = generateGymTasks({ hops: [2, 3, 4], count: 12, seed: 51 });
// Views of every shape, from a noisy teacher's episodes: first steps, on and off the chain, forced finishes.
const views: AgentView[] = (
  await rollout(env, tasks, gymNoisyTeacher(tasks), { temperature: 1, seed: "views", replicas: 2 })
).flatMap((e) => e.steps.map((s) => s.view));

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "gym-policy-"));
  dirs.push(dir);
  return dir;
}

function randomPolicy(seed: string): GymPolicy {
  const rng = createRng(seed);
  return gymPolicy({ initialWeights: Object.fromEntries(GYM_FEATURE_NAMES.map((name) => [name, rng.normal()])) });
}

async function samplesOf(policy: GymPolicy, seed: string): Promise<PolicySample[]> {
  const decisions = await policy.act(views, { temperature: 1, seeds: views.map((_, i) => `${seed}/${i}`) });
  const rng = createRng(`${seed}/advantages`);
  return decisions.map((decision, i) => ({ view: views[i]!, decision, advantage: rng.normal() }));
}

describe("GymPolicy", () => {
  it("acts reproducibly from its seeds, reports log π, and is uniform with all weights 0", async () => {
    const policy = randomPolicy("act");
    const options = { temperature: 1, seeds: views.map((_, i) => `a/${i}`) };
    const once = await policy.act(views, options);
    expect(await policy.act(views, options)).toEqual(once);
    once.forEach((d, i) => {
      const { candidates, logProbs } = policy.distribution(views[i]!);
      const index = candidates.findIndex((c) => c.text === d.text);
      expect(d.logProb).toBeCloseTo(logProbs[index]!, 12);
    });
    const uniform = gymPolicy().distribution(views[0]!);
    for (const logProb of uniform.logProbs) expect(Math.exp(logProb)).toBeCloseTo(1 / uniform.candidates.length, 12);
  });

  it("descends the exact gradient of its policy loss plus klCoef·KL(π_ref ‖ π)", async () => {
    const policy = randomPolicy("grad");
    await policy.setReference();
    policy.weights.forEach((w, i) => {
      policy.weights[i] = w + 0.3 * Math.sin(i);
    });
    const samples = await samplesOf(policy, "g");
    const snapshot = Float64Array.from(policy.weights);
    // One probe whose weights are set per evaluation: it reads each view once.
    const probe = gymPolicy();
    const references = samples.map((s) => randomPolicy("grad").distribution(s.view).logProbs);
    const chosen = samples.map((s) =>
      probe.distribution(s.view).candidates.findIndex((c) => c.text === s.decision.text),
    );
    const loss = (weights: Float64Array) => {
      probe.weights.set(weights);
      let total = 0;
      samples.forEach((s, i) => {
        const { logProbs } = probe.distribution(s.view);
        total -= (s.advantage * logProbs[chosen[i]!]!) / samples.length;
        let kl = 0;
        references[i]!.forEach((q, c) => {
          kl += Math.exp(q) * (q - logProbs[c]!);
        });
        total += (0.5 * kl) / samples.length;
      });
      return total;
    };
    const numeric = snapshot.map((w, f) => {
      const up = Float64Array.from(snapshot);
      const down = Float64Array.from(snapshot);
      up[f] = w + 1e-6;
      down[f] = w - 1e-6;
      return (loss(up) - loss(down)) / 2e-6;
    });
    const metrics = await policy.update(samples, { learningRate: 1e-3, klCoef: 0.5 });
    expect(metrics.policyLoss + 0.5 * metrics.kl).toBeCloseTo(loss(snapshot), 10);
    expect(metrics.gradNorm).toBeCloseTo(Math.hypot(...numeric), 5);
    // Adam's first step moves every weight by the learning rate against its gradient's sign.
    policy.weights.forEach((w, f) => {
      if (Math.abs(numeric[f]!) > 1e-6) expect(Math.sign(snapshot[f]! - w)).toBe(Math.sign(numeric[f]!));
    });
  });

  it("refuses a decision it did not make for that view, and bad update options", async () => {
    const policy = randomPolicy("trace");
    const [sample] = await samplesOf(policy, "t");
    const s = sample!;
    await expect(
      policy.update([{ ...s, decision: { text: s.decision.text } }], { learningRate: 0.1, klCoef: 0 }),
    ).rejects.toThrow(DecisionTraceError);
    const other = { ...s, decision: { ...s.decision, text: "Finish[somebody else]" } };
    await expect(policy.update([other], { learningRate: 0.1, klCoef: 0 })).rejects.toThrow(/trace\.candidate/u);
    await expect(policy.update([s], { learningRate: 0.1, klCoef: 0.1 })).rejects.toThrow(/setReference/u);
    await expect(policy.update([s], { learningRate: 0, klCoef: 0 })).rejects.toThrow(RlxarInputError);
    await expect(policy.update([{ ...s, advantage: Number.NaN }], { learningRate: 0.1, klCoef: 0 })).rejects.toThrow(
      /advantage/u,
    );
    expect(() => gymPolicy({ initialWeights: { "search:telepathy": 1 } })).toThrow(/search:telepathy/u);
  });

  it("learns by SFT the targets among its candidates and counts the rest as missing", async () => {
    const policy = gymPolicy();
    const view = views[0]!;
    const target = policy.distribution(view).candidates[1]!.text;
    const examples = [
      { view, text: target.toUpperCase().replace("SEARCH", "Search") },
      { view, text: "Search[the moon]" },
    ];
    expect(examples.map((e) => policy.learnable(e))).toEqual([true, false]);
    const first = await policy.sft(examples, { learningRate: 0.1 });
    expect(first).toMatchObject({ used: 1, missing: 1 });
    for (let i = 0; i < 30; i++) await policy.sft(examples, { learningRate: 0.1 });
    expect((await policy.sft(examples, { learningRate: 0.1 })).loss).toBeLessThan(first.loss / 2);
    await expect(policy.sft([examples[1]!], { learningRate: 0.1 })).rejects.toThrow(/none of the 1 targets/u);
  });

  it("saves and loads weights, reference and Adam's state; a checkpoint of other features or a damaged one is refused", async () => {
    const policy = randomPolicy("save");
    await policy.setReference();
    await policy.update(await samplesOf(policy, "s1"), { learningRate: 0.01, klCoef: 0.1 });
    const dir = await tempDir();
    await policy.save(dir);
    const copy = gymPolicy();
    await copy.load(dir);
    expect(copy.weights).toEqual(policy.weights);
    const samples = await samplesOf(policy, "s2");
    const a = await policy.update(samples, { learningRate: 0.01, klCoef: 0.1 });
    const b = await copy.update(samples, { learningRate: 0.01, klCoef: 0.1 });
    expect(b).toEqual(a);
    expect(copy.weights).toEqual(policy.weights);

    const file = join(dir, "gym-policy.json");
    const checkpoint = JSON.parse(await readFile(file, "utf8"));
    await writeFile(
      file,
      JSON.stringify({ ...checkpoint, features: [...checkpoint.features.slice(1), "search:extra"] }),
    );
    await expect(gymPolicy().load(dir)).rejects.toThrow(CheckpointMismatchError);
    await writeFile(file, JSON.stringify({ ...checkpoint, weights: [1, 2] }));
    await expect(gymPolicy().load(dir)).rejects.toThrow(/weights: expected/u);
    await writeFile(file, JSON.stringify({ ...checkpoint, format: "gym-policy/0" }));
    await expect(gymPolicy().load(dir)).rejects.toThrow(RlxarFileError);
    await writeFile(file, "{ not json");
    await expect(gymPolicy().load(dir)).rejects.toThrow(RlxarFileError);
  });
});
