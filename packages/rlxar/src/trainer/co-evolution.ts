import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { createRng, formatZodIssues, shuffle } from "@rubric/core";
import { RUN_CHECKPOINTS_DIR, RUN_LATEST_FILE, type RunDirectory, RunFileError, TrainingRun } from "@rubric/core/runs";
import { z } from "zod";
import { RlxarInputError } from "../errors.js";
import type { Environment } from "../environment/environment.js";
import { type Episode, type RolloutTiming, rollout } from "../rollout/rollout.js";
import type { CriticUpdate, StepCritic, StepRating } from "../critic/step-critic.js";
import type { Policy, PolicySample, PolicyUpdateMetrics, TrainablePolicy } from "../policy/policy.js";
import { denseAdvantages, sparseAdvantages } from "./advantages.js";
import { type TrainerSettings, type TrainerSettingsInput, TrainerSettingsSchema } from "./settings.js";

/** Which update a batch took: ARCO's sparse (group-relative outcome) or dense (μ's step scores). */
export type Phase = "sparse" | "dense";

/** Where one batch's time went, in milliseconds. */
export interface BatchTiming {
  readonly environment: number;
  readonly policy: number;
  readonly muInference: number;
  readonly policyUpdate: number;
  readonly muTraining: number;
  readonly exportReload: number;
}

/** One line of the trainer's JSONL log: a batch, or an evaluation at the end of an epoch. */
export type TrainerLogLine =
  | {
      readonly type: "batch";
      readonly epoch: number;
      readonly batch: number;
      readonly phase: Phase;
      readonly rollouts: number;
      readonly steps: number;
      readonly meanReward: number;
      /** Mean Σ_t s_t of μ over the batch, when μ rated it. */
      readonly meanStepSum?: number;
      /** π's update; absent when π is not trainable (a served LLM whose rollouts only feed μ). */
      readonly policy?: PolicyUpdateMetrics;
      readonly mu?: Readonly<Record<string, unknown>>;
      readonly muVersion?: number;
      readonly ms: BatchTiming;
    }
  | {
      readonly type: "eval";
      readonly epoch: number;
      readonly tasks: number;
      readonly metrics: Readonly<Record<string, number>>;
    };

/**
 * A log line as read back on resume (or by anyone reading a run's `log.jsonl`): every field
 * checked, so a damaged or foreign log is a `RunFileError` naming its line, never a record trusted
 * by a cast.
 */
export const TrainerLogLineSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("batch"),
    epoch: z.number().int(),
    batch: z.number().int(),
    phase: z.enum(["sparse", "dense"]),
    rollouts: z.number().int(),
    steps: z.number().int(),
    meanReward: z.number(),
    meanStepSum: z.number().optional(),
    policy: z
      .object({ policyLoss: z.number(), kl: z.number(), gradNorm: z.number(), samples: z.number().int() })
      .optional(),
    mu: z.record(z.string(), z.unknown()).optional(),
    muVersion: z.number().int().optional(),
    ms: z.object({
      environment: z.number(),
      policy: z.number(),
      muInference: z.number(),
      policyUpdate: z.number(),
      muTraining: z.number(),
      exportReload: z.number(),
    }),
  }),
  z.object({
    type: z.literal("eval"),
    epoch: z.number().int(),
    tasks: z.number().int(),
    metrics: z.record(z.string(), z.number()),
  }),
]);
/** The schema reads exactly the lines the trainer writes (a type error here if the two drift apart). */
const asLogLine = (line: z.output<typeof TrainerLogLineSchema>): TrainerLogLine => line;

/** What the trainer reports as it goes (the CLI draws a progress bar from it). */
export type TrainerEvent =
  | {
      readonly type: "batch";
      readonly done: number;
      readonly total: number;
      readonly line: TrainerLogLine & { type: "batch" };
      /** The batch itself, for diagnostics: its episodes, μ's ratings (when it rated) and the advantages π was given. */
      readonly detail: BatchDetail;
    }
  | { readonly type: "eval"; readonly line: TrainerLogLine & { type: "eval" } }
  | { readonly type: "resumed"; readonly batches: number }
  | { readonly type: "mu-ahead"; readonly expected: number; readonly found: number };

