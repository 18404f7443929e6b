import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import {
  approximateTokens,
  createRng,
  definedFields,
  mean,
  ndcgAtK,
  sampleStd,
  wilcoxonSignedRank,
  type FlatRubric,
} from "@rubric/core";
import {
  gymTask,
  loadGdpval,
  simulatedStakeholder,
  simulatedWorker,
  writtenCriterionVerifier,
  type Worker,
} from "@rubric/autointeract";
import {
  gymPrompt,
  gymReward,
  InProcessBackend,
  proxyScores,
  QUESTION_REPERTOIRE,
  RubricPolicy,
  teacherExamples,
  trainGspo,
  trainSftStage,
  type GspoLogEntry,
  type GymPrompt,
  type JudgeNoise,
  type KeepCheckpoints,
  type Objective,
  type PolicyPrompt,
  type TrainingLogEntry,
} from "@rubric/gspo";
import {
  chooseFixedRubric,
  describeFixedCriterion,
  type FixedCriterion,
  type FixedRubricChoice,
  fixedRubric,
  guidedReturns,
  uninformativePrompt,
} from "./controls.js";
import { scalingSvg } from "./plot.js";
import {
  ARCANE_METHODS,
  ARCANE_ROWS,
  ArcaneTableSchema,
  arcaneMarkdown,
  methodLabels,
  PAPER,
  type ArcaneMethod,
  type ArcaneRow,
  type ArcaneTable,
  type MeanStd,
} from "./table.js";

/** Everything an ARCANE reproduction run is configured by; `arcaneConfig` fills the defaults. */
export interface ArcaneConfig {
  readonly quick: boolean;
  readonly seeds: readonly number[];
  readonly sftEpochs: number;
  readonly sftLearningRate: number;
  readonly gspoBatches: number;
  readonly promptsPerBatch: number;
  readonly groupSize: number;
  readonly stepsPerBatch: number;
  readonly learningRate: number;
  readonly objective: Objective;
  readonly epsLow: number;
  readonly epsHigh: number;
  readonly klCoef: number;
  /** λ_clarify per token of a question asked. */
  readonly clarifyCostPerToken: number;
  /** λ_compute per token of the rubric's criteria. */
  readonly computeCostPerToken: number;
  /** The probability that the noisy judge flips a criterion's verdict (the "oracle, noisy judge" row). */
  readonly judgeNoise: number;
  /** Training tasks the best fixed rubric is chosen on (never an eval task). */
  readonly fixedRubricTasks: number;
  /** Other clipping bands [ε_low, ε_high] to train Stage II under, for the sensitivity table ([] = none). */
  readonly epsSweep: readonly (readonly [number, number])[];
  /** Best-of-N sizes evaluated; the candidates of a smaller N are a prefix of the largest's. */
  readonly ns: readonly number[];
  /** Limit the tasks (for demonstrations); default all 175 / 44. */
  readonly trainTasks?: number;
  readonly evalTasks?: number;
}

/** Stage II's objective, the paper's clipping band, the KL to the SFT policy and the gym's costs in tokens: every manager's defaults. */
export const STAGE_II_DEFAULTS = {
  objective: "gspo",
  epsLow: 3e-4,
  epsHigh: 4e-4,
  klCoef: 0.01,
  clarifyCostPerToken: 0.0007,
  computeCostPerToken: 0.0003,
} as const satisfies Partial<ArcaneConfig>;

/**
 * Defaults of a run. Quick (about a minute here): 2 seeds, 6 SFT epochs, 12 GSPO batches of 16
 * tasks. Full: 5 seeds, 12 epochs, 40 batches of 32 tasks. The clipping band is the paper's
 * 3e-4 / 4e-4: after the first step of a batch, most sequences of this small policy fall outside
 * it (their log-probabilities move by percents per step), so each batch is close to one
 * on-policy step; `epsSweep` trains Stage II again under wider bands (3e-3 / 4e-3 and
 * 0.2 / 0.28 by default; the run's own band is never swept twice) for the sensitivity table.
 */
export function arcaneConfig(
  options: { quick?: boolean; seeds?: number } & Partial<Omit<ArcaneConfig, "quick" | "seeds">> = {},
): ArcaneConfig {
  const quick = options.quick ?? false;
  const count = options.seeds ?? (quick ? 2 : 5);
  const { seeds: _, quick: __, ...rest } = options;
  const config: ArcaneConfig = {
    quick,
    seeds: Array.from({ length: count }, (_, i) => i + 1),
    sftEpochs: quick ? 6 : 12,
    sftLearningRate: 0.05,
    gspoBatches: quick ? 12 : 40,
    promptsPerBatch: quick ? 16 : 32,
    groupSize: 8,
    stepsPerBatch: 4,
    learningRate: 0.05,
    ...STAGE_II_DEFAULTS,
    judgeNoise: 0.2,
    fixedRubricTasks: quick ? 16 : 32,
    epsSweep: [
      [3e-3, 4e-3],
      [0.2, 0.28],
    ],
    ns: [1, 2, 4, 8, 16],
    // An option given as undefined (a flag not passed) means the default, not "undefined".
    ...definedFields(rest),
  };
  // The run's own band is the sensitivity table's first row already.
  return {
    ...config,
    epsSweep: config.epsSweep.filter(([low, high]) => low !== config.epsLow || high !== config.epsHigh),
  };
}

