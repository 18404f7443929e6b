import { appendFileSync, existsSync, lstatSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createRng, formatRubricIssue, formatZodIssues, readJsonLines, shuffle } from "@rubric/core";
import { readInputText } from "@rubric/core/files";
import { z } from "zod";
import { RlxarFileError, RlxarInputError } from "../errors.js";
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
 * A log line as read back on resume: every field checked, so a damaged or foreign log is an
 * `RlxarFileError` naming its line, never a record trusted by a cast.
 */
const TrainerLogLineSchema = z.discriminatedUnion("type", [
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
   * Where `log.jsonl`, `state.json` and the policy's checkpoint go. With `resume`, a run found
   * there continues after its last finished batch.
   */
  readonly directory?: string;
  readonly resume?: boolean;
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

const StateSchema = z.strictObject({
  format: z.literal("rlxar-trainer"),
  settings: z.record(z.string(), z.unknown()),
  /** Batches finished over the whole run (the plan is deterministic, so this says where to go on). */
  batches: z.int().min(0),
  muVersion: z.int().optional(),
});
const STATE_FILE = "state.json";
const LOG_FILE = "log.jsonl";
const POLICY_DIR = "policy";

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
 * (`signal`, a frozen or ablated critic). Writes a JSONL log, the policy's checkpoint and a
 * state file after every batch when given a directory, and resumes from them.
 *
 * @example
 * const result = await trainCoEvolution({ environment: hotpotQa(), train, evaluation: dev,
 *   policy, critic, settings: { sparseEpochs: 1, denseEpochs: 1 }, directory: "runs/arco" });
 */
export async function trainCoEvolution<Task>(options: CoEvolutionOptions<Task>): Promise<CoEvolutionResult> {
  const parsed = TrainerSettingsSchema.safeParse(options.settings ?? {});
  if (!parsed.success) {
    throw new RlxarInputError("settings", formatZodIssues(parsed.error, { separator: "; " }));
  }
  const settings = parsed.data;
  const { environment, policy, critic, directory } = options;
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
  if (directory !== undefined) {
    mkdirSync(directory, { recursive: true });
    const statePath = join(directory, STATE_FILE);
    if (existsSync(statePath)) {
      if (options.resume !== true) {
        throw new RlxarInputError(
          "directory",
          `${directory} holds a run (${STATE_FILE}); pass resume to continue it or choose another directory`,
        );
      }
      const state = readState(statePath);
      if (JSON.stringify(state.settings) !== JSON.stringify(settings)) {
        throw new RlxarFileError(statePath, [
          "settings differ from this run's: resume with the settings it was started with",
        ]);
      }
      done = state.batches;
      if (done > plan.length) {
        throw new RlxarFileError(statePath, [`batches: ${done} finished, but this run plans ${plan.length}`]);
      }
      // Read (and checked) before anything is restored: a damaged log changes nothing.
      const previous = readLog(join(directory, LOG_FILE));
      if (trainable !== undefined) await trainable.restore(join(directory, POLICY_DIR));
      if (critic?.coEvolves === true) {
        if (state.muVersion !== undefined && critic.version !== state.muVersion) {
          // An export of an update whose batch never reached the state file: its μ is one step
          // ahead of the plan. Training on is sound; the log says so.
          options.onEvent?.({ type: "mu-ahead", expected: state.muVersion, found: critic.version });
        }
        await critic.resume();
      }
      // The log is appended before the state is written: lines of a batch that did not reach
      // the state file are dropped, and the file rewritten to what the state vouches for.
      const lastEpoch = done === 0 ? 0 : plan[done - 1]!.epoch;
      const epochDone = done > 0 && plan[done]?.epoch !== lastEpoch;
      let batches = 0;
      for (const line of previous) {
        if (
          line.type === "batch" ? ++batches <= done : line.epoch < lastEpoch || (epochDone && line.epoch === lastEpoch)
        ) {
          log.push(line);
        }
      }
      writeFileSync(join(directory, LOG_FILE), log.map((line) => `${JSON.stringify(line)}\n`).join(""));
      options.onEvent?.({ type: "resumed", batches: done });
      const evaluated = log.some((line) => line.type === "eval" && line.epoch === lastEpoch);
      if (epochDone && !evaluated) pendingEval = lastEpoch;
    }
  }
  if (done === 0) {
    await trainable?.setReference();
    await critic?.freezeReference();
    if (directory !== undefined) writeFileSync(join(directory, LOG_FILE), "");
  }
  const record = (line: TrainerLogLine) => {
    log.push(line);
    if (directory !== undefined) appendFileSync(join(directory, LOG_FILE), `${JSON.stringify(line)}\n`);
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
    record(line);
    options.onEvent?.({ type: "eval", line });
  };

  if (done === 0) await evaluate(0);
  if (pendingEval !== undefined) await evaluate(pendingEval);
  for (let b = done; b < plan.length; b++) {
    const batch = plan[b]!;
    const { line, detail } = await trainBatch(batch, b, settings, environment, policy, trainable, critic);
    record(line);
    if (directory !== undefined) {
      await trainable?.checkpoint(join(directory, POLICY_DIR));
      writeState(join(directory, STATE_FILE), {
        format: "rlxar-trainer",
        settings,
        batches: b + 1,
        ...(critic === undefined ? {} : { muVersion: critic.version }),
      });
    }
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

/** Whether a policy can be trained (it has `update`, `sft`, `setReference`, `checkpoint`, `restore`). */
export function isTrainable(policy: Policy): policy is TrainablePolicy {
  const p = policy as Partial<TrainablePolicy>;
  return [p.update, p.sft, p.setReference, p.checkpoint, p.restore].every((f) => typeof f === "function");
}

/** The mean of each metric over episodes. */
export function meanMetrics(rows: readonly Readonly<Record<string, number>>[]): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const row of rows) for (const [key, value] of Object.entries(row)) sums[key] = (sums[key] ?? 0) + value;
  return Object.fromEntries(Object.entries(sums).map(([key, sum]) => [key, sum / rows.length]));
}

// A run directory's files are read by core's reader, links refused: a resumed directory may be
// someone else's, and a link or FIFO in it must not stand for another file or hang the resume.
function readState(path: string): z.infer<typeof StateSchema> {
  const text = readInputText(path, { symlinks: "refuse" });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new RlxarFileError(path, [`not JSON: ${(error as Error).message}`]);
  }
  const parsed = StateSchema.safeParse(json);
  if (!parsed.success) throw new RlxarFileError(path, formatZodIssues(parsed.error).split("\n"));
  return parsed.data;
}

// Written beside and renamed, so a crash mid-write leaves the last whole state.
function writeState(path: string, state: z.infer<typeof StateSchema>): void {
  writeFileSync(`${path}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(`${path}.tmp`, path);
}

function readLog(path: string): TrainerLogLine[] {
  if (lstatSync(path, { throwIfNoEntry: false, bigint: true }) === undefined) return [];
  const { records, issues } = readJsonLines(readInputText(path, { symlinks: "refuse" }), TrainerLogLineSchema, {
    source: path,
  });
  if (issues.length > 0) throw new RlxarFileError(path, issues.map(formatRubricIssue));
  return records.map((record) => asLogLine(record.value));
}
