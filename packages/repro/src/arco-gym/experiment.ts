// The ARCO gym run (a simulation): per hop count and seed, one warm-up, then every method from it
// at the same rollout budget, and the table that compares them with paired tests.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SidecarClient } from "@rubric/sidecar";
import { mcnemarExact, mean, pairedTTest, summarizeSeeds } from "@rubric/core";
import {
  arcoGym,
  type CoEvolutionOptions,
  criterionValidity,
  type Episode,
  evidenceAuc,
  type Environment,
  type FeatureCritic,
  featureCritic,
  GYM_ACTION_FEATURE_NAMES,
  GYM_FEATURE_NAMES,
  GYM_STATE_FEATURE_NAMES,
  gymActionFeatures,
  gymStateFeatures,
  type GymPolicy,
  type GymTask,
  generateGymTasks,
  gymNoisyTeacher,
  gymPolicy,
  gymStepFeatures,
  gymTeacherCritic,
  imitate,
  readWordVectors,
  rollout,
  type StepCritic,
  type TrainerSettingsInput,
  trainCoEvolution,
  TRUE_ADVANTAGE_CRITERION,
  trueAdvantageCritic,
  trueStepAdvantages,
  type WordVectors,
} from "@rubric/rlxar";
import { ReproInputError } from "../errors.js";
import { checkRunConfig, checkRunSidecar } from "../resume/settings.js";
import { sidecarRecord } from "../sidecar/record.js";
import type { ArcoGymConfig } from "./config.js";
import {
  GYM_CONFIG_FILE,
  GYM_RUNS_DIR,
  GYM_SIDECAR_FILE,
  type GymMethodRun,
  readGymMethodRun,
  readMuWarmupRecord,
  writeGymMethodRun,
  writeMuWarmupRecord,
} from "./run-record.js";
import {
  criticWarmupEpisodes,
  definedSpearman,
  type GymMuCritic,
  openGymMuCritic,
  type WarmGymMu,
  warmGymMu,
} from "./mu.js";
import {
  ARCO_GYM_CRITICS,
  ARCO_GYM_FEATURE_METHODS,
  ARCO_GYM_METHODS,
  type ArcoGymFeatureSet,
  featureSetOf,
  ARCO_GYM_CO_EVOLVING_MU_METHODS,
  ARCO_GYM_MU_METHODS,
  muWarmupKey,
  muWarmupOf,
  type ArcoGymMethod,
  type ArcoGymTable,
  ArcoGymTableSchema,
} from "./table.js";

/** What a run reports as it goes (the CLI draws "run k of n" and a bar of batches from it). */
export type ArcoGymProgress =
  | {
      readonly type: "run";
      /** 1-based: this is run `index` of `total` (hop counts × seeds × methods). */
      readonly index: number;
      readonly total: number;
      readonly hops: number;
      readonly seed: number;
      readonly method: ArcoGymMethod;
      /** A resume read this run back from the run's directory instead of training it. */
      readonly kept?: true;
    }
  | { readonly type: "batch"; readonly done: number; readonly total: number }
  /**
   * μ's warm-up for hop count `hops`: epoch `epoch` of `of` done (0 when it starts); `stage`
   * `pretrain` while it is pretrained as a language model first (ours; absent: the warm-up).
   */
  | {
      readonly type: "mu";
      readonly hops: number;
      readonly epoch: number;
      readonly of: number;
      readonly stage?: "pretrain";
    };

export interface ArcoGymRunOptions {
  readonly onProgress?: (event: ArcoGymProgress) => void;
  /** The sidecar (torch) that warms up and trains μ: required when a learned critic (`frozenMu`, `arco`) runs. */
  readonly client?: SidecarClient;
  /**
   * A directory the run keeps itself in as it goes: its configuration and sidecar, then each
   * method run (per H and seed) and μ warm-up as it finishes (`runs/`). A fresh start clears an
   * earlier `runs/`; absent, nothing is kept and nothing can be resumed.
   */
  readonly out?: string;
  /**
   * Continue the run kept in `out` (the same configuration and sidecar threads, refused
   * otherwise): finished method runs are read back instead of trained again, and a μ is warmed up
   * again only when a run still to do needs it (its warm-up is deterministic on the same threads).
   */
  readonly resume?: boolean;
}