export interface CoEvolutionOptions<Task> {
  readonly environment: Environment<Task>;
  readonly train: readonly Task[];
  /** Evaluated greedily at the end of every epoch (and before the first), for learning curves only: nothing is selected on it. */
  readonly evaluation?: readonly Task[];
  /**
   * π. A policy that is not trainable (`llmPolicy` over a hosted or local model) is rolled out and
   * evaluated, and μ co-evolves on its rollouts, but π itself stays as it is: the log says so by
   * leaving out the policy's update.
   */
  readonly policy: Policy | TrainablePolicy;
  /**
   * What rates the steps: μ (`MuCritic`), or any `StepCritic`. Needed by the dense phase and by
   * the trajectory-rubric signal; trained on every batch when it co-evolves.
   */
  readonly critic?: StepCritic;
  readonly settings?: TrainerSettingsInput;
  /**
   * The run directory (`@rubric/core/runs`, the same layout as GSPO's): `log.jsonl`, and after
   * every batch a checkpoint of π with μ's version beside it. With `resume`, a run found there
   * continues after its last checkpointed batch; without it, a run found there is refused
   * (`RunExistsError`) rather than overwritten.
   */
  readonly run?: RunDirectory;
  /** An episode's evaluation numbers (HotpotQA: EM, F1); the reward alone by default. */
  readonly measure?: (episode: Episode) => Readonly<Record<string, number>>;
  readonly onEvent?: (event: TrainerEvent) => void;
}

export interface CoEvolutionResult {
  readonly settings: TrainerSettings;
  readonly log: readonly TrainerLogLine[];
  /** The last evaluation's mean metrics (undefined without an evaluation set). */
  readonly final?: Readonly<Record<string, number>>;
  readonly batches: number;
  readonly rollouts: number;
}

/** What the trainer keeps beside π in each checkpoint. */
const StateSchema = z.strictObject({
  /** μ's export version when the checkpoint was taken. */
  muVersion: z.int().optional(),
});
const STAGE = "co-evolution";

/** What one batch trained on. */
export interface BatchDetail {
  readonly episodes: readonly Episode[];
  /** μ's ratings of every step, on the export in service before this batch's μ update. */
  readonly ratings?: readonly (readonly StepRating[])[];
  /** [episode][step], as handed to `policy.update`. */
  readonly advantages: readonly (readonly number[])[];
}

/** One planned batch: its epoch, phase and tasks (with replicas per task). */
interface PlannedBatch<Task> {
  readonly epoch: number;
  readonly index: number;
  readonly phase: Phase;
  readonly tasks: readonly Task[];
  readonly replicas: number;
}

/**
 * The batches of a run, fixed by the settings and the seed before anything runs, so a resumed
 * run takes exactly the batches the interrupted one would have. An epoch is one pass over the
 * training tasks in a seeded order: in the sparse phase `rolloutsPerBatch / groupSize` tasks per
 * batch with `groupSize` rollouts each, in the dense phase `rolloutsPerBatch` tasks with one.
 */
export function planBatches<Task>(train: readonly Task[], settings: TrainerSettings): PlannedBatch<Task>[] {
  const epochs = settings.sparseEpochs + settings.denseEpochs;
  const plan: PlannedBatch<Task>[] = [];
  const rng = createRng(settings.seed).fork("epochs");
  for (let epoch = 1; epoch <= epochs; epoch++) {
    const grouped = epoch <= settings.sparseEpochs || settings.signal !== "arco";
    const phase: Phase = epoch <= settings.sparseEpochs || settings.signal !== "arco" ? "sparse" : "dense";
    const replicas = grouped ? settings.groupSize : 1;
    const perBatch = Math.max(1, Math.floor(settings.rolloutsPerBatch / replicas));
    const order = shuffle(train, rng.fork(`epoch:${epoch}`));
    for (let start = 0, index = 1; start < order.length; start += perBatch, index++) {
      plan.push({ epoch, index, phase, tasks: order.slice(start, start + perBatch), replicas });
    }
  }
  return plan;
}