export type ArcaneProgress =
  | { readonly phase: "prepare"; readonly seed: number }
  | {
      readonly phase: "sft" | "gspo";
      readonly seed: number;
      readonly done: number;
      readonly total: number;
      readonly entry: TrainingLogEntry;
    }
  | {
      readonly phase: "sft-oracle";
      readonly seed: number;
      readonly done: number;
      readonly total: number;
      readonly entry: TrainingLogEntry;
    }
  | {
      readonly phase: "eps-sweep";
      readonly seed: number;
      readonly done: number;
      readonly total: number;
      readonly entry: TrainingLogEntry;
    }
  | { readonly phase: "fixed-rubric"; readonly seed: number; readonly done: number; readonly total: number }
  | { readonly phase: "evaluate"; readonly seed: number; readonly done: number; readonly total: number };

export interface ArcaneRunOptions {
  readonly gdpvalDir: string;
  readonly config: ArcaneConfig;
  /** Where each seed keeps its training log and checkpoints (`seed-<n>/`); none → nothing written. */
  readonly runDir?: string;
  /** Continue each seed from its latest checkpoint under `runDir`. */
  readonly resume?: boolean;
  /** `"latest"` (default): each stage keeps only its latest checkpoint; `"all"`: every epoch's and batch's. */
  readonly keepCheckpoints?: KeepCheckpoints;
  readonly onProgress?: (event: ArcaneProgress) => void;
  readonly signal?: AbortSignal;
}

/** One eval task's outcome for one seed. */
interface TaskResult {
  readonly taskId: string;
  readonly sector: string;
  /** U* of the selected output, per method and control, per N (aligned with config.ns). */
  readonly returns: Record<ArcaneRow, number[]>;
  readonly ndcg8: { noDialogue: number; sft: number; gspo: number };
  readonly rubrics: {
    sft: FlatRubric;
    gspo: FlatRubric;
    oracle: FlatRubric;
    sftOracle: FlatRubric;
    fixedRubric: FlatRubric;
  };
  readonly questions: { sft: number; gspo: number; sftOracle: number };
  /** U* of the pick per N for the manager trained under each band of `config.epsSweep`. */
  readonly epsReturns: number[][];
}

interface SeedResult {
  readonly seed: number;
  /** Per band of `config.epsSweep`: the mean share of sequences clipped at a batch's last step. */
  readonly epsClipped: readonly number[];
  readonly tasks: TaskResult[];
  readonly fixed: FixedRubricChoice;
  readonly log: TrainingLogEntry[];
  readonly timing: {
    trainingSeconds: number;
    fixedRubricSeconds: number;
    rollouts: number;
    workerMs: number;
    verifierMs: number;
    policyMs: number;
    evaluationSeconds: number;
  };
}

/** A manager trained under another clipping band, and the mean share of its sequences clipped at a batch's last step. */
export interface EpsSweepPolicy {
  readonly epsLow: number;
  readonly epsHigh: number;
  readonly policy: RubricPolicy;
  readonly clippedFraction: number;
}

/** The two managers of one seed, trained in the gym, and how training went. */
export interface TrainedManagers {
  readonly seed: number;
  readonly config: ArcaneConfig;
  /** After Stage I (SFT on the teacher's sequences). */
  readonly sft: RubricPolicy;
  /** After Stage II (GSPO, or the configured objective, from the SFT policy). */
  readonly gspo: RubricPolicy;
  /** Stage II again from the SFT policy under each band of `config.epsSweep`. */
  readonly epsSweep: readonly EpsSweepPolicy[];
  /** A control: Stage I on the stakeholders' own utilities (after the teacher's questions) instead of the teacher's reconstructions. */
  readonly sftOracle: RubricPolicy;
  readonly log: readonly TrainingLogEntry[];
  readonly trainingSeconds: number;
  /** Worker and verifier time spent inside GSPO rewards. */
  readonly rewardMs: { readonly worker: number; readonly verifiers: number };
}

/**
 * Stage I then Stage II of one seed on the gym's training tasks (ARCHITECTURE §4): SFT on the
 * teacher's reconstructions, then GSPO on the stakeholder's true utility with k3 KL to the SFT
 * policy. With a `runDir`, the seed's log and checkpoints go to `<runDir>/seed-<n>/` and
 * `resume` continues from them.
 */
