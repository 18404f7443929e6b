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
import { gymTask, loadGdpval, simulatedStakeholder, simulatedWorker, type Worker } from "@rubric/autointeract";
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
  type KeepCheckpoints,
  type Objective,
  type PolicyPrompt,
  type TrainingLogEntry,
} from "@rubric/gspo";
import { scalingSvg } from "./plot.js";
import {
  ARCANE_METHODS,
  ArcaneTableSchema,
  arcaneMarkdown,
  methodLabels,
  PAPER,
  type ArcaneMethod,
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
  readonly clarifyCost: number;
  readonly computeCost: number;
  /** Best-of-N sizes evaluated; the candidates of a smaller N are a prefix of the largest's. */
  readonly ns: readonly number[];
  /** Limit the tasks (for demonstrations); default all 175 / 44. */
  readonly trainTasks?: number;
  readonly evalTasks?: number;
}

/**
 * Defaults of a run. Quick (under a minute here): 2 seeds, 6 SFT epochs, 12 GSPO batches of 16
 * tasks. Full: 5 seeds, 12 epochs, 40 batches of 32 tasks. The clipping band is the paper's
 * 3e-4 / 4e-4: after the first step of a batch, most sequences of this small policy fall outside
 * it (their log-probabilities move by percents per step), so each batch is close to one
 * on-policy step; a wider band (e.g. 0.2 / 0.28) lets the later steps count — the README
 * reports both, measured.
 */
export function arcaneConfig(
  options: { quick?: boolean; seeds?: number } & Partial<Omit<ArcaneConfig, "quick" | "seeds">> = {},
): ArcaneConfig {
  const quick = options.quick ?? false;
  const count = options.seeds ?? (quick ? 2 : 5);
  const { seeds: _, quick: __, ...rest } = options;
  return {
    quick,
    seeds: Array.from({ length: count }, (_, i) => i + 1),
    sftEpochs: quick ? 6 : 12,
    sftLearningRate: 0.05,
    gspoBatches: quick ? 12 : 40,
    promptsPerBatch: quick ? 16 : 32,
    groupSize: 8,
    stepsPerBatch: 4,
    learningRate: 0.05,
    objective: "gspo",
    epsLow: 3e-4,
    epsHigh: 4e-4,
    klCoef: 0.01,
    clarifyCost: 0.01,
    computeCost: 0.002,
    ns: [1, 2, 4, 8, 16],
    // An option given as undefined (a flag not passed) means the default, not "undefined".
    ...definedFields(rest),
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
  /** U* of the selected output, per method, per N (aligned with config.ns). */
  readonly returns: Record<ArcaneMethod, number[]>;
  readonly ndcg8: { noDialogue: number; sft: number; gspo: number };
  readonly rubrics: { sft: FlatRubric; gspo: FlatRubric; oracle: FlatRubric };
  readonly questions: { sft: number; gspo: number };
}

interface SeedResult {
  readonly seed: number;
  readonly tasks: TaskResult[];
  readonly log: TrainingLogEntry[];
  readonly timing: {
    trainingSeconds: number;
    rollouts: number;
    workerMs: number;
    verifierMs: number;
    policyMs: number;
    evaluationSeconds: number;
  };
}

/** Index of the highest score among the first n (ties → the first). */
function argmaxPrefix(scores: readonly number[], n: number): number {
  let best = 0;
  for (let i = 1; i < n; i++) if (scores[i]! > scores[best]!) best = i;
  return best;
}

/** The two managers of one seed, trained in the gym, and how training went. */
export interface TrainedManagers {
  readonly seed: number;
  readonly config: ArcaneConfig;
  /** After Stage I (SFT on the teacher's sequences). */
  readonly sft: RubricPolicy;
  /** After Stage II (GSPO, or the configured objective, from the SFT policy). */
  readonly gspo: RubricPolicy;
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

  // Stage II: GSPO from the SFT policy, with k3 KL to it.
  await backend.setReference();
  await backend.resetOptimizer();
  const timings = { worker: 0, verifiers: 0 };
  const gspoRun = run("gspo");
  const gspoLog = await trainGspo({
    backend,
    prompts: train,
    reward: gymReward({
      policy: backend.policy,
      worker,
      clarifyCost: config.clarifyCost,
      computeCost: config.computeCost,
      timings,
    }),
    seed,
    batches: config.gspoBatches,
    promptsPerBatch: config.promptsPerBatch,
    groupSize: config.groupSize,
    stepsPerBatch: config.stepsPerBatch,
    objective: config.objective,
    epsLow: config.epsLow,
    epsHigh: config.epsHigh,
    learningRate: config.learningRate,
    klCoef: config.klCoef,
    run: gspoRun,
    onLog: (entry) =>
      options.onProgress?.({
        phase: "gspo",
        seed,
        done: (entry.stage === "gspo" ? entry.batch : 0) + 1,
        total: config.gspoBatches,
        entry,
      }),
    signal: options.signal,
  });
  log.push(...gspoLog);
  return {
    seed,
    config,
    sft: sftPolicy,
    gspo: backend.policy,
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
      rubric: policy.toRubric(tokens, `${prompt.task.id}-${method}`),
      questions: policy.decode(tokens).questions.length,
    };
  };
  return { sft: write("sft"), gspo: write("gspo") };
}

