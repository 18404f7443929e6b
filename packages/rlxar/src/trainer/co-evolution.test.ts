import { cp, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readManifest, RubricModel } from "@rubric/arco-heads";
import { valueDifferences, valueLoss } from "@rubric/core";
import { InputFileSymlinkError } from "@rubric/core/files";
import { RemoteMu, SidecarClient } from "@rubric/sidecar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYS, type LookupTask, lookupEnvironment, TablePolicy } from "../__fixtures__/lookup.js";
import { episodeSteps, rollout } from "../rollout/rollout.js";
import { RunExistsError, RunFileError } from "@rubric/core/runs";
import { RlxarInputError } from "../errors.js";
import { contrastScores } from "../diagnostics/step-scores.js";
import { MuCritic, type MuCredit } from "../critic/mu-critic.js";
import { createMu } from "../mu/sidecar-mu.js";
import { denseAdvantages, sparseAdvantages } from "./advantages.js";
import { type BatchDetail, isTrainable, planBatches, trainCoEvolution, type TrainerEvent } from "./co-evolution.js";
import { TrainerSettingsSchema } from "./settings.js";

const TIMEOUT_MS = 600_000; // a guard for a busy 2-core machine, not a measurement
const environment = lookupEnvironment();
const tasks: LookupTask[] = KEYS.flatMap((key) => [0, 1].map((i) => ({ id: `${key}-${i}`, key })));
const MU_UPDATE = { learningRate: 1e-4, headLearningRate: 1e-3, beta: 0.05 };
const SETTINGS = {
  sparseEpochs: 1,
  denseEpochs: 1,
  rolloutsPerBatch: 8,
  groupSize: 4,
  sparseLearningRate: 0.5,
  denseLearningRate: 0.5,
  seed: 3,
};

describe("planBatches", () => {
  it("groups the sparse phase, spreads the dense phase, and keeps outcome-only runs sparse", () => {
    const settings = TrainerSettingsSchema.parse(SETTINGS);
    const plan = planBatches(tasks, settings);
    // 8 tasks: sparse 2 tasks × 4 rollouts → 4 batches; dense 8 tasks × 1 → 1 batch
    expect(plan.map((b) => [b.epoch, b.phase, b.tasks.length, b.replicas])).toEqual([
      [1, "sparse", 2, 4],
      [1, "sparse", 2, 4],
      [1, "sparse", 2, 4],
      [1, "sparse", 2, 4],
      [2, "dense", 8, 1],
    ]);
    // each epoch is one pass over every task, in a seeded order that differs between epochs
    expect(new Set(plan.filter((b) => b.epoch === 1).flatMap((b) => b.tasks))).toEqual(new Set(tasks));
    expect(planBatches(tasks, settings)).toEqual(plan);
    const outcome = planBatches(tasks, TrainerSettingsSchema.parse({ ...SETTINGS, signal: "outcome" }));
    expect(outcome.every((b) => b.phase === "sparse" && b.replicas === 4)).toBe(true);
    expect(outcome).toHaveLength(8);
  });
});

