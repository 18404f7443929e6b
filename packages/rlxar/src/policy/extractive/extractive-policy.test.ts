import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRng } from "@rubric/core";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentView } from "../../environment/environment.js";
import { CheckpointMismatchError, DecisionTraceError, RlxarFileError, RlxarInputError } from "../../errors.js";
import type { PolicySample } from "../policy.js";
import { goldView, readGoldRows } from "./__fixtures__/hotpotqa-views.js";
import { extractivePolicy, type ExtractivePolicy, type ExtractiveTrace } from "./extractive-policy.js";
import { FEATURE_NAMES } from "./features.js";

const rows = readGoldRows("train").slice(0, 6);
// Real views of every shape: nothing retrieved, both gold paragraphs with a search left, forced finish.
const views: AgentView[] = rows.flatMap((row, i) => {
  const gold = goldView(row, { mustFinish: i % 2 === 0 });
  return [{ ...gold, history: [], budgetLeft: 3, mustFinish: false }, gold];
});

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "extractive-policy-"));
  dirs.push(dir);
  return dir;
}

/** A policy with seeded random weights, so no gradient is trivially symmetric. */
function randomPolicy(seed: string, scale = 1): ExtractivePolicy {
  const rng = createRng(seed);
  return extractivePolicy({
    initialWeights: Object.fromEntries(FEATURE_NAMES.map((name) => [name, scale * rng.normal()])),
  });
}

async function samplesOf(policy: ExtractivePolicy, seed: string): Promise<PolicySample[]> {
  const decisions = await policy.act(views, { temperature: 1, seeds: views.map((_, i) => `${seed}/${i}`) });
  const rng = createRng(`${seed}/advantages`);
  return decisions.map((decision, i) => ({ view: views[i]!, decision, advantage: rng.normal() }));
}

/** Central differences of `loss` in every weight. */
function numericGradient(policy: ExtractivePolicy, loss: () => number, h = 1e-6): Float64Array {
  return policy.weights.map((w, f) => {
    policy.weights[f] = w + h;
    const up = loss();
    policy.weights[f] = w - h;
    const down = loss();
    policy.weights[f] = w;
    return (up - down) / (2 * h);
  });
}

function expectClose(actual: Float64Array, expected: Float64Array, tolerance: number): void {
  const worst = Math.max(...actual.map((a, i) => Math.abs(a - expected[i]!)));
  expect(worst).toBeLessThan(tolerance);
}

describe("ExtractivePolicy's update is exact", () => {
  it("the policy term's gradient is the finite difference of −(1/N) Σ A·log π", async () => {
    const policy = randomPolicy("fd-policy");
    const samples = await samplesOf(policy, "fd-policy");
    const analytic = policy.objective(samples, 0).gradient;
    const numeric = numericGradient(policy, () => policy.objective(samples, 0).policyLoss);
    expect(Math.hypot(...analytic)).toBeGreaterThan(0.1);
    expectClose(analytic, numeric, 1e-6);
  });

  it("the KL term's gradient is the finite difference of KL(π_ref ‖ π), which is 0 at the reference and positive away", async () => {
    const policy = randomPolicy("fd-kl");
    const samples = (await samplesOf(policy, "fd-kl")).map((s) => ({ ...s, advantage: 0 }));
    await policy.setReference();
    expect(policy.objective(samples, 1).kl).toBe(0);
    expect(Math.hypot(...policy.objective(samples, 1).gradient)).toBeLessThan(1e-12);
    const rng = createRng("fd-kl/move");
    policy.weights.forEach((w, f) => {
      policy.weights[f] = w + 0.5 * rng.normal();
    });
    const { kl, gradient } = policy.objective(samples, 0.3);
    expect(kl).toBeGreaterThan(1e-3);
    const numeric = numericGradient(policy, () => 0.3 * policy.objective(samples, 0).kl);
    expectClose(gradient, numeric, 1e-6);
  });

  it("update reports the loss and gradient norm before its step, and the step lowers the loss", async () => {
    const policy = randomPolicy("step");
    const samples = await samplesOf(policy, "step");
    const before = policy.objective(samples, 0);
    const metrics = await policy.update(samples, { learningRate: 0.01, klCoef: 0, maxGradNorm: 1 });
    expect(metrics.policyLoss).toBe(before.policyLoss);
    expect(metrics.gradNorm).toBeCloseTo(Math.hypot(...before.gradient), 12);
    expect(metrics.samples).toBe(samples.length);
    expect(policy.objective(samples, 0).policyLoss).toBeLessThan(before.policyLoss);
  });

  it("refuses a KL coefficient without a reference, and decisions it did not make for the view", async () => {
    const policy = randomPolicy("refuse");
    const samples = await samplesOf(policy, "refuse");
    await expect(policy.update(samples, { learningRate: 0.01, klCoef: 0.05 })).rejects.toThrow(RlxarInputError);
    const trace = samples[1]!.decision.trace as ExtractiveTrace;
    const bad: PolicySample[][] = [
      [
        {
          ...samples[1]!,
          decision: { ...samples[1]!.decision, trace: { ...trace, candidates: trace.candidates + 1 } },
        },
      ],
      [{ ...samples[1]!, view: views[3]! }],
      [{ ...samples[1]!, decision: { text: samples[1]!.decision.text } }],
    ];
    for (const batch of bad) {
      await expect(policy.update(batch, { learningRate: 0.01, klCoef: 0 })).rejects.toThrow(DecisionTraceError);
    }
  });
});