/** One method's run on one hop count and seed: its success per evaluation task and its learning curve. */
type MethodRun = GymMethodRun;

/** The trainer settings and critic of a method, from the same warm-up and budget. */
function methodSetup(
  method: ArcoGymMethod,
  config: ArcoGymConfig,
  seed: number,
  environment: Environment<GymTask>,
  train: readonly GymTask[],
  policy: GymPolicy,
  muCritic: StepCritic | undefined,
): { settings: TrainerSettingsInput; critic?: StepCritic; epochRollouts: number } {
  const { rl } = config;
  const common = { rolloutsPerBatch: rl.rolloutsPerBatch, groupSize: rl.groupSize, temperature: rl.temperature, seed };
  if (method === "outcome" || method === "rar") {
    // Sparse all the way: outcome-only RL on R, RaR on the frozen μ's Σ_t s_t, in GRPO groups.
    const epochRollouts = config.trainTasks * rl.groupSize;
    return {
      epochRollouts,
      ...(method === "rar" ? { critic: muCritic } : {}),
      settings: {
        ...common,
        signal: method === "rar" ? "trajectory-rubric" : "outcome",
        sparseEpochs: rl.budget / epochRollouts,
        denseEpochs: 0,
        sparseLearningRate: rl.learningRate,
        sparseKl: 0,
      },
    };
  }
  // A dense method: ARCO's dense phase from the warm-up, each step's score taken as it is (γ = 0,
  // scale 1) against a baseline per step index (the repaired estimator of item 1); the same
  // learning rate and no KL, so the critic is the only difference from outcome RL. The control's
  // critic is the true advantage; the teacher's, its hindsight scores; the learned ones, μ's.
  const epochRollouts = config.trainTasks;
  return {
    epochRollouts,
    settings: {
      ...common,
      signal: "arco",
      sparseEpochs: 0,
      denseEpochs: rl.budget / epochRollouts,
      denseLearningRate: rl.learningRate,
      denseKl: 0,
      denseScale: 1,
      gamma: 0,
      terminalBuckets: "per-step",
      outcomeAtTerminal: method === "arcoOutcome",
    },
    critic:
      muCritic ??
      (method === "teacherHindsight"
        ? gymTeacherCritic(3)
        : trueAdvantageCritic(environment, policy, {
            tasks: train,
            rollouts: config.trueAdvantage.rollouts,
            temperature: rl.temperature,
            seed: `true-advantage/${seed}`,
          })),
  };
}

/**
 * A feature critic for H-hop tasks over one feature set, fitted on `episodes` (μ's warm-up
 * episodes, outcomes only): ARCO's decomposition loss over the policy's features or the action's
 * alone, a state value's regression over the state's. Fitted once per H and set; each method's
 * run takes a copy (`featureMu` frozen, the others co-evolving).
 */
function fittedFeatureCritic(
  episodes: readonly Episode[],
  hops: number,
  config: ArcoGymConfig,
  set: ArcoGymFeatureSet,
) {
  const { feature } = config;
  const [features, names] =
    set === "action"
      ? [gymActionFeatures, GYM_ACTION_FEATURE_NAMES]
      : set === "state"
        ? [gymStateFeatures, GYM_STATE_FEATURE_NAMES]
        : [gymStepFeatures, GYM_FEATURE_NAMES];
  const critic = featureCritic({
    features,
    names,
    objective: set === "state" ? "value-difference" : "decomposition",
    learningRate: feature.learningRate,
    beta: feature.beta,
  });
  const fit = critic.fit(episodes, { epochs: feature.epochs, seed: `feature-critic/${hops}` });
  return { critic, fit };
}