export async function trainArcaneManagers(
  seed: number,
  options: Omit<ArcaneRunOptions, "onProgress"> & {
    readonly gdpval?: Awaited<ReturnType<typeof loadGdpval>>;
    readonly onProgress?: (event: ArcaneProgress) => void;
  },
): Promise<TrainedManagers> {
  const { config } = options;
  const gdpval = options.gdpval ?? (await loadGdpval(options.gdpvalDir));
  options.onProgress?.({ phase: "prepare", seed });
  const train = await Promise.all(
    gdpval.train.slice(0, config.trainTasks).map((e) => gymPrompt(gymTask(e.task), seed, QUESTION_REPERTOIRE)),
  );
  const worker = simulatedWorker();
  const seedDir = options.runDir === undefined ? undefined : join(options.runDir, `seed-${seed}`);
  const run = (stage: string) =>
    seedDir === undefined
      ? undefined
      : {
          dir: join(seedDir, stage),
          resume: options.resume ?? false,
          keepCheckpoints: options.keepCheckpoints ?? ("latest" as const),
        };
  const started = performance.now();

  // Stage I: SFT on the teacher's sequences. Resuming a finished stage loads its last checkpoint
  // and trains nothing, so the SFT policy needs no copy of its own on disk.
  const backend = new InProcessBackend(new RubricPolicy({ seed }), { learningRate: config.learningRate });
  const sftRun = run("sft");
  const log: TrainingLogEntry[] = await trainSftStage({
    backend,
    examples: await teacherExamples(backend.policy, train),
    epochs: config.sftEpochs,
    seed,
    learningRate: config.sftLearningRate,
    run: sftRun,
    onLog: (entry) =>
      options.onProgress?.({
        phase: "sft",
        seed,
        done: (entry.stage === "sft" ? entry.epoch : 0) + 1,
        total: config.sftEpochs,
        entry,
      }),
    signal: options.signal,
  });
  const sftPolicy = backend.policy.clone();

  // The control "SFT on oracle rubrics": the same Stage I from the same initialisation, on U*.
  const oracleBackend = new InProcessBackend(new RubricPolicy({ seed }), { learningRate: config.learningRate });
  await trainSftStage({
    backend: oracleBackend,
    examples: await teacherExamples(oracleBackend.policy, train, { reference: "utility" }),
    epochs: config.sftEpochs,
    seed,
    learningRate: config.sftLearningRate,
    run: run("sft-oracle"),
    onLog: (entry) =>
      options.onProgress?.({
        phase: "sft-oracle",
        seed,
        done: (entry.stage === "sft" ? entry.epoch : 0) + 1,
        total: config.sftEpochs,
        entry,
      }),
    signal: options.signal,
  });

  // Stage II: GSPO from the SFT policy, with k3 KL to it.
  const timings = { worker: 0, verifiers: 0 };
  const stageTwo = async (
    on: InProcessBackend<GymPrompt, RubricPolicy>,
    band: { epsLow: number; epsHigh: number },
    stage: string,
    phase: "gspo" | "eps-sweep",
    spent: { worker: number; verifiers: number },
  ) => {
    await on.setReference();
    await on.resetOptimizer();
    return trainGspo({
      backend: on,
      prompts: train,
      reward: gymReward({
        policy: on.policy,
        worker,
        clarifyCostPerToken: config.clarifyCostPerToken,
        computeCostPerToken: config.computeCostPerToken,
        timings: spent,
      }),
      seed,
      batches: config.gspoBatches,
      promptsPerBatch: config.promptsPerBatch,
      groupSize: config.groupSize,
      stepsPerBatch: config.stepsPerBatch,
      objective: config.objective,
      ...band,
      learningRate: config.learningRate,
      klCoef: config.klCoef,
      run: run(stage),
      onLog: (entry) =>
        options.onProgress?.({
          phase,
          seed,
          done: (entry.stage === "gspo" ? entry.batch : 0) + 1,
          total: config.gspoBatches,
          entry,
        }),
      signal: options.signal,
    });
  };
  const gspoLog = await stageTwo(backend, { epsLow: config.epsLow, epsHigh: config.epsHigh }, "gspo", "gspo", timings);
  // The clipping band's sensitivity: the same Stage II from the same SFT policy under other bands.
  const epsSweep: EpsSweepPolicy[] = [];
  for (const [epsLow, epsHigh] of config.epsSweep) {
    const other = new InProcessBackend(sftPolicy.clone(), { learningRate: config.learningRate });
    // Its reward time stays out of `timings`, which the table sets against the main run's rollouts.
    const sweepLog = await stageTwo(other, { epsLow, epsHigh }, `gspo-eps-${epsLow}-${epsHigh}`, "eps-sweep", {
      worker: 0,
      verifiers: 0,
    });
    epsSweep.push({
      epsLow,
      epsHigh,
      policy: other.policy,
      clippedFraction: mean(sweepLog.map((e) => e.clippedFraction)),
    });
  }
  log.push(...gspoLog);
  return {
    seed,
    config,
    sft: sftPolicy,
    gspo: backend.policy,
    sftOracle: oracleBackend.policy,
    epsSweep,
    log,
    trainingSeconds: (performance.now() - started) / 1000,
    rewardMs: timings,
  };
}