/**
 * ARCO's co-evolution of a policy π and its rubric model μ (arXiv 2606.21262, §5 of the design):
 * per batch, π rolls out on the training tasks; μ rates every step (K criteria, then scores);
 * π takes one REINFORCE step — in the sparse phase on R − mean R within each task's group, in the
 * dense phase on 0.5·(G_t − b(bucket)) with G_t the reward-to-go of μ's step scores and a KL
 * leash to the reference π — and μ, when it co-evolves, takes one step of its decomposition loss
 * on the same batch and is exported and hot-reloaded. The baselines are settings of the same loop
 * (`signal`, a frozen or ablated critic). Given a run directory (`@rubric/core/runs`), writes
 * a JSONL log and a checkpoint of π after every batch, and resumes from the latest.
 *
 * @example
 * const result = await trainCoEvolution({ environment: hotpotQa(), train, evaluation: dev,
 *   policy, critic, settings: { sparseEpochs: 1, denseEpochs: 1 }, run: { dir: "runs/arco" } });
 */
export async function trainCoEvolution<Task>(options: CoEvolutionOptions<Task>): Promise<CoEvolutionResult> {
  const parsed = TrainerSettingsSchema.safeParse(options.settings ?? {});
  if (!parsed.success) {
    throw new RlxarInputError("settings", formatZodIssues(parsed.error, { separator: "; " }));
  }
  const settings = parsed.data;
  const { environment, policy, critic } = options;
  if (options.train.length === 0) throw new RlxarInputError("train", "expected at least one training task");
  const needsCritic =
    settings.signal === "trajectory-rubric" || (settings.signal === "arco" && settings.denseEpochs > 0);
  if (needsCritic && critic === undefined) {
    throw new RlxarInputError("critic", `signal ${JSON.stringify(settings.signal)} needs μ (a critic) to score steps`);
  }
  if (settings.signal === "trajectory-rubric" && critic?.coEvolves === true) {
    throw new RlxarInputError(
      "critic",
      "the trajectory-rubric (RaR) baseline's judge is frozen: pass a critic without a sidecar client",
    );
  }
  const trainable = isTrainable(policy) ? policy : undefined;
  const measure = options.measure ?? ((episode: Episode) => ({ reward: episode.reward }));
  const plan = planBatches(options.train, settings);
  const log: TrainerLogLine[] = [];

  let done = 0;
  let pendingEval: number | undefined;
  let run: TrainingRun<TrainerLogLine> | undefined;
  if (options.run !== undefined) {
    run = await TrainingRun.open(options.run, {
      trainer: "rlxar",
      stage: STAGE,
      logSchema: TrainerLogLineSchema.transform(asLogLine),
      ownsLine: () => true,
      settings,
      existing: "refuse",
      // Lines written after the checkpoint died with the process: the batches it counts, and the
      // evaluations of the epochs it finished.
      vouchedFor: (lines, batches) => vouchedLines(lines, batches, plan),
    });
    if (run.resumed !== undefined) {
      const pointer = join(options.run.dir, RUN_CHECKPOINTS_DIR, RUN_LATEST_FILE);
      const state = StateSchema.safeParse(run.resumed.state ?? {});
      if (!state.success)
        throw new RunFileError(pointer, `state: ${formatZodIssues(state.error, { separator: "; " })}`);
      done = run.resumed.done;
      if (done > plan.length)
        throw new RunFileError(pointer, `done: ${done} batches finished, but this run plans ${plan.length}`);
      if (trainable !== undefined) await trainable.load(run.resumed.checkpoint);
      if (critic?.coEvolves === true) {
        if (state.data.muVersion !== undefined && critic.version !== state.data.muVersion) {
          // An export of an update whose batch never reached a checkpoint: its μ is one step
          // ahead of the plan. Training on is sound; the log says so.
          options.onEvent?.({ type: "mu-ahead", expected: state.data.muVersion, found: critic.version });
        }
        await critic.resume();
      }
      log.push(...run.log);
      options.onEvent?.({ type: "resumed", batches: done });
      const lastEpoch = plan[done - 1]!.epoch;
      const epochDone = plan[done]?.epoch !== lastEpoch;
      const evaluated = log.some((line) => line.type === "eval" && line.epoch === lastEpoch);
      if (epochDone && !evaluated) pendingEval = lastEpoch;
    }
  }
  if (done === 0) {
    // RL starts from the supervised weights with a fresh optimiser, as ARCO's does: the SFT
    // stage's Adam moments, carried over, moved π by themselves (re-running the schedule with
    // every advantage 0 moved it the same way, cosine 0.95–0.998), drowning every critic's signal.
    await trainable?.resetOptimizer();
    await trainable?.setReference();
    await critic?.freezeReference();
  }
  const record = async (line: TrainerLogLine) => {
    log.push(line);
    await run?.append(line);
  };
  const evaluate = async (epoch: number) => {
    if (options.evaluation === undefined || options.evaluation.length === 0) return;
    const episodes = await rollout(environment, options.evaluation, policy, {
      temperature: 0,
      seed: `${settings.seed}/eval`,
    });
    const line: TrainerLogLine & { type: "eval" } = {
      type: "eval",
      epoch,
      tasks: episodes.length,
      metrics: meanMetrics(episodes.map(measure)),
    };
    await record(line);
    options.onEvent?.({ type: "eval", line });
  };

  if (done === 0) await evaluate(0);
  if (pendingEval !== undefined) await evaluate(pendingEval);
  for (let b = done; b < plan.length; b++) {
    const batch = plan[b]!;
    const { line, detail } = await trainBatch(batch, b, settings, environment, policy, trainable, critic);
    await record(line);
    await run?.commit(
      b + 1,
      b === plan.length - 1,
      async (dir) => {
        await mkdir(dir, { recursive: true });
        await trainable?.save(dir);
      },
      critic === undefined ? {} : { muVersion: critic.version },
    );
    options.onEvent?.({ type: "batch", done: b + 1, total: plan.length, line, detail });
    if (plan[b + 1]?.epoch !== batch.epoch) await evaluate(batch.epoch);
  }
  const evals = log.filter((line): line is TrainerLogLine & { type: "eval" } => line.type === "eval");
  return {
    settings,
    log,
    ...(evals.length === 0 ? {} : { final: evals[evals.length - 1]!.metrics }),
    batches: plan.length,
    rollouts: log.reduce((sum, line) => sum + (line.type === "batch" ? line.rollouts : 0), 0),
  };
}