/**
 * Held-out rollouts of a policy (the warm-up's, or a method's π as RL left it) with each step's
 * true advantage under that policy: what every critic's credit is measured on. On the warm-up's
 * probe the advantage is estimated twice, independently: the second estimate, scored as a critic
 * against the first, is the reference — what perfect credit measures on this probe, the
 * Monte-Carlo estimate's own noise included — beside which each critic's is read.
 */
interface CreditProbe {
  readonly episodes: readonly Episode[];
  readonly advantages: readonly (readonly number[])[];
  readonly reference?: CreditReference;
}

type CreditReference = NonNullable<CreditMeasure["reference"]>;

async function creditProbe(
  environment: Environment<GymTask>,
  tasks: readonly GymTask[],
  policy: GymPolicy,
  config: ArcoGymConfig,
  draws: { readonly rollouts: string; readonly truth: string; readonly reference?: string },
): Promise<CreditProbe> {
  const episodes = await rollout(environment, tasks, policy, {
    temperature: config.rl.temperature,
    seed: draws.rollouts,
  });
  const estimate = async (seed: string) => {
    const advantages: number[][] = [];
    for (const [i, episode] of episodes.entries()) {
      const credit = await trueStepAdvantages(environment, tasks[i]!, policy, episode, {
        rollouts: config.creditProbeRollouts,
        temperature: config.rl.temperature,
        seed,
      });
      advantages.push(credit.map((c) => c.advantage));
    }
    return advantages;
  };
  const advantages = await estimate(draws.truth);
  if (draws.reference === undefined) return { episodes, advantages };
  const again = await estimate(draws.reference);
  const ratings = again.map((row) => row.map((s) => ({ criteria: [TRUE_ADVANTAGE_CRITERION], scores: [s], s })));
  return {
    episodes,
    advantages,
    reference: {
      spearman: definedSpearman(again.flat(), advantages.flat()),
      evidenceAuc: evidenceAuc(episodes, ratings).auc ?? null,
    },
  };
}

/** One critic's credit on a probe. */
type CreditMeasure = NonNullable<GymMethodRun["credit"]>;

async function measureCredit(critic: StepCritic, probe: CreditProbe, atEnd: CreditProbe): Promise<CreditMeasure> {
  const { points, ...summary } = await creditOn(critic, probe);
  const { points: _, ...end } = await creditOn(critic, atEnd);
  return { ...summary, ...(probe.reference === undefined ? {} : { reference: probe.reference }), atEnd: end, points };
}

async function creditOn(critic: StepCritic, probe: CreditProbe) {
  const ratings = await critic.rate(probe.episodes);
  const points = probe.advantages.flatMap((row, e) => row.map((advantage, t) => ({ advantage, s: ratings[e]![t]!.s })));
  return {
    spearman: definedSpearman(
      points.map((p) => p.s),
      points.map((p) => p.advantage),
    ),
    evidenceAuc: evidenceAuc(probe.episodes, ratings).auc ?? null,
    criterionValidity: criterionValidity(probe.episodes, ratings).validity,
    steps: points.length,
    points,
  };
}

async function successes(env: Environment<GymTask>, tasks: readonly GymTask[], policy: GymPolicy): Promise<number[]> {
  return (await rollout(env, tasks, policy, { temperature: 0, seed: "evaluation" })).map((e) => e.reward);
}

/**
 * Runs the ARCO gym's comparison (a simulation). For each hop count H and training seed: the
 * noisy teacher's episodes on the seed's training tasks, imitated into a warm-up policy; then
 * each method trains a copy of the warm-up for the same budget of rollouts (`trainCoEvolution`,
 * a fresh optimiser) and is evaluated greedily on the evaluation tasks, which are the same for
 * every seed and are never trained or selected on. The learning curves evaluate the same tasks
 * after every epoch, for the plots only. Returns the checked table.
 *
 * @example
 * const table = await runArcoGym(arcoGymConfig({ quick: true }));
 * table.valueOfDenseCredit.at(-1); // { hops: 4, outcome: {…}, trueAdvantage: {…}, gap, p, … }
 */