/**
 * The SFT and GSPO managers' rubrics for one task and how many questions each asked. Both are
 * drawn with the same random stream (seeded by the managers' seed and the task), so that they
 * differ only by training — in the gym's evaluation and when deployed with LLM roles alike.
 */
export function managerRubrics(
  managers: Pick<TrainedManagers, "seed" | "sft" | "gspo">,
  prompt: PolicyPrompt,
): Record<"sft" | "gspo", { rubric: FlatRubric; questions: number }> {
  const rng = createRng(managers.seed).fork(`eval-rubric:${prompt.task.id}`);
  const write = (method: "sft" | "gspo") => {
    const policy = managers[method];
    const tokens = policy.sample(prompt, rng.fork("policy"));
    return {
      rubric: policy.toRubric(prompt, tokens, `${prompt.task.id}-${method}`),
      questions: policy.decode(tokens).questions.length,
    };
  };
  return { sft: write("sft"), gspo: write("gspo") };
}

/** What guides the worker on an eval task, and (when it differs from the guide) what selects among its outputs. */
export interface EvalRubric {
  readonly guide: FlatRubric;
  readonly judge?: JudgeNoise;
}

/**
 * Every row's rubric for one eval task: the trained managers' (as `managerRubrics` writes them),
 * the oracle, and the controls — the GSPO policy asking nothing and hearing only
 * `UNINFORMATIVE_REPLY`, the fixed rubric, SFT on oracle rubrics, the oracle under a noisy
 * judge — plus the SFT policy's no-dialogue rubric that NDCG@8 reads. Each sample has its own
 * stream, seeded by the managers' seed and the task. The controls that claim not to hear the
 * stakeholder read nothing of its replies.
 */
export function evalRubrics(
  managers: Pick<TrainedManagers, "seed" | "sft" | "gspo" | "sftOracle">,
  prompt: GymPrompt,
  fixed: readonly FixedCriterion[],
  config: Pick<ArcaneConfig, "judgeNoise">,
): {
  rows: Record<Exclude<ArcaneRow, "noRubric">, EvalRubric>;
  written: ReturnType<typeof managerRubrics>;
  sftOracle: { rubric: FlatRubric; questions: number };
  noDialogue: FlatRubric;
} {
  const task = prompt.task;
  const written = managerRubrics(managers, prompt);
  const rng = createRng(managers.seed).fork(`eval-rubric:${task.id}`);
  const sample = (policy: RubricPolicy, from: PolicyPrompt, fork: string, forced?: { questions: number[] }) => {
    const tokens = policy.sample(from, rng.fork(fork), 1, forced ?? {});
    return {
      rubric: policy.toRubric(from, tokens, `${task.id}-${fork}`),
      questions: policy.decode(tokens).questions.length,
    };
  };
  const sftOracle = sample(managers.sftOracle, prompt, "sft-oracle");
  const oracle = simulatedStakeholder(task, prompt.stakeholderSeed).utility;
  const rows = {
    sft: { guide: written.sft.rubric },
    gspo: { guide: written.gspo.rubric },
    oracle: { guide: oracle },
    gspoNoQuestions: { guide: sample(managers.gspo, prompt, "no-questions", { questions: [] }).rubric },
    gspoUninformative: { guide: sample(managers.gspo, uninformativePrompt(prompt), "uninformative").rubric },
    fixedRubric: { guide: fixedRubric(fixed, prompt) },
    sftOracle: { guide: sftOracle.rubric },
    oracleNoisy: {
      guide: oracle,
      judge: { noise: config.judgeNoise, rng: createRng(managers.seed).fork(`noisy-judge:${task.id}`) },
    },
  };
  const noDialogue = sample(managers.sft, prompt, "no-dialogue", { questions: [] }).rubric;
  return { rows, written, sftOracle, noDialogue };
}

