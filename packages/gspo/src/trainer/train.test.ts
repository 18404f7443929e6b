import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gymTask, loadGdpval, simulatedWorker } from "@rubric/autointeract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gymPrompt, gymReward, type GymPrompt } from "../gym-environment/environment.js";
import { RubricPolicy } from "../policy/rubric-policy.js";
import { QUESTION_REPERTOIRE } from "../policy/vocabulary.js";
import type { RolloutGroup } from "./backend.js";
import { RunFileError, RunSettingsError } from "@rubric/core/runs";
import { CheckpointError, TrainingInputError } from "../errors.js";
import { InProcessBackend } from "./in-process.js";
import { advantagesFor, OBJECTIVES } from "./objective.js";
import { trainGspo, TrainingAbortedError, type GspoTrainingOptions } from "./train.js";

const GDPVAL = `${process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../shared/", import.meta.url))}/data/gdpval`;
const STAKEHOLDER_SEED = 21;
let train: GymPrompt[];
let heldOut: GymPrompt[];
const dirs: string[] = [];

beforeAll(async () => {
  const gdpval = await loadGdpval(GDPVAL);
  const prompts = (entries: typeof gdpval.train) =>
    Promise.all(entries.map((e) => gymPrompt(gymTask(e.task), STAKEHOLDER_SEED, QUESTION_REPERTOIRE)));
  train = await prompts(gdpval.train.slice(0, 24));
  heldOut = await prompts(gdpval.eval.slice(0, 12));
});
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

/** What a run directory's `checkpoints/` holds, in name order (readdir's order is the file system's). */
async function checkpointsIn(dir: string): Promise<string[]> {
  return (await readdir(join(dir, "checkpoints"))).sort();
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "gspo-run-"));
  dirs.push(dir);
  return dir;
}

/** Rollout groups from the current policy, then θ moved off θ_old so the ratios differ from 1. */
async function offPolicyGroups(
  backend: InProcessBackend<GymPrompt, RubricPolicy>,
  objective: (typeof OBJECTIVES)[number],
): Promise<RolloutGroup<GymPrompt>[]> {
  const groups: RolloutGroup<GymPrompt>[] = [];
  for (const [i, prompt] of train.slice(0, 3).entries()) {
    const sampled = await backend.sample(prompt, 4, { seed: 100 + i });
    const advantages = advantagesFor(
      objective,
      [0.2, 0.9, 0.5, 0.1].map((r) => r + 0.1 * i),
    );
    groups.push({
      prompt,
      sequences: sampled.map((s, k) => ({ tokens: s.tokens, logpOld: s.logprobs, advantage: advantages[k]! })),
    });
  }
  backend.policy.parameters.forEach((p, b) => p.forEach((v, i) => (p[i] = v + 0.2 * Math.sin(i * 1.3 + b))));
  return groups;
}

describe("InProcessBackend.gradient", () => {
  it.each(OBJECTIVES)(
    "%s: the applied gradient is exactly −∂loss/∂θ, with clipping active and the k3 KL term on",
    async (objective) => {
      const backend = new InProcessBackend(new RubricPolicy({ dim: 32, seed: 5 }));
      await backend.setReference();
      const groups = await offPolicyGroups(backend, objective);
      // A band narrower than the ratios' spread (±3% here), so some sequences clip and some do not.
      const options = { objective, epsLow: 0.01, epsHigh: 0.015, klCoef: 0.3 };
      const result = backend.gradient(groups, options);
      // Both clipped and unclipped sequences / tokens, and a live KL term.
      expect(result.clippedFraction).toBeGreaterThan(0);
      expect(result.clippedFraction).toBeLessThan(1);
      expect(result.kl).toBeGreaterThan(0);
      const loss = () => backend.gradient(groups, options).loss;
      let checked = 0;
      backend.policy.parameters.forEach((params, b) => {
        const grad = result.grads[b]!;
        for (let i = 0, seen = 0; i < grad.length && seen < 8; i++) {
          if (grad[i] === 0) continue;
          seen++;
          const h = 1e-6;
          const saved = params[i]!;
          params[i] = saved + h;
          const up = loss();
          params[i] = saved - h;
          const down = loss();
          params[i] = saved;
          expect(grad[i]!).toBeCloseTo(-(up - down) / (2 * h), 6);
          checked++;
        }
      });
      // Eight entries of every block, the copy and context heads included.
      expect(checked).toBe(8 * backend.policy.parameters.length);
    },
  );

  it("with the reference equal to θ, the KL term and its gradient vanish", async () => {
    const backend = new InProcessBackend(new RubricPolicy({ dim: 32, seed: 5 }));
    const groups = await offPolicyGroups(backend, "gspo");
    await backend.setReference();
    const withKl = backend.gradient(groups, { objective: "gspo", epsLow: 0.2, epsHigh: 0.2, klCoef: 1 });
    const without = backend.gradient(groups, { objective: "gspo", epsLow: 0.2, epsHigh: 0.2, klCoef: 0 });
    expect(withKl.kl).toBeCloseTo(0, 12);
    withKl.grads.forEach((g, b) => g.forEach((v, i) => expect(v).toBeCloseTo(without.grads[b]![i]!, 12)));
  });
});