export async function runArcoGym(config: ArcoGymConfig, options: ArcoGymRunOptions = {}): Promise<ArcoGymTable> {
  const learned = config.methods.filter((m) => ARCO_GYM_MU_METHODS.includes(m));
  const client = options.client;
  if (options.resume === true && options.out === undefined)
    throw new ReproInputError("out", "a resume continues the run kept in a directory: name it (out)");
  if (learned.length > 0 && client === undefined)
    throw new ReproInputError(
      "client",
      `${learned.join(", ")} need μ, which the sidecar (torch) trains: pass a SidecarClient`,
    );
  // Read before any training: a missing or malformed vector file is refused up front.
  const wordVectors =
    learned.length > 0 && config.mu.wordVectors !== null ? await readWordVectors(config.mu.wordVectors) : undefined;
  const scratch = learned.length > 0 ? await mkdtemp(join(tmpdir(), "rubric-arco-gym-")) : undefined;
  try {
    return await runAll(config, options, client, scratch, wordVectors);
  } finally {
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  }
}

async function runAll(
  config: ArcoGymConfig,
  options: ArcoGymRunOptions,
  client: SidecarClient | undefined,
  scratch: string | undefined,
  wordVectors: WordVectors | undefined,
): Promise<ArcoGymTable> {
  const started = performance.now();
  const environment = arcoGym();
  // Recorded, since μ's weights depend on torch's thread count (its sums' order).
  const sidecar = client === undefined || scratch === undefined ? undefined : await sidecarRecord(client);
  const { out } = options;
  const resume = options.resume === true;
  if (out !== undefined) {
    await mkdir(out, { recursive: true });
    await checkRunConfig(join(out, GYM_CONFIG_FILE), config, resume);
    if (sidecar !== undefined) await checkRunSidecar(join(out, GYM_SIDECAR_FILE), sidecar, resume);
    // A fresh start's pieces must not meet an earlier run's in a later resume.
    if (!resume) await rm(join(out, GYM_RUNS_DIR), { recursive: true, force: true });
  }
  const runs = Object.fromEntries(ARCO_GYM_METHODS.map((m) => [m, new Map()])) as Record<
    ArcoGymMethod,
    Map<number, MethodRun[]>
  >;
  const byMethodMs: Record<string, number> = Object.fromEntries([["warmup", 0], ...config.methods.map((m) => [m, 0])]);
  const warmup: ArcoGymTable["warmup"] = [];
  const muWarmup: NonNullable<ArcoGymTable["muWarmup"]> = [];
  const featureWarmup: NonNullable<ArcoGymTable["featureWarmup"]> = [];
  const total = config.hops.length * config.seeds.length * config.methods.length;
  let index = 0;

  for (const hops of config.hops) {
    const evaluation = generateGymTasks({
      hops,
      count: config.evalTasks,
      seed: config.seed,
      split: config.evaluationSplit,
      lookalikes: config.lookalikes,
    });
    const probeTasks = evaluation.slice(0, config.creditProbeTasks);
    // What a resume finds finished at this H: kept as it is, never trained again.
    const kept = new Map<string, MethodRun>();
    if (out !== undefined && resume)
      for (const seed of config.seeds)
        for (const method of config.methods) {
          const run = await readGymMethodRun(out, { hops, seed, method });
          if (run !== undefined) kept.set(`${seed}/${method}`, run);
        }
    const toDo = (seed: number, method: ArcoGymMethod) => !kept.has(`${seed}/${method}`);
    // One warm-up μ per H and kind (objective, examples, K), shared by every seed and by the
    // methods of that kind (it does not depend on a seed's policy): ARCO's for its methods, a
    // value (ours) for muValue, and one per ablation (PRM, fixed criteria, no prefix, K = 1, 5).
    const warmMus = new Map<string, WarmGymMu>();
    const kinds = new Map(
      config.methods
        .filter((m) => ARCO_GYM_MU_METHODS.includes(m))
        .map((m) => muWarmupOf(m, config.mu.k))
        .map((kind) => [muWarmupKey(kind), kind] as const),
    );
    for (const [key, kind] of kinds) {
      if (client === undefined || scratch === undefined) break;
      // A μ no run still to do needs is tabled from its record, not warmed up again.
      const needed = config.methods.some(
        (m) =>
          ARCO_GYM_MU_METHODS.includes(m) &&
          muWarmupKey(muWarmupOf(m, config.mu.k)) === key &&
          config.seeds.some((seed) => toDo(seed, m)),
      );
      const record = out === undefined || needed ? undefined : await readMuWarmupRecord(out, hops, key);
      if (record !== undefined) {
        muWarmup.push(record);
        byMethodMs.muWarmup = (byMethodMs.muWarmup ?? 0) + record.ms;
        continue;
      }
      options.onProgress?.({
        type: "mu",
        hops,
        epoch: 0,
        ...(config.mu.pretrainTasks > 0
          ? { of: config.mu.pretrainEpochs, stage: "pretrain" as const }
          : { of: config.mu.sftEpochs }),
      });
      const warm = await warmGymMu(client, join(scratch, `mu-h${hops}-${key}`), hops, config, {
        ...(wordVectors === undefined ? {} : { wordVectors }),
        kind,
        onEpoch: (epoch, of) => options.onProgress?.({ type: "mu", hops, epoch, of }),
        onPretrainEpoch: (epoch, of) => options.onProgress?.({ type: "mu", hops, epoch, of, stage: "pretrain" }),
      });
      warmMus.set(key, warm);
      const { directory: _, pretrain, ...warmRecord } = warm;
      const row = {
        hops,
        pooling: config.mu.pooling,
        promptLayout: config.mu.promptLayout,
        ...warmRecord,
        sftLoss: [...warmRecord.sftLoss],
        sftScores: { ...warmRecord.sftScores, mse: [...warmRecord.sftScores.mse] },
        ...(pretrain === undefined ? {} : { pretrain: { ...pretrain, ce: [...pretrain.ce] } }),
      };
      muWarmup.push(row);
      if (out !== undefined) await writeMuWarmupRecord(out, key, row);
      byMethodMs.muWarmup = (byMethodMs.muWarmup ?? 0) + warm.ms;
    }
    // The feature critics' warm-up: μ's warm-up episodes, their outcomes only, one fit per
    // feature set the run's methods read, recorded; each method's run copies its set's fit.
    const featureFits = new Map<ArcoGymFeatureSet, FeatureCritic>();
    if (config.methods.some((m) => ARCO_GYM_FEATURE_METHODS.includes(m))) {
      const mark = performance.now();
      const episodes = await criticWarmupEpisodes(hops, config);
      const sets = [...new Set(config.methods.flatMap((m) => featureSetOf(m) ?? []))];
      for (const features of sets) {
        const fitted = fittedFeatureCritic(episodes, hops, config, features);
        featureFits.set(features, fitted.critic);
        const last = fitted.fit.at(-1)!;
        const { byFeature, bias } = fitted.critic.weights();
        featureWarmup.push({
          hops,
          features,
          episodes: episodes.length,
          successes: episodes.filter((e) => e.reward > 0.5).length,
          loss: last.loss,
          meanAbsoluteGap: last.meanAbsoluteGap,
          weights: { ...byFeature },
          bias,
        });
      }
      byMethodMs.featureWarmup = (byMethodMs.featureWarmup ?? 0) + performance.now() - mark;
    }
    for (const seed of config.seeds) {
      let mark = performance.now();
      const train = generateGymTasks({
        hops,
        count: config.trainTasks,
        seed: `${config.seed}/${seed}`,
        split: "train",
        lookalikes: config.lookalikes,
      });
      const teacher = gymNoisyTeacher(train, { noise: config.teacher.noise });
      const episodes = await rollout(environment, train, teacher, {
        temperature: 1,
        seed: `warm-up/${seed}`,
        replicas: config.teacher.replicas,
      });
      const warm = gymPolicy();
      await imitate(warm, episodes, {
        epochs: config.sft.epochs,
        learningRate: config.sft.learningRate,
        seed: `sft/${seed}`,
      });
      const sampled = await rollout(environment, train, warm, {
        temperature: config.rl.temperature,
        seed: `warm-up-sampled/${seed}`,
        replicas: 4,
      });
      warmup.push({
        hops,
        seed,
        success: mean(await successes(environment, evaluation, warm)),
        sampledTrainSuccess: mean(sampled.map((e) => e.reward)),
      });
      // The probe's Monte-Carlo advantages are the seed's dearest part: only a critic still to run reads them.
      const probe = config.methods.some((m) => ARCO_GYM_CRITICS.includes(m) && toDo(seed, m))
        ? await creditProbe(environment, probeTasks, warm, config, {
            rollouts: `probe/${seed}`,
            truth: `probe-truth/${seed}`,
            reference: `probe-reference/${seed}`,
          })
        : undefined;
      byMethodMs.warmup! += performance.now() - mark;

      for (const method of config.methods) {
        const keptRun = kept.get(`${seed}/${method}`);
        options.onProgress?.({
          type: "run",
          index: ++index,
          total,
          hops,
          seed,
          method,
          ...(keptRun === undefined ? {} : { kept: true as const }),
        });
        if (keptRun !== undefined) {
          runs[method].set(hops, [...(runs[method].get(hops) ?? []), keptRun]);
          byMethodMs[method]! += keptRun.ms;
          continue;
        }
        mark = performance.now();
        let finished: Omit<MethodRun, "ms"> | undefined;
        const policy = gymPolicy({ name: `gym-${method}`, initialWeights: warm.featureWeights() });
        let mu: GymMuCritic | undefined;
        if (ARCO_GYM_MU_METHODS.includes(method))
          mu = await openGymMuCritic(
            client!,
            warmMus.get(muWarmupKey(muWarmupOf(method, config.mu.k)))!,
            join(scratch!, `run-h${hops}-s${seed}-${method}`),
            { coEvolves: ARCO_GYM_CO_EVOLVING_MU_METHODS.includes(method), config },
          );
        try {
          const set = featureSetOf(method);
          const learned =
            set === undefined ? mu?.critic : featureFits.get(set)!.copy({ coEvolves: method !== "featureMu" });
          const { settings, critic, epochRollouts } = methodSetup(
            method,
            config,
            seed,
            environment,
            train,
            policy,
            learned,
          );
          const training: CoEvolutionOptions<GymTask> = {
            environment,
            train,
            evaluation,
            policy,
            settings,
            ...(critic === undefined ? {} : { critic }),
            onEvent: (event) => {
              if (event.type === "batch") options.onProgress?.({ type: "batch", done: event.done, total: event.total });
            },
          };
          const result = await trainCoEvolution(training);
          const curve = result.log.flatMap((line) =>
            line.type === "eval" ? [{ rollouts: line.epoch * epochRollouts, success: line.metrics.reward ?? 0 }] : [],
          );
          // A co-evolved μ's credit is measured as it ended; a frozen one's is the warm-up's. At the
          // end too on π's own rollouts of the same tasks, against the advantage under π as it
          // ended: where RL took π, which a critic's errors can steer it to.
          const credit =
            critic !== undefined && ARCO_GYM_CRITICS.includes(method)
              ? await measureCredit(
                  critic,
                  probe!,
                  await creditProbe(environment, probeTasks, policy, config, {
                    rollouts: `probe-end/${seed}`,
                    truth: `probe-end-truth/${seed}`,
                  }),
                )
              : undefined;
          finished = {
            perTask: await successes(environment, evaluation, policy),
            curve,
            ...(credit === undefined ? {} : { credit }),
          };
        } finally {
          await mu?.close();
        }
        const run: MethodRun = { ...finished, ms: performance.now() - mark };
        runs[method].set(hops, [...(runs[method].get(hops) ?? []), run]);
        if (out !== undefined) await writeGymMethodRun(out, { hops, seed, method }, run);
        byMethodMs[method]! += run.ms;
      }
    }
  }
  return ArcoGymTableSchema.parse(
    tableOf(
      config,
      runs,
      warmup,
      muWarmup,
      featureWarmup,
      { totalMs: performance.now() - started, byMethodMs },
      sidecar,
    ),
  );
}