async function runSeed(
  seed: number,
  gdpval: Awaited<ReturnType<typeof loadGdpval>>,
  options: ArcaneRunOptions,
): Promise<SeedResult> {
  const { config } = options;
  const managers = await trainArcaneManagers(seed, { ...options, gdpval });
  const { log, trainingSeconds } = managers;
  const gspoLog = log.filter((e): e is GspoLogEntry => e.stage === "gspo");
  const worker = simulatedWorker();

  // The best fixed rubric, chosen on training tasks only (the last ones, away from the first
  // that demonstrations train on), at the N the table's headline reads.
  const fixedStarted = performance.now();
  const choicePrompts = await Promise.all(
    gdpval.train.slice(-config.fixedRubricTasks).map((e) => gymPrompt(gymTask(e.task), seed, QUESTION_REPERTOIRE)),
  );
  const fixed = await chooseFixedRubric(choicePrompts, worker, {
    n: 8,
    seed,
    onStep: (done, total) => options.onProgress?.({ phase: "fixed-rubric", seed, done, total }),
  });
  const fixedSeconds = (performance.now() - fixedStarted) / 1000;

  const evaluation = await Promise.all(
    gdpval.eval.slice(0, config.evalTasks).map((e) => gymPrompt(gymTask(e.task), seed, QUESTION_REPERTOIRE)),
  );

  // Evaluation on the held-out tasks: each row's rubric guides the worker and selects among
  // its N outputs; the return is U* of the pick. The candidates of N are the first N of 16.
  const evalStarted = performance.now();
  const maxN = Math.max(...config.ns);
  const tasks: TaskResult[] = [];
  for (const [i, prompt] of evaluation.entries()) {
    const task = prompt.task;
    const { rows, written, sftOracle, noDialogue } = evalRubrics(managers, prompt, fixed.criteria, config);
    const oracle = rows.oracle.guide;
    const outputSeed = seed * 100_003 + i;
    const returns = {} as Record<ArcaneRow, number[]>;
    const unguided = (await produce(worker, prompt, undefined, maxN, outputSeed)).map((o) => o.text);
    const unguidedUtility = await proxyScores(oracle, prompt, unguided);
    // No Rubric picks one of the worker's N unguided outputs at random.
    returns.noRubric = config.ns.map((n) => unguidedUtility[createRng(seed).fork(`pick:${task.id}:${n}`).int(n)]!);
    for (const [row, { guide, judge }] of Object.entries(rows) as [
      keyof typeof rows,
      (typeof rows)[keyof typeof rows],
    ][])
      returns[row] = await guidedReturns(prompt, guide, worker, config.ns, outputSeed, judge);
    const epsReturns: number[][] = [];
    for (const sweep of managers.epsSweep) {
      const rng = createRng(seed).fork(`eval-rubric:${task.id}`).fork(`eps:${sweep.epsLow}/${sweep.epsHigh}`);
      const guide = sweep.policy.toRubric(prompt, sweep.policy.sample(prompt, rng), `${task.id}-eps`);
      epsReturns.push(await guidedReturns(prompt, guide, worker, config.ns, outputSeed));
    }
    // NDCG@8: how each rubric ranks 8 unguided candidates against U*.
    const pool = unguided.slice(0, 8);
    const poolUtility = unguidedUtility.slice(0, 8);
    const ndcg = async (rubric: FlatRubric) => ndcgAtK(await proxyScores(rubric, prompt, pool), poolUtility, 8);
    tasks.push({
      taskId: task.id,
      sector: task.sector,
      returns,
      ndcg8: { noDialogue: await ndcg(noDialogue), sft: await ndcg(rows.sft.guide), gspo: await ndcg(rows.gspo.guide) },
      rubrics: {
        sft: rows.sft.guide,
        gspo: rows.gspo.guide,
        oracle,
        sftOracle: sftOracle.rubric,
        fixedRubric: rows.fixedRubric.guide,
      },
      questions: { sft: written.sft.questions, gspo: written.gspo.questions, sftOracle: sftOracle.questions },
      epsReturns,
    });
    options.onProgress?.({ phase: "evaluate", seed, done: i + 1, total: evaluation.length });
  }
  return {
    seed,
    epsClipped: managers.epsSweep.map((e) => e.clippedFraction),
    tasks,
    fixed,
    log: [...log],
    timing: {
      trainingSeconds,
      fixedRubricSeconds: fixedSeconds,
      rollouts: gspoLog.reduce((n, e) => n + e.rollouts, 0),
      workerMs: managers.rewardMs.worker,
      verifierMs: managers.rewardMs.verifiers,
      policyMs: gspoLog.reduce((n, e) => n + e.policySeconds * 1000, 0),
      evaluationSeconds: (performance.now() - evalStarted) / 1000,
    },
  };
}

function produce(worker: Worker, prompt: GymPrompt, rubric: FlatRubric | undefined, n: number, seed: number) {
  return worker.produce(prompt.task, rubric, n, { seed });
}