async function trainBatch<Task>(
  batch: PlannedBatch<Task>,
  b: number,
  settings: TrainerSettings,
  environment: Environment<Task>,
  policy: Policy,
  trainable: TrainablePolicy | undefined,
  critic: StepCritic | undefined,
): Promise<{ line: TrainerLogLine & { type: "batch" }; detail: BatchDetail }> {
  const timing: RolloutTiming = { policyMs: 0, environmentMs: 0 };
  const episodes = await rollout(environment, batch.tasks, policy, {
    temperature: settings.temperature,
    seed: `${settings.seed}/train/${b}`,
    replicas: batch.replicas,
    timing,
  });

  // μ rates every batch it co-evolves on (its update needs the criteria) and every batch whose
  // signal reads its scores; an outcome-only run with a frozen or absent μ skips it.
  const rates =
    critic !== undefined && (critic.coEvolves || batch.phase === "dense" || settings.signal === "trajectory-rubric");
  let inference = performance.now();
  const ratings: StepRating[][] | undefined = rates ? await critic!.rate(episodes) : undefined;
  inference = performance.now() - inference;
  const stepSums = ratings?.map((steps) => steps.reduce((sum, step) => sum + step.s, 0));

  const advantages =
    batch.phase === "dense"
      ? denseAdvantages(
          episodes,
          ratings!.map((steps) => steps.map((step) => step.s)),
          {
            scale: settings.denseScale,
            gamma: settings.gamma,
            outcomeAtTerminal: settings.outcomeAtTerminal,
            terminalBuckets: settings.terminalBuckets,
          },
        )
      : sparseAdvantages(episodes, settings.signal === "trajectory-rubric" ? stepSums : undefined);
  const samples: PolicySample[] = episodes.flatMap((episode, e) =>
    episode.steps.map((step, t) => ({ view: step.view, decision: step.decision, advantage: advantages[e]![t]! })),
  );
  let policyMs = performance.now();
  const policyMetrics = await trainable?.update(samples, {
    learningRate: batch.phase === "dense" ? settings.denseLearningRate : settings.sparseLearningRate,
    klCoef: batch.phase === "dense" ? settings.denseKl : settings.sparseKl,
    maxGradNorm: settings.maxGradNorm,
  });
  policyMs = performance.now() - policyMs;

  let mu: CriticUpdate | undefined;
  if (critic?.coEvolves === true) mu = await critic.update(episodes, ratings!);

  const line: TrainerLogLine & { type: "batch" } = {
    type: "batch",
    epoch: batch.epoch,
    batch: batch.index,
    phase: batch.phase,
    rollouts: episodes.length,
    steps: samples.length,
    meanReward: episodes.reduce((sum, episode) => sum + episode.reward, 0) / episodes.length,
    ...(stepSums === undefined ? {} : { meanStepSum: stepSums.reduce((a, s) => a + s, 0) / stepSums.length }),
    ...(policyMetrics === undefined ? {} : { policy: policyMetrics }),
    ...(mu === undefined ? {} : { mu: mu.metrics }),
    ...(critic === undefined ? {} : { muVersion: critic.version }),
    ms: {
      environment: timing.environmentMs,
      policy: timing.policyMs,
      muInference: inference,
      policyUpdate: policyMs,
      muTraining: mu?.trainMs ?? 0,
      exportReload: mu?.exportMs ?? 0,
    },
  };
  return { line, detail: { episodes, ...(ratings === undefined ? {} : { ratings }), advantages } };
}