/** The paired t-test's p over seeds, or null where every seed ties (nothing to test). */
function seedP(ours: readonly number[], theirs: readonly number[]): number | null {
  if (ours.length < 2 || ours.every((x, i) => x === theirs[i])) return null;
  return pairedTTest(ours, theirs).pValue;
}

/** The share of the control's gain over outcome RL a method recovers; null when the control gains nothing. */
function shareOfGain(ours: readonly number[], outcome: readonly number[], control: readonly number[]): number | null {
  const gain = mean(control) - mean(outcome);
  return gain > 1e-9 ? (mean(ours) - mean(outcome)) / gain : null;
}

function versus(ours: readonly number[], theirs: readonly number[], oursFlat: number[], theirsFlat: number[]) {
  const test = mcnemarExact(oursFlat, theirsFlat);
  return {
    gap: mean(ours) - mean(theirs),
    p: seedP(ours, theirs),
    wins: test.b,
    losses: test.c,
    mcnemarP: test.pValue,
  };
}

/** The mean of the defined values, or null when none is. */
function meanOrNull(values: readonly (number | null)[]): number | null {
  const defined = values.filter((v): v is number => v !== null);
  return defined.length === 0 ? null : mean(defined);
}

/** Credit measures of one critic (per H and seed) summarised as table.json keeps them: means, and the steps they cover. */
function creditSummary(measures: readonly Omit<CreditMeasure, "points" | "reference" | "atEnd">[]) {
  return {
    spearman: meanOrNull(measures.map((m) => m.spearman)),
    evidenceAuc: meanOrNull(measures.map((m) => m.evidenceAuc)),
    criterionValidity: meanOrNull(measures.map((m) => m.criterionValidity)),
    steps: measures.reduce((n, m) => n + m.steps, 0),
  };
}