function meanStd(values: readonly number[]): MeanStd {
  // Sample standard deviation over seeds; one seed has none to report.
  return { mean: mean(values), std: values.length > 1 ? sampleStd(values) : 0 };
}

/** Least-squares slope of mean return against log2 N: the gain per doubling of N. */
function slopePerDoubling(ns: readonly number[], values: readonly number[]): number {
  const x = ns.map((n) => Math.log2(n));
  const mx = mean(x);
  const my = mean(values);
  const sxx = x.reduce((s, v) => s + (v - mx) ** 2, 0);
  return x.reduce((s, v, i) => s + (v - mx) * (values[i]! - my), 0) / sxx;
}

/**
 * The ARCANE reproduction in the rubric gym: for each seed, a world of simulated stakeholders,
 * SFT of the in-process manager on the teacher's sequences over the 175 training tasks, GSPO on
 * the stakeholders' true utility, then best-of-N on the 44 eval tasks for no rubric, SFT, GSPO
 * and the oracle rubric, NDCG@8 of each rubric's ranking, and a Wilcoxon test of GSPO vs SFT.
 * A simulation: its numbers are the gym's, measured, beside the paper's.
 */
export async function runArcane(options: ArcaneRunOptions): Promise<ArcaneTable> {
  const { config } = options;
  const started = performance.now();
  const gdpval = await loadGdpval(options.gdpvalDir);
  const results: SeedResult[] = [];
  for (const seed of config.seeds) results.push(await runSeed(seed, gdpval, options));
  return summarize(results, config, (performance.now() - started) / 1000);
}

