import { performance } from "node:perf_hooks";
import { createRng, ndcgAtK, type FlatRubric } from "@rubric/core";
import { gymTask, simulatedStakeholder, simulatedWorker, type GdpvalDataset, type Worker } from "@rubric/autointeract";
import {
  gymPrompt,
  proxyScores,
  QUESTION_REPERTOIRE,
  type GspoLogEntry,
  type GymPrompt,
  type JudgeNoise,
  type PolicyPrompt,
  type RubricPolicy,
  type TrainingLogEntry,
} from "@rubric/gspo";
import type { ArcaneConfig, ArcaneRunOptions } from "./config.js";
import {
  chooseFixedRubric,
  type FixedCriterion,
  type FixedRubricChoice,
  fixedRubric,
  guidedReturns,
  uninformativePrompt,
} from "./controls.js";
import type { ArcaneRow } from "./table.js";
import type { TrainedManagers } from "./training.js";

/** One eval task's outcome for one seed. */
export interface TaskResult {
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

export interface SeedResult {
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

/**
 * One seed's trained managers and controls on the eval tasks: the fixed rubric is chosen first,
 * then each row's rubric guides the worker and selects among its outputs.
 */
export async function evaluateSeed(
  managers: TrainedManagers,
  gdpval: GdpvalDataset,
  options: Pick<ArcaneRunOptions, "config" | "onProgress">,
): Promise<SeedResult> {
  const { config } = options;
  const { seed, log, trainingSeconds } = managers;
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
