import { performance } from "node:perf_hooks";
import { createRng, mean, shuffle } from "@rubric/core";
import { type RunDirectory, TrainingRun } from "@rubric/core/runs";
import { z } from "zod";
import { TrainingError, TrainingInputError } from "../errors.js";
import type { RolloutGroup, TrainerBackend } from "./backend.js";
import { advantagesFor, type Objective } from "./objective.js";
import { ReplayBuffer } from "./replay-buffer.js";

/** One line of a run's `log.jsonl`: a Stage I epoch or a Stage II batch. */
export const TrainingLogEntrySchema = z.discriminatedUnion("stage", [
  z.strictObject({ stage: z.literal("sft"), epoch: z.number().int().min(0), loss: z.number(), seconds: z.number() }),
  z.strictObject({
    stage: z.literal("gspo"),
    batch: z.number().int().min(0),
    meanReward: z.number(),
    loss: z.number(),
    clippedFraction: z.number(),
    kl: z.number(),
    rollouts: z.number().int(),
    /** Groups of earlier batches replayed in this one (absent in logs written before the buffer). */
    replayed: z.number().int().min(0).optional(),
    /** Seconds spent computing rewards (worker + verifiers) and in the backend (sampling + gradient steps). */
    rewardSeconds: z.number(),
    policySeconds: z.number(),
    seconds: z.number(),
  }),
]);
export type TrainingLogEntry = z.infer<typeof TrainingLogEntrySchema>;
export type GspoLogEntry = Extract<TrainingLogEntry, { stage: "gspo" }>;

export type { RunDirectory };

/** How many of a stage's checkpoints a run directory keeps; see {@link RunDirectory.keepCheckpoints}. */
export type KeepCheckpoints = NonNullable<RunDirectory["keepCheckpoints"]>;

export interface GspoTrainingOptions<Prompt> {
  readonly backend: TrainerBackend<Prompt>;
  readonly prompts: readonly Prompt[];
  /** r(prompt, sequence): the stakeholder's true utility of the worker's output under the sequence's rubric, minus costs. */
  readonly reward: (prompt: Prompt, tokens: readonly number[], context: { readonly seed: number }) => Promise<number>;
  readonly seed: number;
  readonly batches: number;
  /** Prompts per batch, drawn without replacement in a seeded order each batch. Default: all. */
  readonly promptsPerBatch?: number;
  /** Sequences per prompt (the group). Default 8. */
  readonly groupSize?: number;
  /** Gradient steps per rollout batch; after the first, π_θ ≠ π_old and the ratios move off 1. Default 4. */
  readonly stepsPerBatch?: number;
  readonly objective?: Objective;
  /** Clipping band; default the paper's 3e-4 / 4e-4. */
  readonly epsLow?: number;
  readonly epsHigh?: number;
  readonly learningRate?: number;
  /** β of the k3 KL to the backend's reference (set it with `setReference`); default 0. */
  readonly klCoef?: number;
  /**
   * Prioritized replay from a buffer of past groups: each batch also trains on the buffered groups
   * of earlier batches whose mean return is in this lowest percentile of the buffer (0 = off).
   * Default 20.
   */
  readonly replayPercentile?: number;
  /** Groups the replay buffer keeps, oldest out first. Default 4 batches' worth. */
  readonly replayCapacity?: number;
  /** At most this many groups replayed per batch. Default a quarter of a batch's groups (at least 1). */
  readonly replayPerBatch?: number;
  readonly run?: RunDirectory;
  readonly onLog?: (entry: TrainingLogEntry) => void;
  readonly signal?: AbortSignal;
}

/** A run was asked to stop; every finished batch is in its log and checkpoint. */
export class TrainingAbortedError extends TrainingError {
  override readonly name = "TrainingAbortedError";
  readonly code = "training.aborted";
}