function tableOf(
  config: ArcoGymConfig,
  runs: Record<ArcoGymMethod, Map<number, MethodRun[]>>,
  warmup: ArcoGymTable["warmup"],
  muWarmup: NonNullable<ArcoGymTable["muWarmup"]>,
  featureWarmup: NonNullable<ArcoGymTable["featureWarmup"]>,
  timing: ArcoGymTable["timing"],
  sidecar: ArcoGymTable["sidecar"],
): ArcoGymTable {
  const perSeed = (method: ArcoGymMethod, hops: number) => (runs[method].get(hops) ?? []).map((r) => mean(r.perTask));
  const curveMeans = (method: ArcoGymMethod, hops: number) =>
    (runs[method].get(hops) ?? []).map((r) => mean(r.curve.map((p) => p.success)));
  /** Per seed, over every hop count. */
  const overall = (method: ArcoGymMethod, of: (m: ArcoGymMethod, h: number) => number[]) =>
    config.seeds.map((_, s) => mean(config.hops.map((h) => of(method, h)[s]!)));
  /** Every (hop count, seed, task) outcome, in one order for every method. */
  const flat = (method: ArcoGymMethod, hops?: number) =>
    config.hops
      .filter((h) => hops === undefined || h === hops)
      .flatMap((h) => (runs[method].get(h) ?? []).flatMap((r) => r.perTask));

  const ran = ARCO_GYM_METHODS.filter((method) => config.methods.includes(method));
  const both = ran.includes("outcome") && ran.includes("trueAdvantage");
  const valueOfDenseCredit = (both ? config.hops : []).map((hops) => {
    const outcome = perSeed("outcome", hops);
    const control = perSeed("trueAdvantage", hops);
    const { gap, p, mcnemarP } = versus(control, outcome, flat("trueAdvantage", hops), flat("outcome", hops));
    return {
      hops,
      outcome: summarizeSeeds(outcome),
      trueAdvantage: summarizeSeeds(control),
      gap,
      p,
      mcnemarP,
      curveMean: { outcome: mean(curveMeans("outcome", hops)), trueAdvantage: mean(curveMeans("trueAdvantage", hops)) },
    };
  });
  const methods = Object.fromEntries(
    ran.map((method) => {
      const success = overall(method, perSeed);
      return [
        method,
        {
          success: summarizeSeeds(success),
          byHops: Object.fromEntries(config.hops.map((h) => [String(h), summarizeSeeds(perSeed(method, h))])),
          curveMean: summarizeSeeds(overall(method, curveMeans)),
          ...(method === "outcome" || !ran.includes("outcome")
            ? {}
            : { vsOutcome: versus(success, overall("outcome", perSeed), flat(method), flat("outcome")) }),
          ...(method === "outcome" || method === "trueAdvantage" || !both
            ? {}
            : {
                shareOfControlGain: shareOfGain(
                  success,
                  overall("outcome", perSeed),
                  overall("trueAdvantage", perSeed),
                ),
              }),
        },
      ];
    }),
  );
  const curves = Object.fromEntries(
    ran.map((method) => [
      method,
      Object.fromEntries(config.hops.map((h) => [String(h), (runs[method].get(h) ?? []).map((r) => [...r.curve])])),
    ]),
  );
  return {
    kind: "arco-gym",
    simulation: true,
    config: { ...config, seeds: [...config.seeds], hops: [...config.hops] },
    valueOfDenseCredit,
    methods,
    credit: Object.fromEntries(
      ran
        .filter((method) => ARCO_GYM_CRITICS.includes(method))
        .map((method) => {
          const measures = config.hops.flatMap((h) => (runs[method].get(h) ?? []).flatMap((r) => r.credit ?? []));
          // Every measure carries its probe's reference and its end; should one lack either, no mean is shown as one.
          const references = measures.flatMap((m) => m.reference ?? []);
          const ends = measures.flatMap((m) => m.atEnd ?? []);
          return [
            method,
            {
              ...creditSummary(measures),
              ...(references.length > 0 && references.length === measures.length
                ? {
                    reference: {
                      spearman: meanOrNull(references.map((r) => r.spearman)),
                      evidenceAuc: meanOrNull(references.map((r) => r.evidenceAuc)),
                    },
                  }
                : {}),
              ...(ends.length > 0 && ends.length === measures.length ? { atEnd: creditSummary(ends) } : {}),
            },
          ];
        }),
    ),
    creditPoints: Object.fromEntries(
      ran
        .filter((method) => ARCO_GYM_CRITICS.includes(method))
        .map((method) => [
          method,
          Object.fromEntries(config.hops.map((h) => [String(h), runs[method].get(h)?.[0]?.credit?.points ?? []])),
        ]),
    ),
    curves,
    warmup,
    ...(muWarmup.length === 0 ? {} : { muWarmup }),
    ...(featureWarmup.length === 0 ? {} : { featureWarmup }),
    timing,
    ...(sidecar === undefined ? {} : { sidecar }),
  };
}