/** Whether a policy can be trained (it has `update`, `sft`, `setReference`, `resetOptimizer`, `save`, `load`). */
export function isTrainable(policy: Policy): policy is TrainablePolicy {
  const p = policy as Partial<TrainablePolicy>;
  return [p.update, p.sft, p.setReference, p.resetOptimizer, p.save, p.load].every((f) => typeof f === "function");
}

/** The mean of each metric over episodes. */
export function meanMetrics(rows: readonly Readonly<Record<string, number>>[]): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const row of rows) for (const [key, value] of Object.entries(row)) sums[key] = (sums[key] ?? 0) + value;
  return Object.fromEntries(Object.entries(sums).map(([key, sum]) => [key, sum / rows.length]));
}

/**
 * The lines a checkpoint of `batches` finished batches vouches for: those batches' lines, and the
 * evaluations of the epochs before the last one it reached, or of that one too once it is finished.
 */
function vouchedLines<Task>(
  lines: readonly TrainerLogLine[],
  batches: number,
  plan: readonly PlannedBatch<Task>[],
): TrainerLogLine[] {
  const lastEpoch = plan[batches - 1]?.epoch ?? 0;
  const epochDone = plan[batches]?.epoch !== lastEpoch;
  let seen = 0;
  return lines.filter((line) =>
    line.type === "batch" ? ++seen <= batches : line.epoch < lastEpoch || (epochDone && line.epoch === lastEpoch),
  );
}