/** A stage's log so far and where it goes on, and the one call that records a finished unit. */
export interface StageRun {
  /** This stage's log entries, those a resume kept included. */
  readonly log: TrainingLogEntry[];
  /** The first epoch or batch still to run: 0 afresh, the checkpoint's count on a resume. */
  readonly start: number;
  /** The checkpoint directory resumed from, if any. */
  readonly resumedFrom?: string;
  /**
   * Appends a finished unit's entry (to the run's `log.jsonl` too) and checkpoints when it is due;
   * `extra` writes what the stage keeps beside the backend's state into the checkpoint.
   */
  record(entry: TrainingLogEntry, last: boolean, extra?: (dir: string) => Promise<void>): Promise<void>;
}

function stepOf(entry: TrainingLogEntry): number {
  return entry.stage === "sft" ? entry.epoch : entry.batch;
}

/**
 * Opens a stage's run: in memory without a run directory; otherwise the shared run directory of
 * `@rubric/core/runs` (the same layout and resume as ARCO's trainer), resumed from the stage's
 * latest checkpoint with `run.resume`, the backend loaded from it. `settings` are kept in every
 * checkpoint and a resume with other settings is refused (`RunSettingsError`).
 */
export async function openStage<P>(
  options: {
    readonly backend: TrainerBackend<P>;
    readonly run?: RunDirectory;
    readonly onLog?: (entry: TrainingLogEntry) => void;
  },
  stage: "sft" | "gspo",
  settings: Record<string, unknown>,
): Promise<StageRun> {
  const { backend, onLog } = options;
  if (options.run === undefined) {
    const log: TrainingLogEntry[] = [];
    return {
      log,
      start: 0,
      async record(entry) {
        log.push(entry);
        onLog?.(entry);
      },
    };
  }
  const run = await TrainingRun.open(options.run, {
    trainer: "gspo",
    stage,
    logSchema: TrainingLogEntrySchema,
    ownsLine: (entry) => entry.stage === stage,
    settings,
  });
  if (run.resumed !== undefined) await backend.load(run.resumed.checkpoint);
  const log = run.lines;
  return {
    log,
    start: run.done,
    resumedFrom: run.resumed?.checkpoint,
    async record(entry, last, extra) {
      log.push(entry);
      await run.append(entry);
      await run.commit(stepOf(entry) + 1, last, async (dir) => {
        await backend.save(dir);
        await extra?.(dir);
      });
      onLog?.(entry);
    },
  };
}

/**
 * Stage II: `batches` rounds of — K sequences per prompt from π_old, a reward for each, group
 * advantages (@rubric/core), prioritized replay of the worst groups of earlier batches from a
 * buffer (`replayPercentile`, `replayCapacity`, `replayPerBatch`), then `stepsPerBatch` clipped
 * policy-gradient steps in the backend. Writes a JSONL log line and a checkpoint per batch when
 * given a run directory (`@rubric/core/runs`), and resumes from its latest checkpoint with `resume`: a resumed run ends
 * with the same parameters and log as an uninterrupted one (every random choice is keyed by seed
 * and batch). Returns the whole log of the stage.
 */