function gymOptions(
  backend: InProcessBackend<GymPrompt, RubricPolicy>,
  overrides: Partial<GspoTrainingOptions<GymPrompt>> = {},
): GspoTrainingOptions<GymPrompt> {
  const worker = simulatedWorker();
  return {
    backend,
    prompts: train,
    reward: gymReward({ policy: backend.policy, worker }),
    seed: 3,
    batches: 8,
    groupSize: 6,
    stepsPerBatch: 4,
    learningRate: 0.1,
    // Wider than the paper's 3e-4/4e-4: this small policy moves far per step (see the README).
    epsLow: 0.2,
    epsHigh: 0.28,
    ...overrides,
  };
}

async function heldOutReturn(backend: InProcessBackend<GymPrompt, RubricPolicy>): Promise<number> {
  const reward = gymReward({ policy: backend.policy, worker: simulatedWorker() });
  let total = 0;
  for (const [t, prompt] of heldOut.entries()) {
    for (const [k, s] of (await backend.sample(prompt, 3, { seed: 77 + t })).entries())
      total += await reward(prompt, s.tokens, { seed: 7919 * t + k });
  }
  return total / (heldOut.length * 3);
}

describe("trainGspo", () => {
  it("raises the expected return on held-out tasks over training (fixed seed)", async () => {
    const backend = new InProcessBackend(new RubricPolicy({ seed: 1 }));
    const before = await heldOutReturn(backend);
    const log = await trainGspo(gymOptions(backend));
    const after = await heldOutReturn(backend);
    expect(after).toBeGreaterThan(before + 0.03);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(mean(log.slice(-2).map((e) => e.meanReward))).toBeGreaterThan(
      mean(log.slice(0, 2).map((e) => e.meanReward)),
    );
    // Several steps per batch: the later steps see ratios off 1, and some get clipped.
    expect(log.some((e) => e.clippedFraction > 0)).toBe(true);
  });

  it("replays, beside each batch's fresh groups, the lowest-return groups of earlier batches, with the current policy's log-probs", async () => {
    const backend = new InProcessBackend<GymPrompt, RubricPolicy>(new RubricPolicy({ dim: 32, seed: 2 }));
    const prompts = train.slice(0, 8);
    // A return that depends on the prompt alone (plus a little on the sequence, so that groups
    // have advantages): the lowest-return groups are those of the lowest prompt indices.
    const rewardOf = (prompt: GymPrompt, tokens: readonly number[]) =>
      prompts.indexOf(prompt) / 10 + (tokens.length % 3) / 1000;
    const reward = async (prompt: GymPrompt, tokens: readonly number[]) => rewardOf(prompt, tokens);
    const meanReturn = (g: RolloutGroup<GymPrompt>) =>
      g.sequences.reduce((sum, s) => sum + rewardOf(g.prompt, s.tokens), 0) / g.sequences.length;
    const calls: { groups: RolloutGroup<GymPrompt>[]; current: number[][][] }[] = [];
    const step = backend.step.bind(backend);
    backend.step = async (groups, options) => {
      // Before the step: the log-probs of every sequence under the parameters as they are now.
      calls.push({
        groups: [...groups],
        current: groups.map((g) => g.sequences.map((s) => backend.policy.tokenLogProbs(g.prompt, s.tokens))),
      });
      return step(groups, options);
    };
    const log = await trainGspo({
      ...gymOptions(backend, { prompts, batches: 3, promptsPerBatch: 4, stepsPerBatch: 2 }),
      reward,
      replayPercentile: 50,
      replayPerBatch: 2,
    });
    expect(log.map((e) => e.replayed)).toEqual([0, 2, 2]);
    const firstOf = (batch: number) => calls[2 * batch]!;
    expect(firstOf(0).groups).toHaveLength(4);
    const freshBefore = [firstOf(0), firstOf(1)].flatMap((c) => c.groups.slice(0, 4));
    for (const batch of [1, 2]) {
      const { groups, current } = firstOf(batch);
      expect(groups).toHaveLength(6);
      const past = batch === 1 ? freshBefore.slice(0, 4) : freshBefore;
      const expected = [...past].sort((a, b) => meanReturn(a) - meanReturn(b)).slice(0, 2);
      groups.slice(4).forEach((replayed, r) => {
        const original = expected[r]!;
        expect(replayed.prompt).toBe(original.prompt);
        expect(replayed.sequences.map((s) => [s.tokens, s.advantage])).toEqual(
          original.sequences.map((s) => [s.tokens, s.advantage]),
        );
        // Old log-probs refreshed to this batch's π_old, not those it was sampled with.
        expect(replayed.sequences.map((s) => s.logpOld)).toEqual(current[4 + r]);
        expect(replayed.sequences.map((s) => s.logpOld)).not.toEqual(original.sequences.map((s) => s.logpOld));
      });
    }
  });

  it("resumes from its latest checkpoint to the same parameters and log as an uninterrupted run", async () => {
    const straight = new InProcessBackend(new RubricPolicy({ dim: 64, seed: 2 }));
    const straightDir = await tempDir();
    const options = { prompts: train.slice(0, 6), batches: 4, promptsPerBatch: 4 };
    const full = await trainGspo(gymOptions(straight, { ...options, run: { dir: straightDir } }));

    const dir = await tempDir();
    const first = new InProcessBackend(new RubricPolicy({ dim: 64, seed: 2 }));
    const controller = new AbortController();
    await expect(
      trainGspo(
        gymOptions(first, {
          ...options,
          run: { dir },
          signal: controller.signal,
          onLog: (e) => e.stage === "gspo" && e.batch === 1 && controller.abort(),
        }),
      ),
    ).rejects.toThrow(TrainingAbortedError);
    // By default only the latest checkpoint is kept, and resuming uses it.
    expect(await checkpointsIn(dir)).toEqual(["gspo-00002", "latest.json"]);
    // A fresh process: a new backend from a differently initialised policy, resumed from disk.
    const second = new InProcessBackend(new RubricPolicy({ dim: 64, seed: 99 }));
    const resumed = await trainGspo(gymOptions(second, { ...options, run: { dir, resume: true } }));

    second.policy.parameters.forEach((p, b) =>
      expect(Array.from(p)).toEqual(Array.from(straight.policy.parameters[b]!)),
    );
    const strip = (log: typeof full) => log.map(({ seconds, rewardSeconds, policySeconds, ...rest }) => rest);
    expect(strip(resumed)).toEqual(strip(full));
    const lines = (await readFile(join(dir, "log.jsonl"), "utf8")).trim().split("\n");
    expect(lines.map((l) => JSON.parse(l).batch)).toEqual([0, 1, 2, 3]);
    expect(JSON.parse(await readFile(join(dir, "checkpoints", "latest.json"), "utf8"))).toMatchObject({
      format: "rubric-run",
      trainer: "gspo",
      stage: "gspo",
      done: 4,
      checkpoint: "checkpoints/gspo-00004",
    });
    expect(await checkpointsIn(dir)).toEqual(["gspo-00004", "latest.json"]);
    // The same directory resumed with other settings is refused before anything is loaded.
    await expect(
      trainGspo(gymOptions(second, { ...options, groupSize: 3, run: { dir, resume: true } })),
    ).rejects.toBeInstanceOf(RunSettingsError);
  });

  it("keeps every checkpoint with keepCheckpoints: all, and only the stage's own when keeping the latest", async () => {
    const options = { prompts: train.slice(0, 3), batches: 3, promptsPerBatch: 2, groupSize: 3, stepsPerBatch: 1 };
    const all = await tempDir();
    await trainGspo(
      gymOptions(new InProcessBackend(new RubricPolicy({ dim: 16, seed: 2 })), {
        ...options,
        run: { dir: all, keepCheckpoints: "all" },
      }),
    );
    expect(await checkpointsIn(all)).toEqual(["gspo-00001", "gspo-00002", "gspo-00003", "latest.json"]);
    // A directory shared with another stage: keeping the latest GSPO checkpoint leaves the SFT one alone.
    const shared = await tempDir();
    await mkdir(join(shared, "checkpoints", "sft-00004"), { recursive: true });
    await trainGspo(
      gymOptions(new InProcessBackend(new RubricPolicy({ dim: 16, seed: 2 })), { ...options, run: { dir: shared } }),
    );
    expect(await checkpointsIn(shared)).toEqual(["gspo-00003", "latest.json", "sft-00004"]);
  });

  it("a crash while writing a checkpoint leaves the previous one whole, and resuming from it ends where an uninterrupted run does", async () => {
    const options = { prompts: train.slice(0, 4), batches: 4, promptsPerBatch: 3, groupSize: 4, stepsPerBatch: 2 };
    const straight = new InProcessBackend(new RubricPolicy({ dim: 16, seed: 3 }));
    await trainGspo(gymOptions(straight, options));

    /** Dies half-way through its third save, leaving a partial file where the checkpoint was going. */
    class CrashingBackend extends InProcessBackend<GymPrompt, RubricPolicy> {
      saves = 0;
      override async save(dir: string): Promise<void> {
        if (++this.saves < 3) return super.save(dir);
        await mkdir(dir, { recursive: true });
        await writeFile(join(dir, "policy.json.tmp"), '{"format":"token-');
        throw new Error("disk full");
      }
    }
    const dir = await tempDir();
    await expect(
      trainGspo(gymOptions(new CrashingBackend(new RubricPolicy({ dim: 16, seed: 3 })), { ...options, run: { dir } })),
    ).rejects.toThrow("disk full");
    expect(JSON.parse(await readFile(join(dir, "checkpoints", "latest.json"), "utf8"))).toMatchObject({ done: 2 });
    expect(await readdir(join(dir, "checkpoints", "gspo-00002"))).toEqual(["policy.json", "replay.json"]);

    const resumed = new InProcessBackend(new RubricPolicy({ dim: 16, seed: 99 }));
    await trainGspo(gymOptions(resumed, { ...options, run: { dir, resume: true } }));
    resumed.policy.parameters.forEach((p, b) =>
      expect(Array.from(p)).toEqual(Array.from(straight.policy.parameters[b]!)),
    );
    // The partial directory went with the other earlier ones once a newer checkpoint was written.
    expect(await checkpointsIn(dir)).toEqual(["gspo-00004", "latest.json"]);
  });

  it("refuses an empty prompt list, and a run directory whose log does not read, each by its code", async () => {
    const backend = new InProcessBackend(new RubricPolicy({ dim: 16, seed: 1 }));
    const empty = await trainGspo(gymOptions(backend, { prompts: [] })).catch((e: unknown) => e);
    expect(empty).toBeInstanceOf(TrainingInputError);
    expect(empty).toMatchObject({
      code: "training.input",
      message: "trainGspo: options.prompts must hold at least one prompt, got []",
    });
    const dir = await tempDir();
    await writeFile(join(dir, "log.jsonl"), '{"stage":"gspo","batch":-1}\n');
    const damaged = await trainGspo(gymOptions(backend, { batches: 1, run: { dir } })).catch((e: unknown) => e);
    expect(damaged).toBeInstanceOf(RunFileError);
    expect(damaged).toMatchObject({ code: "run.file", message: expect.stringContaining("log.jsonl:line 1: batch") });
  });

  it("reports a damaged or foreign checkpoint as a CheckpointError naming the file", async () => {
    const dir = await tempDir();
    const backend = new InProcessBackend(new RubricPolicy({ dim: 16, seed: 1 }));
    await backend.save(dir);
    await expect(new InProcessBackend(new RubricPolicy({ dim: 32 })).load(dir)).rejects.toThrow(
      /policy\.json: written by a policy with another shape \(RubricPolicy\(writes criteria, dim 16, .*this one is RubricPolicy\(writes criteria, dim 32/,
    );
    const file = join(dir, "policy.json");
    const checkpoint = JSON.parse(await readFile(file, "utf8"));
    checkpoint.parameters[1][3] = "x";
    await writeFile(file, JSON.stringify(checkpoint));
    await expect(backend.load(dir)).rejects.toThrow(CheckpointError);
    await expect(backend.load(dir)).rejects.toThrow(/policy\.json: parameters\[1\]\[3\]: /);
  });

  it("round-trips parameters, reference and optimiser state through save/load", async () => {
    const dir = await tempDir();
    const a = new InProcessBackend(new RubricPolicy({ dim: 32, seed: 4 }));
    await a.setReference();
    await trainGspo(gymOptions(a, { prompts: train.slice(0, 3), batches: 1, klCoef: 0.1 }));
    await a.save(dir);
    const b = new InProcessBackend(new RubricPolicy({ dim: 32, seed: 8 }));
    await b.load(dir);
    // The same next step from both: parameters, reference (KL) and Adam moments all restored.
    const groups = await offPolicyGroups(a, "gspo");
    b.policy.parameters.forEach((p, i) => p.set(a.policy.parameters[i]!));
    const step = { objective: "gspo" as const, epsLow: 0.2, epsHigh: 0.2, learningRate: 0.05, klCoef: 0.1 };
    expect(await b.step(groups, step)).toEqual(await a.step(groups, step));
    b.policy.parameters.forEach((p, i) => expect(Array.from(p)).toEqual(Array.from(a.policy.parameters[i]!)));
  });
});