describe("trainCoEvolution on a user's environment with a real μ", () => {
  let client: SidecarClient;
  let base: string;
  const roots: string[] = [];

  /** A fresh copy of the warm-up μ (v0001), loaded into the sidecar and onnxruntime-node. */
  async function freshMu(criteria?: { kind: "fixed"; criteria: string[] }, update = true, credit?: MuCredit) {
    const root = await mkdtemp(join(tmpdir(), "rlxar-run-"));
    roots.push(root);
    await cp(join(base, "v0001"), join(root, "v0001"), { recursive: true });
    const mu = await RemoteMu.load(client, join(root, "v0001"));
    const model = await RubricModel.load(root, { threads: 1 });
    const critic = await MuCritic.open({
      model,
      ...(update ? { mu, root, update: MU_UPDATE } : {}),
      ...(criteria === undefined ? {} : { criteria }),
      ...(credit === undefined ? {} : { credit }),
      maxNewTokens: 12,
    });
    return { root, model, critic, mu };
  }

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), "rlxar-mu-base-"));
    client = await SidecarClient.start({ threads: 1 });
    const corpus = (await rollout(environment, tasks, new TablePolicy(), { temperature: 1, seed: 0 })).flatMap(
      (episode) => episodeSteps(episode),
    );
    await createMu(client, base, {
      k: 3,
      seed: 5,
      shape: { dModel: 16, heads: 2, layers: 1, maxSequence: 768 },
      maxCriteriaTokens: 12,
      vocabularySize: 400,
      corpus,
    });
  }, TIMEOUT_MS);
  afterAll(async () => {
    await client?.close();
    for (const dir of [base, ...roots]) await rm(dir, { recursive: true, force: true });
  }, TIMEOUT_MS);

  it(
    "credit as the change of μ's value (ours): each step's s is the change it brought, μ trained by the value loss",
    async () => {
      const scored = await freshMu(undefined, false);
      const valued = await freshMu(undefined, true, "value-difference");
      // The credit asks for a μ trained as a value: told to decompose R instead, it refuses.
      await expect(
        MuCritic.open({
          model: valued.model,
          mu: valued.mu,
          root: valued.root,
          update: { ...MU_UPDATE, objective: "decomposition" },
          credit: "value-difference",
        }),
      ).rejects.toThrow(/update\.objective.*"value-difference" reads a μ trained by "value"/);
      const episodes = await rollout(environment, tasks.slice(0, 6), new TablePolicy(), { temperature: 1, seed: 4 });
      const plain = await scored.critic.rate(episodes);
      const q = plain.map((steps) => steps.map((step) => step.s));
      const ratings = await valued.critic.rate(episodes);
      const start = episodes.reduce((sum, e) => sum + e.reward, 0) / episodes.length;
      ratings.forEach((steps, e) => {
        // The same export: μ's own scores d stay, s becomes their differences, the outcome after the last.
        expect(steps.map((step) => step.scores)).toEqual(plain[e]!.map((step) => step.scores));
        const credits = valueDifferences([start, ...q[e]!.slice(0, -1)], episodes[e]!.reward);
        steps.forEach((step, t) => expect(step.s).toBeCloseTo(credits[t]!, 12));
        expect(steps.reduce((sum, step) => sum + step.s, 0)).toBeCloseTo(episodes[e]!.reward - start, 10);
      });
      // The update fits the value loss (the credit's default objective) on μ's own scores (the
      // sidecar's torch and the export agree to float32).
      const { metrics } = await valued.critic.update(episodes, ratings);
      expect(metrics.score_loss as number).toBeCloseTo(
        valueLoss(
          q,
          episodes.map((e) => e.reward),
        ).loss,
        4,
      );
      await scored.model.close();
      await valued.model.close();
    },
    TIMEOUT_MS,
  );

  it(
    "gives π the group advantages, then μ's bucketed reward-to-go, and updates and reloads μ every batch",
    async () => {
      const { model, critic } = await freshMu();
      const policy = new TablePolicy();
      const details: BatchDetail[] = [];
      const phases: string[] = [];
      const result = await trainCoEvolution({
        environment,
        train: tasks,
        evaluation: tasks,
        policy,
        critic,
        settings: SETTINGS,
        onEvent: (event) => {
          if (event.type !== "batch") return;
          details.push(event.detail);
          phases.push(event.line.phase);
        },
      });
      expect(phases).toEqual(["sparse", "sparse", "sparse", "sparse", "dense"]);
      details.forEach((detail, b) => {
        const expected =
          b < 4
            ? sparseAdvantages(detail.episodes)
            : denseAdvantages(
                detail.episodes,
                detail.ratings!.map((steps) => steps.map((step) => step.s)),
              );
        expect(detail.advantages).toEqual(expected);
        // what π was handed is exactly that, step by step
        expect(policy.updates[b]!.map((s) => s.advantage)).toEqual(expected.flat());
        expect(detail.ratings!.every((steps) => steps.every((step) => step.criteria.length === 3))).toBe(true);
      });
      // the dense batch's advantages come from μ's scores, not from the rewards
      const dense = details[4]!;
      expect(dense.advantages.flat().some((a) => a !== 0)).toBe(true);
      // one export per batch, each reloaded, and the sidecar holds the weights in service
      const versions = result.log.flatMap((line) => (line.type === "batch" ? [line.muVersion] : []));
      expect(versions).toEqual([2, 3, 4, 5, 6]);
      const { fingerprint } = await client.request("mu.fingerprint", {});
      expect((await readManifest(model.directory)).manifest.training.fingerprint).toBe(fingerprint);
      // evaluated before training and after each epoch
      expect(result.log.filter((line) => line.type === "eval").map((line) => line.epoch)).toEqual([0, 1, 2]);
      await model.close();
    },
    TIMEOUT_MS,
  );

  it(
    "lowers μ's class-balanced decomposition loss on the batch it trained on",
    async () => {
      const criteria = {
        kind: "fixed" as const,
        criteria: ["Reads the key asked for", "Answers what it read", "Spends no extra looks"],
      };
      const { model, critic } = await freshMu(criteria);
      const episodes = await rollout(environment, tasks, new TablePolicy(), { temperature: 1, seed: 11 });
      expect(new Set(episodes.map((e) => e.reward)).size).toBe(2); // both classes present
      const loss = (ratings: Awaited<ReturnType<MuCritic["rate"]>>) => {
        const n = episodes.length;
        const pos = episodes.filter((e) => e.reward > 0.5).length;
        return (
          episodes.reduce((sum, e, i) => {
            const w = e.reward > 0.5 ? n / (2 * pos) : n / (2 * (n - pos));
            const total = ratings[i]!.reduce((a, s) => a + s.s, 0);
            return sum + w * (total - e.reward) ** 2;
          }, 0) / n
        );
      };
      const before = await critic.rate(episodes);
      const update = await critic.update(episodes, before);
      const after = await critic.rate(episodes);
      expect(update.version).toBe(2);
      // the sidecar's own loss on that batch is ours, computed from the onnx scores before the step
      expect(update.metrics.score_loss as number).toBeCloseTo(loss(before), 4);
      expect(loss(after)).toBeLessThan(loss(before));
      // a frozen critic cannot be updated
      const frozen = await freshMu(criteria, false);
      await expect(frozen.critic.update(episodes, before)).rejects.toThrow(RlxarInputError);
      await frozen.model.close();
      await model.close();
    },
    TIMEOUT_MS,
  );

  it(
    "judges whole trajectories with a frozen μ for the RaR baseline, and never updates it",
    async () => {
      const { model, critic } = await freshMu(undefined, false);
      const details: BatchDetail[] = [];
      const result = await trainCoEvolution({
        environment,
        train: tasks,
        policy: new TablePolicy(),
        critic,
        settings: { ...SETTINGS, signal: "trajectory-rubric" },
        onEvent: (event) => {
          if (event.type === "batch") details.push(event.detail);
        },
      });
      expect(result.log.every((line) => line.type !== "batch" || line.muVersion === 1)).toBe(true);
      for (const detail of details) {
        const sums = detail.ratings!.map((steps) => steps.reduce((a, s) => a + s.s, 0));
        expect(detail.advantages).toEqual(sparseAdvantages(detail.episodes, sums));
      }
      await expect(
        trainCoEvolution({
          environment,
          train: tasks,
          policy: new TablePolicy(),
          settings: { signal: "trajectory-rubric" },
        }),
      ).rejects.toThrow(new RlxarInputError("critic", 'signal "trajectory-rubric" needs μ (a critic) to score steps'));
      await model.close();
    },
    TIMEOUT_MS,
  );

  it(
    "rolls out a policy that cannot be trained, and co-evolves μ on its rollouts",
    async () => {
      const { model, critic } = await freshMu();
      const table = new TablePolicy();
      const served = { name: "served", act: table.act.bind(table) };
      expect(isTrainable(served)).toBe(false);
      expect(isTrainable(table)).toBe(true);
      const result = await trainCoEvolution({ environment, train: tasks, policy: served, critic, settings: SETTINGS });
      const batches = result.log.filter((line) => line.type === "batch");
      expect(batches.every((line) => line.policy === undefined)).toBe(true);
      expect(batches.map((line) => line.muVersion)).toEqual([2, 3, 4, 5, 6]);
      expect(table.logits.size).toBe(0); // nothing trained π
      await model.close();
    },
    TIMEOUT_MS,
  );

  it(
    "contrasts the same prefix with a better and a worse action (Δs)",
    async () => {
      const { model, critic } = await freshMu();
      const pairs = KEYS.map((key, i) => ({
        better: { task: `What is stored under ${key}?`, history: [], budgetLeft: 2, action: `Look[${key}]` },
        worse: {
          task: `What is stored under ${key}?`,
          history: [],
          budgetLeft: 2,
          action: `Look[${KEYS[(i + 1) % KEYS.length]}]`,
        },
      }));
      const result = await contrastScores(critic, pairs);
      const better = await critic.rateSteps(pairs.map((pair) => pair.better));
      const worse = await critic.rateSteps(pairs.map((pair) => pair.worse));
      expect(result.deltas).toEqual(better.map((b, i) => b.s - worse[i]!.s));
      expect(result.pairs).toBe(4);
      expect(result.preferred).toBe(result.deltas.filter((d) => d > 0).length / 4);
      await model.close();
    },
    TIMEOUT_MS,
  );

  it(
    "resumes after a crash to exactly the run that was not interrupted",
    async () => {
      const settings = { ...SETTINGS, sparseEpochs: 1, denseEpochs: 1 };
      const whole = await freshMu();
      const wholeDir = join(whole.root, "run");
      const wholePolicy = new TablePolicy();
      await trainCoEvolution({
        environment,
        train: tasks,
        policy: wholePolicy,
        critic: whole.critic,
        settings,
        run: { dir: wholeDir },
      });
      await whole.model.close();

      const broken = await freshMu();
      const dir = join(broken.root, "run");
      const crash = (event: TrainerEvent) => {
        if (event.type === "batch" && event.done === 2) throw new Error("power cut");
      };
      const run = (
        policy: TablePolicy,
        more: Partial<Parameters<typeof trainCoEvolution<LookupTask>>[0]> = {},
        resume = false,
      ) =>
        trainCoEvolution({
          environment,
          train: tasks,
          policy,
          critic: broken.critic,
          settings,
          run: { dir, resume },
          ...more,
        });
      await expect(run(new TablePolicy(), { onEvent: crash })).rejects.toThrow("power cut");
      // a run is there: resuming must be asked for
      await expect(run(new TablePolicy())).rejects.toThrow(RunExistsError);
      // the same layout as GSPO's: the log, one checkpoint of π, the pointer naming it with μ's version
      expect((await readdir(join(dir, "checkpoints"))).sort()).toEqual(["co-evolution-00002", "latest.json"]);
      expect(JSON.parse(await readFile(join(dir, "checkpoints", "latest.json"), "utf8"))).toMatchObject({
        trainer: "rlxar",
        stage: "co-evolution",
        done: 2,
        state: { muVersion: expect.any(Number) },
      });
      // a damaged log is refused by name and line, not trusted
      const logText = await readFile(join(dir, "log.jsonl"), "utf8");
      await writeFile(join(dir, "log.jsonl"), `${logText}{"type":"batch","epoch":"one"}\n`);
      const damaged = run(new TablePolicy(), {}, true);
      await expect(damaged).rejects.toThrow(RunFileError);
      await expect(damaged).rejects.toThrow(/line 3.*epoch/);
      // a log that is a link is refused, even to the very same lines: a run directory may come
      // from elsewhere, and its files must not stand for other files of this machine
      await writeFile(join(dir, "elsewhere.jsonl"), logText);
      await rm(join(dir, "log.jsonl"));
      await symlink(join(dir, "elsewhere.jsonl"), join(dir, "log.jsonl"));
      await expect(run(new TablePolicy(), {}, true)).rejects.toThrow(InputFileSymlinkError);
      await rm(join(dir, "log.jsonl"));
      await writeFile(join(dir, "log.jsonl"), logText);
      const events: TrainerEvent[] = [];
      const resumedPolicy = new TablePolicy();
      await run(resumedPolicy, { onEvent: (event) => events.push(event) }, true);
      expect(events[0]).toEqual({ type: "resumed", batches: 2 });
      const strip = (text: string) =>
        text
          .trim()
          .split("\n")
          .map((line) => {
            // times differ between runs; everything else must not
            const { ms: _ms, mu, ...rest } = JSON.parse(line) as { ms?: unknown; mu?: { compute_ms?: unknown } };
            const { compute_ms: _compute, ...muRest } = mu ?? {};
            return { ...rest, mu: muRest };
          });
      expect(strip(await readFile(join(dir, "log.jsonl"), "utf8"))).toEqual(
        strip(await readFile(join(wholeDir, "log.jsonl"), "utf8")),
      );
      expect(resumedPolicy.logits).toEqual(wholePolicy.logits);
      // RL starts with a fresh optimiser once, at the start, never again on a resume (the
      // checkpoint carries the RL optimiser's own state).
      expect(wholePolicy.resets).toBe(1);
      expect(resumedPolicy.resets).toBe(0);
      await broken.model.close();
    },
    TIMEOUT_MS,
  );
});