export async function trainGspo<Prompt>(options: GspoTrainingOptions<Prompt>): Promise<GspoLogEntry[]> {
  const { backend, prompts } = options;
  if (prompts.length === 0)
    throw new TrainingInputError("trainGspo: options.prompts must hold at least one prompt, got []");
  const K = options.groupSize ?? 8;
  const objective = options.objective ?? "gspo";
  const step = {
    objective,
    epsLow: options.epsLow ?? 3e-4,
    epsHigh: options.epsHigh ?? 4e-4,
    learningRate: options.learningRate ?? 0.05,
    klCoef: options.klCoef ?? 0,
  };
  // What a resume must share with the run it continues (the number of batches may grow).
  const settings = {
    seed: options.seed,
    groupSize: K,
    promptsPerBatch: options.promptsPerBatch ?? null,
    stepsPerBatch: options.stepsPerBatch ?? 4,
    ...step,
    replayPercentile: options.replayPercentile ?? 20,
    replayCapacity: options.replayCapacity ?? null,
    replayPerBatch: options.replayPerBatch ?? null,
  };
  const state = await openStage(options, "gspo", settings);
  const perBatch = Math.min(options.promptsPerBatch ?? prompts.length, prompts.length);
  const percentile = options.replayPercentile ?? 20;
  const capacity = options.replayCapacity ?? 4 * perBatch;
  const replayPerBatch = options.replayPerBatch ?? Math.max(1, Math.round(perBatch / 4));
  // The buffer is part of the run's state: a resumed run reads the one its checkpoint kept.
  const buffer =
    state.resumedFrom === undefined
      ? new ReplayBuffer(capacity)
      : await ReplayBuffer.load(state.resumedFrom, capacity, prompts.length);
  for (let batch = state.start; batch < options.batches; batch++) {
    if (options.signal?.aborted) throw new TrainingAbortedError(`stopped before batch ${batch} of ${options.batches}`);
    const started = performance.now();
    let rewardMs = 0;
    const rng = createRng(options.seed).fork(`gspo-batch:${batch}`);
    const chosen = shuffle(
      prompts.map((_, index) => index),
      rng.fork("prompts"),
    ).slice(0, perBatch);
    const groups: (RolloutGroup<Prompt> & { meanReward: number; promptIndex: number })[] = [];
    const rewards: number[] = [];
    for (const [i, promptIndex] of chosen.entries()) {
      const prompt = prompts[promptIndex]!;
      const sampled = await backend.sample(prompt, K, { seed: rng.fork(`sample:${i}`).int(2 ** 31) });
      const r: number[] = [];
      for (const [k, s] of sampled.entries()) {
        const t0 = performance.now();
        r.push(await options.reward(prompt, s.tokens, { seed: rng.fork(`reward:${i}:${k}`).int(2 ** 31) }));
        rewardMs += performance.now() - t0;
      }
      const advantages = advantagesFor(objective, r);
      groups.push({
        prompt,
        promptIndex,
        meanReward: mean(r),
        sequences: sampled.map((s, k) => ({ tokens: s.tokens, logpOld: s.logprobs, advantage: advantages[k]! })),
      });
      rewards.push(...r);
    }
    // Replayed groups keep their advantages; their old log-probs are the current policy's (π_old
    // of this batch), so the clipping band bounds how far this batch moves them, as it does the
    // fresh ones — with their sampling-time log-probs, a tight band would clip them all.
    const replayed = percentile > 0 ? buffer.select(percentile, replayPerBatch) : [];
    const replayGroups: RolloutGroup<Prompt>[] = [];
    for (const entry of replayed) {
      const prompt = prompts[entry.promptIndex]!;
      const logps = await backend.logprobs(
        prompt,
        entry.sequences.map((s) => s.tokens),
      );
      replayGroups.push({
        prompt,
        sequences: entry.sequences.map((s, k) => ({ tokens: s.tokens, logpOld: logps[k]!, advantage: s.advantage })),
      });
    }
    const training = [...groups, ...replayGroups];
    buffer.add(
      groups.map((g) => ({
        promptIndex: g.promptIndex,
        batch,
        meanReward: g.meanReward,
        sequences: g.sequences.map((s) => ({ tokens: s.tokens, advantage: s.advantage })),
      })),
    );
    let metrics = { loss: 0, clippedFraction: 0, kl: 0 };
    for (let s = 0; s < (options.stepsPerBatch ?? 4); s++) metrics = await backend.step(training, step);
    const seconds = (performance.now() - started) / 1000;
    const entry: GspoLogEntry = {
      stage: "gspo",
      batch,
      meanReward: mean(rewards),
      ...metrics,
      rollouts: rewards.length,
      replayed: replayGroups.length,
      rewardSeconds: rewardMs / 1000,
      policySeconds: seconds - rewardMs / 1000,
      seconds,
    };
    await state.record(entry, batch === options.batches - 1, (dir) => buffer.save(dir));
  }
  return state.log.filter((e): e is GspoLogEntry => e.stage === "gspo");
}