function summarize(results: readonly SeedResult[], config: ArcaneConfig, seconds: number): ArcaneTable {
  const n1 = config.ns.indexOf(1);
  const n8 = config.ns.indexOf(8);
  const perSeed = (f: (t: TaskResult) => number) => results.map((r) => mean(r.tasks.map(f)));
  const methodReturn = (method: ArcaneRow, at: number) => meanStd(perSeed((t) => t.returns[method][at]!));
  const meanReturn = Object.fromEntries(
    ARCANE_ROWS.map((m) => [m, { n1: methodReturn(m, n1), n8: methodReturn(m, n8) }]),
  ) as ArcaneTable["meanReturn"];
  const curves = Object.fromEntries(
    ARCANE_ROWS.map((m) => [m, config.ns.map((_, k) => methodReturn(m, k))]),
  ) as ArcaneTable["scaling"]["curves"];
  const slopes = Object.fromEntries(
    ARCANE_ROWS.map((m) => [
      m,
      slopePerDoubling(
        config.ns,
        curves[m].map((c) => c.mean),
      ),
    ]),
  ) as ArcaneTable["scaling"]["slopePerDoubling"];
  // Per task at N = 8, averaged over seeds: the paired samples of the Wilcoxon test.
  const taskIds = results[0]!.tasks.map((t) => t.taskId);
  const perTask = (method: ArcaneRow) =>
    taskIds.map((_, i) => mean(results.map((r) => r.tasks[i]!.returns[method][n8]!)));
  // Identical returns on every task (a run with no GSPO batches) leave a test undefined; the
  // table says so rather than the whole run failing after its training.
  const gspoTasks = perTask("gspo");
  const against = (other: ArcaneRow) => {
    const otherTasks = perTask(other);
    const result = gspoTasks.some((g, i) => g !== otherTasks[i])
      ? wilcoxonSignedRank(gspoTasks, otherTasks)
      : { statistic: null, pValue: null, n: 0, method: "none" as const };
    return { ...result, meanDifference: mean(gspoTasks) - mean(otherTasks) };
  };
  const test = against("sft");
  const controls = {
    gspoNoQuestions: against("gspoNoQuestions"),
    gspoUninformative: against("gspoUninformative"),
    fixedRubric: against("fixedRubric"),
    sftOracle: against("sftOracle"),
  };
  const pText = test.pValue === null ? "not defined: no task differs" : test.pValue.toPrecision(2);
  const voiAt = (at: "n1" | "n8") => ({
    noDialogue: meanReturn.fixedRubric[at].mean,
    fullPreferences: meanReturn.oracle[at].mean,
    gap: meanReturn.oracle[at].mean - meanReturn.fixedRubric[at].mean,
  });
  const stats = (pick: (t: TaskResult) => FlatRubric, questions?: (t: TaskResult) => number) => {
    const all = results.flatMap((r) => r.tasks);
    const criteria = all.flatMap((t) => pick(t).criteria);
    // Each criterion read back from its text alone, as a verifier author's parser would.
    const read = criteria.map((c) => writtenCriterionVerifier(c.text));
    const written = all.flatMap((t) => {
      const held = new Set(t.rubrics.oracle.criteria.map((c) => c.text));
      return pick(t)
        .criteria.filter((c) => {
          const r = writtenCriterionVerifier(c.text);
          return !(r.kind === "rule" && r.template.startsWith("bank:"));
        })
        .map((c) => held.has(c.text));
    });
    return {
      criteriaPerRubric: mean(all.map((t) => pick(t).criteria.length)),
      tokensPerCriterion: criteria.length > 0 ? mean(criteria.map((c) => approximateTokens(c.text))) : 0,
      readAsRule: criteria.length > 0 ? read.filter((r) => r.kind === "rule").length / criteria.length : 0,
      writtenPerRubric: written.length / all.length,
      writtenHeld: written.length > 0 ? written.filter(Boolean).length / written.length : null,
      ...(questions ? { questionsAsked: mean(all.map(questions)) } : {}),
    };
  };
  const gspoStats = stats(
    (t) => t.rubrics.gspo,
    (t) => t.questions.gspo,
  );
  const sectors = [...new Set(results[0]!.tasks.map((t) => t.sector))].sort();
  const perSector = sectors.map((sector) => {
    const rows = results.flatMap((r) => r.tasks.filter((t) => t.sector === sector));
    return {
      sector,
      tasks: rows.length / results.length,
      ...(Object.fromEntries(ARCANE_METHODS.map((m) => [m, mean(rows.map((t) => t.returns[m][n8]!))])) as Record<
        ArcaneMethod,
        number
      >),
    };
  });
  const timing = results.map((r) => r.timing);
  const rewardMs = timing.reduce((s, t) => s + t.workerMs + t.verifierMs, 0);
  const policyMs = timing.reduce((s, t) => s + t.policyMs, 0);
  const gspo = results.map((r) => r.log.filter((e) => e.stage === "gspo"));
  const sft = results.map((r) => r.log.filter((e) => e.stage === "sft"));
  const gspoWins = meanReturn.gspo.n8.mean > meanReturn.sft.n8.mean;
  const trained = methodLabels({ config: { objective: config.objective } }).gspo;
  return {
    kind: "arcane-gym",
    simulation:
      "These numbers come from the rubric gym — simulated stakeholders, a simulated worker and a log-linear manager trained on this machine — not from the paper's LLMs; the paper's column is for orientation only.",
    config: { ...config, seeds: [...config.seeds], ns: [...config.ns] },
    tasks: { train: config.trainTasks ?? 175, eval: taskIds.length },
    meanReturn,
    scaling: { ns: [...config.ns], curves, slopePerDoubling: slopes },
    ndcg8: {
      noDialogue: meanStd(perSeed((t) => t.ndcg8.noDialogue)),
      sft: meanStd(perSeed((t) => t.ndcg8.sft)),
      gspo: meanStd(perSeed((t) => t.ndcg8.gspo)),
    },
    valueOfInformation: { n1: voiAt("n1"), n8: voiAt("n8") },
    epsSensitivity: [
      {
        epsLow: config.epsLow,
        epsHigh: config.epsHigh,
        clippedFraction: mean(gspo.flat().map((e) => (e as { clippedFraction: number }).clippedFraction)),
        n1: meanReturn.gspo.n1,
        n8: meanReturn.gspo.n8,
      },
      ...config.epsSweep.map(([epsLow, epsHigh], b) => ({
        epsLow,
        epsHigh,
        clippedFraction: mean(results.map((r) => r.epsClipped[b]!)),
        n1: meanStd(perSeed((t) => t.epsReturns[b]![n1]!)),
        n8: meanStd(perSeed((t) => t.epsReturns[b]![n8]!)),
      })),
    ],
    fixedRubrics: results.map((r) => ({
      seed: r.seed,
      criteria: r.fixed.criteria.map(describeFixedCriterion),
      trainReturns: [...r.fixed.trainReturns],
    })),
    wilcoxon: { gspoVsSft: test, gspoVsControls: controls },
    rubricStats: {
      sft: stats(
        (t) => t.rubrics.sft,
        (t) => t.questions.sft,
      ),
      gspo: gspoStats,
      oracle: stats((t) => t.rubrics.oracle),
      sftOracle: stats(
        (t) => t.rubrics.sftOracle,
        (t) => t.questions.sftOracle,
      ),
      fixedRubric: stats((t) => t.rubrics.fixedRubric),
    },
    perSector,
    training: results.map((r, i) => ({
      seed: r.seed,
      sftLoss:
        sft[i]!.length > 0
          ? { first: (sft[i]![0] as { loss: number }).loss, last: (sft[i]!.at(-1) as { loss: number }).loss }
          : null,
      gspoReward:
        gspo[i]!.length > 0
          ? {
              first: (gspo[i]![0] as { meanReward: number }).meanReward,
              last: (gspo[i]!.at(-1) as { meanReward: number }).meanReward,
            }
          : null,
    })),
    timing: {
      seconds,
      fixedRubricSeconds: timing.reduce((s, t) => s + t.fixedRubricSeconds, 0),
      trainingRollouts: timing.reduce((s, t) => s + t.rollouts, 0),
      rolloutsPerSecond: timing.reduce((s, t) => s + t.rollouts, 0) / ((rewardMs + policyMs) / 1000),
      verifierShare: timing.reduce((s, t) => s + t.verifierMs, 0) / (rewardMs + policyMs),
      workerShare: timing.reduce((s, t) => s + t.workerMs, 0) / (rewardMs + policyMs),
      policyShare: policyMs / (rewardMs + policyMs),
    },
    paper: PAPER,
    notes: [
      gspoWins
        ? `${trained} beats SFT at N=8 by ${(meanReturn.gspo.n8.mean - meanReturn.sft.n8.mean).toFixed(3)} (Wilcoxon p = ${pText} over ${taskIds.length} tasks).`
        : `${trained} does not beat SFT at N=8 here (${meanReturn.gspo.n8.mean.toFixed(3)} vs ${meanReturn.sft.n8.mean.toFixed(3)}, Wilcoxon p = ${pText}).`,
      `Clipping band ε = ${config.epsLow} / ${config.epsHigh}${config.epsLow === 3e-4 && config.epsHigh === 4e-4 ? " (the paper's)" : " (the paper's is 3e-4 / 4e-4)"}; ${(100 * mean(gspo.flat().map((e) => (e as { clippedFraction: number }).clippedFraction))).toFixed(0)}% of sequences were clipped at the last step of a batch, on average.`,
      dialogueNote(controls, trained),
      `Value of information: the oracle rubric's U* at N=8 is ${f3(voiAt("n8").fullPreferences)}, the best fixed rubric's (chosen on ${config.fixedRubricTasks} training tasks, no dialogue) ${f3(voiAt("n8").noDialogue)}: a gap of ${f3(voiAt("n8").gap)} that only asking can close.`,
      `The noisy-judge oracle flips each criterion's verdict with probability ${config.judgeNoise} when selecting (the worker still reads the exact rubric): ${f3(meanReturn.oracleNoisy.n8.mean)} at N=8 against ${f3(meanReturn.oracle.n8.mean)} with U* itself as the judge.`,
      "No Rubric picks one of the worker's N unguided outputs at random, so its return does not grow with N.",
      `The manager writes its criteria: the bank's 41 phrases, or a template whose slot copies a term of the task or the replies ('Addresses "<term>" from the brief'); each criterion's verifier is what \`writtenCriterionVerifier\` reads in its text. GSPO's rubrics hold ${gspoStats.writtenPerRubric.toFixed(2)} written criteria each, ${gspoStats.writtenHeld === null ? "none" : `${(100 * gspoStats.writtenHeld).toFixed(0)}%`} of them held by U*.`,
      `Costs are counted in tokens: λ_clarify = ${config.clarifyCostPerToken} per question token, λ_compute = ${config.computeCostPerToken} per criterion token.`,
      "The SFT targets are the gym's default policy manager's rubrics — a teacher's imperfect reconstruction of what the stakeholder said, not the oracle.",
    ],
  };
}

