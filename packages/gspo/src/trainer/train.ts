import { lstatSync } from "node:fs";
import { appendFile, mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createRng, formatRubricIssue, mean, readJsonLines, shuffle, toJsonLines } from "@rubric/core";
import { readInputText } from "@rubric/core/files";
import { z } from "zod";
import { TrainingError, TrainingInputError, TrainingLogError } from "../errors.js";
import type { RolloutGroup, TrainerBackend } from "./backend.js";
import { advantagesFor, type Objective } from "./objective.js";
import { ReplayBuffer } from "./replay-buffer.js";

/** One line of a run's `training.jsonl`: a Stage I epoch or a Stage II batch. */
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

/** How many of a stage's checkpoints a run directory keeps; see {@link RunDirectory.keepCheckpoints}. */
export type KeepCheckpoints = "latest" | "all";

const LatestSchema = z.strictObject({ stage: z.enum(["sft", "gspo"]), step: z.number().int().min(0), dir: z.string() });

/** Where a run keeps its log and checkpoints: `<dir>/training.jsonl`, `<dir>/checkpoints/<stage>-<n>/`, `<dir>/checkpoints/latest.json`. */
export interface RunDirectory {
  readonly dir: string;
  /** Checkpoint every this many batches (and always after the last). Default 1. */
  readonly checkpointEvery?: number;
  /**
   * `"latest"` (default): once a new checkpoint is written and `latest.json` names it, the stage's
   * earlier checkpoints in this directory are deleted — resume needs only the latest, and keeping
   * every one is most of what a run writes. `"all"`: keep every checkpoint.
   */
  readonly keepCheckpoints?: KeepCheckpoints;
  /** Continue from `latest.json` when it exists. Default false: start afresh (the log is rewritten). */
  readonly resume?: boolean;
}

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

export interface Run {
  readonly log: TrainingLogEntry[];
  readonly start: number;
  /** The checkpoint directory resumed from, if any. */
  readonly resumedFrom?: string;
}

/** Opens a run directory: afresh, or resumed from its latest checkpoint of `stage` (the log is cut back to it). */
export async function openRun<P>(
  backend: TrainerBackend<P>,
  run: RunDirectory | undefined,
  stage: "sft" | "gspo",
): Promise<Run> {
  if (!run) return { log: [], start: 0 };
  await mkdir(join(run.dir, "checkpoints"), { recursive: true });
  const logFile = join(run.dir, "training.jsonl");
  const previous = await readLog(logFile);
  const latest = run.resume ? await readLatest(run.dir) : undefined;
  // Entries of other stages are kept; this stage's are kept up to the checkpoint resumed from.
  const resumed = latest?.stage === stage ? latest : undefined;
  if (resumed) await backend.load(join(run.dir, resumed.dir));
  const log = previous.filter((e) => e.stage !== stage || (resumed !== undefined && stepOf(e) <= resumed.step));
  await writeFile(logFile, toJsonLines(log));
  return resumed ? { log, start: resumed.step + 1, resumedFrom: join(run.dir, resumed.dir) } : { log, start: 0 };
}

function stepOf(entry: TrainingLogEntry): number {
  return entry.stage === "sft" ? entry.epoch : entry.batch;
}

/**
 * A file of the run directory, or undefined when there is none. Read by core's reader with links
 * refused: a resumed run directory may come from elsewhere, and a link or FIFO in it must not stand
 * for another file of this machine or hang the resume. Any other fault is an error, not "none".
 */
function readRunFile(file: string): string | undefined {
  if (lstatSync(file, { throwIfNoEntry: false, bigint: true }) === undefined) return undefined;
  return readInputText(file, { symlinks: "refuse" });
}

async function readLog(file: string): Promise<TrainingLogEntry[]> {
  const text = readRunFile(file);
  if (text === undefined) return [];
  const { records, issues } = readJsonLines(text, TrainingLogEntrySchema, { source: file });
  if (issues.length > 0) throw new TrainingLogError(formatRubricIssue(issues[0]!));
  return records.map((record) => record.value);
}

async function readLatest(dir: string): Promise<z.infer<typeof LatestSchema> | undefined> {
  const text = readRunFile(join(dir, "checkpoints", "latest.json"));
  if (text === undefined) return undefined;
  return LatestSchema.parse(JSON.parse(text));
}

/**
 * Saves a checkpoint, then points latest.json at it (written atomically: a crash leaves the previous
 * one), and only then — keeping the latest — deletes the stage's earlier checkpoints, so that at
 * every moment latest.json names a whole checkpoint.
 */
async function checkpoint<P>(
  backend: TrainerBackend<P>,
  run: RunDirectory,
  stage: "sft" | "gspo",
  step: number,
  extra?: (dir: string) => Promise<void>,
): Promise<void> {
  const name = `${stage}-${String(step).padStart(5, "0")}`;
  const dir = join("checkpoints", name);
  await backend.save(join(run.dir, dir));
  await extra?.(join(run.dir, dir));
  const latest = join(run.dir, "checkpoints", "latest.json");
  await writeFile(`${latest}.tmp`, JSON.stringify({ stage, step, dir }));
  await rename(`${latest}.tmp`, latest);
  if ((run.keepCheckpoints ?? "latest") === "latest") await removeEarlierCheckpoints(run.dir, stage, name);
}

/** Deletes `<dir>/checkpoints/<stage>-<n>/` but `keep`; another stage's checkpoints in the same directory are left alone. */
async function removeEarlierCheckpoints(dir: string, stage: "sft" | "gspo", keep: string): Promise<void> {
  const root = join(dir, "checkpoints");
  const ofStage = new RegExp(`^${stage}-\\d+$`);
  for (const entry of await readdir(root))
    if (entry !== keep && ofStage.test(entry)) await rm(join(root, entry), { recursive: true, force: true });
}

/** Appends a stage's log entry (to the run's `training.jsonl` too) and checkpoints when it is due. */
export async function record<P>(
  entry: TrainingLogEntry,
  state: Run,
  options: { run?: RunDirectory; onLog?: (e: TrainingLogEntry) => void; backend: TrainerBackend<P> },
  last: boolean,
  /** Writes what the stage keeps beside the backend's state into a checkpoint's directory. */
  extra?: (dir: string) => Promise<void>,
): Promise<void> {
  state.log.push(entry);
  if (options.run) {
    await appendFile(join(options.run.dir, "training.jsonl"), toJsonLines([entry]));
    const every = options.run.checkpointEvery ?? 1;
    if (last || (stepOf(entry) + 1) % every === 0)
      await checkpoint(options.backend, options.run, entry.stage, stepOf(entry), extra);
  }
  options.onLog?.(entry);
}

/**
 * Stage II: `batches` rounds of — K sequences per prompt from π_old, a reward for each, group
 * advantages (@rubric/core), prioritized replay of the worst groups of earlier batches from a
 * buffer (`replayPercentile`, `replayCapacity`, `replayPerBatch`), then `stepsPerBatch` clipped
 * policy-gradient steps in the backend. Writes a JSONL log line and a checkpoint per batch when
 * given a run directory, and resumes from its latest checkpoint with `resume`: a resumed run ends
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
  const state = await openRun(backend, options.run, "gspo");
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
    await record(entry, state, options, batch === options.batches - 1, (dir) => buffer.save(dir));
  }
  return state.log.filter((e): e is GspoLogEntry => e.stage === "gspo");
}