describe("ExtractivePolicy acts from its distribution", () => {
  const view = views[1]!;

  it("log-probs are a normalised distribution and decisions report them", async () => {
    const policy = randomPolicy("logp", 0.5);
    const { candidates, logProbs } = policy.distribution(view);
    expect(Array.from(logProbs).reduce((s, l) => s + Math.exp(l), 0)).toBeCloseTo(1, 12);
    const [decision] = await policy.act([view], { temperature: 1, seeds: ["logp"] });
    const trace = decision!.trace as ExtractiveTrace;
    expect(decision!.text).toBe(candidates[trace.candidate]!.text);
    expect(decision!.logProb).toBe(logProbs[trace.candidate]);
    expect(trace.sampleLogProb).toBeCloseTo(logProbs[trace.candidate]!, 12);
  });

  it("draws each candidate as often as π (and softmax(θ·φ/T) at T = 0.5) says", async () => {
    const policy = randomPolicy("freq", 0.4);
    const { candidates, logProbs } = policy.distribution(view);
    const draws = 20_000;
    for (const temperature of [1, 0.5]) {
      const decisions = await policy.act(
        Array.from({ length: draws }, () => view),
        { temperature, seeds: Array.from({ length: draws }, (_, i) => `freq/${temperature}/${i}`) },
      );
      const counts = new Float64Array(candidates.length);
      for (const d of decisions) counts[(d.trace as ExtractiveTrace).candidate]!++;
      const sharpened = Array.from(logProbs, (l) => Math.exp(l / temperature));
      const total = sharpened.reduce((a, b) => a + b, 0);
      // Chi-square over the candidates expected at least 5 times, the rest pooled as one cell.
      let chi = 0;
      let cells = 0;
      let pooledObserved = 0;
      let pooledExpected = 0;
      sharpened.forEach((w, c) => {
        const expected = (draws * w) / total;
        if (expected >= 5) {
          chi += (counts[c]! - expected) ** 2 / expected;
          cells++;
        } else {
          pooledObserved += counts[c]!;
          pooledExpected += expected;
        }
      });
      if (pooledExpected > 0) {
        chi += (pooledObserved - pooledExpected) ** 2 / pooledExpected;
        cells++;
      }
      expect(cells).toBeGreaterThan(10);
      // Under the null, chi² has mean df = cells − 1 and sd √(2 df): 5 sd above is a real mismatch.
      const df = cells - 1;
      expect(chi).toBeLessThan(df + 5 * Math.sqrt(2 * df));
      const d0 = decisions[0]!;
      expect((d0.trace as ExtractiveTrace).sampleLogProb).toBeCloseTo(
        Math.log(sharpened[(d0.trace as ExtractiveTrace).candidate]! / total),
        10,
      );
    }
  });

  it("greedy is the argmax, ties going to the first candidate", async () => {
    const policy = randomPolicy("greedy");
    const { candidates, logProbs } = policy.distribution(view);
    const best = Array.from(logProbs).indexOf(Math.max(...logProbs));
    const [decision] = await policy.act([view], { temperature: 0, seeds: ["any"] });
    expect(decision!.text).toBe(candidates[best]!.text);
    const uniform = extractivePolicy();
    const [first] = await uniform.act([view], { temperature: 0, seeds: ["any"] });
    expect(first!.text).toBe(uniform.distribution(view).candidates[0]!.text);
  });
});