async function runSeed(
  seed: number,
  gdpval: Awaited<ReturnType<typeof loadGdpval>>,
  options: ArcaneRunOptions,
): Promise<SeedResult> {
  const { config } = options;
  const managers = await trainArcaneManagers(seed, { ...options, gdpval });
  const { sft: sftPolicy, log, trainingSeconds } = managers;
  const gspoLog = log.filter((e): e is GspoLogEntry => e.stage === "gspo");
  const worker = simulatedWorker();
  const evaluation = await Promise.all(
    gdpval.eval.slice(0, config.evalTasks).map((e) => gymPrompt(gymTask(e.task), seed, QUESTION_REPERTOIRE)),
  );

  // Evaluation on the held-out tasks: each method's rubric guides the worker and selects among
  // its N outputs; the return is U* of the pick. The candidates of N are the first N of 16.
  const evalStarted = performance.now();
  const maxN = Math.max(...config.ns);
  const tasks: TaskResult[] = [];
  for (const [i, prompt] of evaluation.entries()) {
    const task = prompt.task;
    const written = managerRubrics(managers, prompt);
    const rubrics = {
      sft: written.sft.rubric,
      gspo: written.gspo.rubric,
      oracle: simulatedStakeholder(task, seed).utility,
    };
    const noDialogue = sftPolicy.toRubric(
      sftPolicy.sample(prompt, createRng(seed).fork(`eval-rubric:${task.id}`).fork("no-dialogue"), 1, {
        questions: [],
      }),
      `${task.id}-no-dialogue`,
    );
    const outputSeed = seed * 100_003 + i;
    const returns = {} as Record<ArcaneMethod, number[]>;
    let pool: string[] = [];
    let poolUtility: number[] = [];
    for (const method of ARCANE_METHODS) {
      const guide = method === "noRubric" ? undefined : rubrics[method];
      const outputs = (await produce(worker, prompt, guide, maxN, outputSeed)).map((o) => o.text);
      const utility = await proxyScores(rubrics.oracle, prompt, outputs);
      if (method === "noRubric") {
        pool = outputs.slice(0, 8);
        poolUtility = utility.slice(0, 8);
        returns.noRubric = config.ns.map((n) => utility[createRng(seed).fork(`pick:${task.id}:${n}`).int(n)]!);
      } else {
        const proxy = await proxyScores(guide!, prompt, outputs);
        returns[method] = config.ns.map((n) => utility[argmaxPrefix(proxy, n)]!);
      }
    }
    // NDCG@8: how each rubric ranks 8 unguided candidates against U*.
    const ndcg = async (rubric: FlatRubric) => ndcgAtK(await proxyScores(rubric, prompt, pool), poolUtility, 8);
    tasks.push({
      taskId: task.id,
      sector: task.sector,
      returns,
      ndcg8: { noDialogue: await ndcg(noDialogue), sft: await ndcg(rubrics.sft), gspo: await ndcg(rubrics.gspo) },
      rubrics,
      questions: { sft: written.sft.questions, gspo: written.gspo.questions },
    });
    options.onProgress?.({ phase: "evaluate", seed, done: i + 1, total: evaluation.length });
  }
  return {
    seed,
    tasks,
    log: [...log],
    timing: {
      trainingSeconds,
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
  const methodReturn = (method: ArcaneMethod, at: number) => meanStd(perSeed((t) => t.returns[method][at]!));
  const meanReturn = Object.fromEntries(
    ARCANE_METHODS.map((m) => [m, { n1: methodReturn(m, n1), n8: methodReturn(m, n8) }]),
  ) as ArcaneTable["meanReturn"];
  const curves = Object.fromEntries(
    ARCANE_METHODS.map((m) => [m, config.ns.map((_, k) => methodReturn(m, k))]),
  ) as ArcaneTable["scaling"]["curves"];
  const slopes = Object.fromEntries(
    ARCANE_METHODS.map((m) => [
      m,
      slopePerDoubling(
        config.ns,
        curves[m].map((c) => c.mean),
      ),
    ]),
  ) as ArcaneTable["scaling"]["slopePerDoubling"];
  // Per task at N = 8, averaged over seeds: the paired samples of the Wilcoxon test.
  const taskIds = results[0]!.tasks.map((t) => t.taskId);
  const perTask = (method: ArcaneMethod) =>
    taskIds.map((_, i) => mean(results.map((r) => r.tasks[i]!.returns[method][n8]!)));
  // Identical returns on every task (a run with no GSPO batches) leave the test undefined; the
  // table says so rather than the whole run failing after its training.
  const gspoTasks = perTask("gspo");
  const sftTasks = perTask("sft");
  const test = gspoTasks.some((g, i) => g !== sftTasks[i])
    ? wilcoxonSignedRank(gspoTasks, sftTasks)
    : { statistic: null, pValue: null, n: 0, method: "none" as const };
  const pText = test.pValue === null ? "not defined: no task differs" : test.pValue.toPrecision(2);
  const stats = (pick: (t: TaskResult) => FlatRubric, questions?: (t: TaskResult) => number) => {
    const all = results.flatMap((r) => r.tasks);
    const criteria = all.flatMap((t) => pick(t).criteria);
    return {
      criteriaPerRubric: mean(all.map((t) => pick(t).criteria.length)),
      tokensPerCriterion: criteria.length > 0 ? mean(criteria.map((c) => approximateTokens(c.text))) : 0,
      ...(questions ? { questionsAsked: mean(all.map(questions)) } : {}),
    };
  };
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
    wilcoxon: {
      gspoVsSft: {
        statistic: test.statistic,
        pValue: test.pValue,
        n: test.n,
        method: test.method,
        meanDifference: mean(perTask("gspo")) - mean(perTask("sft")),
      },
    },
    rubricStats: {
      sft: stats(
        (t) => t.rubrics.sft,
        (t) => t.questions.sft,
      ),
      gspo: stats(
        (t) => t.rubrics.gspo,
        (t) => t.questions.gspo,
      ),
      oracle: stats((t) => t.rubrics.oracle),
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
      "No Rubric picks one of the worker's N unguided outputs at random, so its return does not grow with N.",
      "The SFT targets are the gym's default policy manager's rubrics — a teacher's imperfect reconstruction of what the stakeholder said, not the oracle.",
    ],
  };
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
  await writeFile(paths.svg, scalingSvg(table));
  return paths;
}