const f3 = (x: number) => x.toFixed(3);

/** The dialogue's measured share: the trained manager against asking nothing and hearing nothing useful. */
function dialogueNote(
  controls: Record<"gspoNoQuestions" | "gspoUninformative", { meanDifference: number; pValue: number | null }>,
  trained: string,
): string {
  const part = (c: { meanDifference: number; pValue: number | null }, what: string) =>
    `${c.meanDifference >= 0 ? "+" : ""}${f3(c.meanDifference)} over ${what} (Wilcoxon p = ${c.pValue === null ? "not defined" : c.pValue.toPrecision(2)})`;
  return `Does the dialogue help? ${trained} scores ${part(controls.gspoNoQuestions, "the same policy asking no questions")} and ${part(controls.gspoUninformative, "the same policy hearing only uninformative replies")} at N=8.`;
}

/** Writes `table.json` (validated against its schema), `table.md` and `scaling.svg` into `dir`; returns their paths. */
export async function writeArcaneOutputs(
  table: ArcaneTable,
  dir: string,
): Promise<{ json: string; markdown: string; svg: string }> {
  await mkdir(dir, { recursive: true });
  const paths = { json: join(dir, "table.json"), markdown: join(dir, "table.md"), svg: join(dir, "scaling.svg") };
  await writeFile(paths.json, `${JSON.stringify(ArcaneTableSchema.parse(table), null, 2)}\n`);
  await writeFile(paths.markdown, arcaneMarkdown(table));
  await writeFile(paths.svg, await scalingSvg(table));
  return paths;
}