describe("ExtractivePolicy's checkpoints", () => {
  it("round-trip: the restored policy decides and steps exactly as the original", async () => {
    const policy = randomPolicy("ckpt", 0.3);
    await policy.update(await samplesOf(policy, "ckpt-0"), { learningRate: 0.05, klCoef: 0 });
    await policy.setReference();
    await policy.update(await samplesOf(policy, "ckpt-1"), { learningRate: 0.05, klCoef: 0.05 });
    const dir = await tempDir();
    await policy.save(dir);
    const restored = extractivePolicy();
    await restored.load(dir);
    expect(Array.from(restored.weights)).toEqual(Array.from(policy.weights));
    for (const temperature of [0, 1]) {
      const options = { temperature, seeds: views.map((_, i) => `ckpt-act/${i}`) };
      expect(await restored.act(views, options)).toEqual(await policy.act(views, options));
    }
    // The same next step from both: the optimiser state and the reference came back too.
    const samples = await samplesOf(policy, "ckpt-2");
    const a = await policy.update(samples, { learningRate: 0.05, klCoef: 0.05 });
    const b = await restored.update(samples, { learningRate: 0.05, klCoef: 0.05 });
    expect(b).toEqual(a);
    expect(Array.from(restored.weights)).toEqual(Array.from(policy.weights));
  });

  it("resetOptimizer drops Adam's moments: after it, a step with every advantage 0 leaves θ where it is (issue 30 item 1)", async () => {
    const policy = randomPolicy("reset", 0.3);
    await policy.update(await samplesOf(policy, "reset-0"), { learningRate: 0.05, klCoef: 0 });
    const zero = (await samplesOf(policy, "reset-1")).map((sample) => ({ ...sample, advantage: 0 }));
    const dir = await tempDir();
    await policy.save(dir);
    // Carried momentum moves θ with no signal at all…
    const before = Array.from(policy.weights);
    await policy.update(zero, { learningRate: 0.05, klCoef: 0 });
    expect(Array.from(policy.weights)).not.toEqual(before);
    // …a fresh optimiser does not.
    await policy.load(dir);
    await policy.resetOptimizer();
    await policy.update(zero, { learningRate: 0.05, klCoef: 0 });
    expect(Array.from(policy.weights)).toEqual(before);
  });

  it("a checkpoint of another feature set or candidate options is a named error, a malformed one a file error", async () => {
    const dir = await tempDir();
    await extractivePolicy().save(dir);
    const file = join(dir, "extractive-policy.json");
    const written = JSON.parse(await readFile(file, "utf8"));
    await writeFile(file, JSON.stringify({ ...written, features: [...written.features.slice(1), "span:mystery"] }));
    await expect(extractivePolicy().load(dir)).rejects.toThrow(CheckpointMismatchError);
    await writeFile(file, JSON.stringify(written));
    await expect(extractivePolicy({ candidates: { maxAnswers: 10 } }).load(dir)).rejects.toThrow(
      /maxAnswers: 240 there, 10 here/u,
    );
    await writeFile(file, JSON.stringify({ ...written, weights: "heavy" }));
    await expect(extractivePolicy().load(dir)).rejects.toThrow(RlxarFileError);
    await writeFile(file, "{");
    await expect(extractivePolicy().load(dir)).rejects.toThrow(RlxarFileError);
  });
});

describe("ExtractivePolicy's SFT", () => {
  it("lowers the cross-entropy of targets among the candidates and counts those that are not", async () => {
    const policy = extractivePolicy();
    const row = rows[0]!;
    const view = goldView(row, { mustFinish: true });
    const examples = [
      { view, text: `Finish[${row.answer}]` },
      { view, text: "Finish[the chief of protocol!]".replace("the chief of protocol!", row.answer.toUpperCase()) },
      { view, text: "Finish[an answer no paragraph holds]" },
    ];
    const first = await policy.sft(examples, { learningRate: 0.1 });
    expect(first).toMatchObject({ used: 2, missing: 1 });
    expect(first.loss).toBeCloseTo(Math.log(policy.distribution(view).candidates.length), 12);
    let last = first.loss;
    for (let i = 0; i < 20; i++) last = (await policy.sft(examples, { learningRate: 0.1 })).loss;
    expect(last).toBeLessThan(first.loss / 2);
    await expect(policy.sft([examples[2]!], { learningRate: 0.1 })).rejects.toThrow(RlxarInputError);
    // `learnable` is sft's own rule: the first two are used, the third is the one missing.
    expect(examples.map((e) => policy.learnable(e))).toEqual([true, true, false]);
  });
});
