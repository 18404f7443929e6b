import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { prioritizedReplay } from "@rubric/core";
import { z } from "zod";
import { CheckpointError, TrainingInputError } from "../errors.js";
import { readCheckpointFile } from "./checkpoint-file.js";

/** One past rollout group in the buffer: its prompt (by index into the run's prompts), batch, mean return, sequences and advantages. */
export interface ReplayEntry {
  readonly promptIndex: number;
  readonly batch: number;
  readonly meanReward: number;
  readonly sequences: readonly { readonly tokens: readonly number[]; readonly advantage: number }[];
}

const ReplayFileSchema = z.strictObject({
  version: z.literal(1),
  capacity: z.number().int().positive(),
  entries: z.array(
    z.strictObject({
      promptIndex: z.number().int().min(0),
      batch: z.number().int().min(0),
      meanReward: z.number(),
      sequences: z.array(z.strictObject({ tokens: z.array(z.number().int()), advantage: z.number() })),
    }),
  ),
});

/** The file a checkpoint keeps the buffer in, beside the backend's own. */
export const REPLAY_FILE = "replay.json";

/**
 * ARCANE's prioritized experience replay: a first-in, first-out buffer of the last `capacity`
 * rollout groups; each batch replays, beside its fresh groups, the buffered groups of earlier
 * batches whose mean return lies in the lowest `percentile` of the buffer (lowest first, at most
 * `perBatch`), so training keeps returning to the tasks the manager does worst on.
 */
export class ReplayBuffer {
  #entries: ReplayEntry[] = [];

  constructor(readonly capacity: number) {
    if (!(Number.isInteger(capacity) && capacity > 0))
      throw new TrainingInputError(
        `replay capacity must be a positive integer, got ${capacity} (options.replayCapacity; by default 4 × options.promptsPerBatch)`,
      );
  }

  get entries(): readonly ReplayEntry[] {
    return this.#entries;
  }

  /** Appends a batch's groups; the oldest leave once the buffer is over capacity. */
  add(entries: readonly ReplayEntry[]): void {
    this.#entries = [...this.#entries, ...entries].slice(-this.capacity);
  }

  /** The groups to replay: the lowest-`percentile` of the buffer by mean return, lowest first (ties: older first), at most `max`. */
  select(percentile: number, max: number): ReplayEntry[] {
    if (this.#entries.length === 0 || max <= 0) return [];
    return prioritizedReplay(this.#entries, percentile, (e) => e.meanReward)
      .map((entry, order) => ({ entry, order }))
      .sort((a, b) => a.entry.meanReward - b.entry.meanReward || a.order - b.order)
      .slice(0, max)
      .map(({ entry }) => entry);
  }

  async save(dir: string): Promise<void> {
    const file: z.infer<typeof ReplayFileSchema> = {
      version: 1,
      capacity: this.capacity,
      entries: this.#entries.map((e) => ({
        ...e,
        sequences: e.sequences.map((s) => ({ tokens: [...s.tokens], advantage: s.advantage })),
      })),
    };
    await writeFile(join(dir, REPLAY_FILE), JSON.stringify(file));
  }

  /**
   * The buffer a checkpoint kept; a checkpoint without one (written before replay was on)
   * gives an empty buffer. @throws CheckpointError for a damaged file or a prompt index out of range.
   */
  static async load(dir: string, capacity: number, prompts: number): Promise<ReplayBuffer> {
    const path = join(dir, REPLAY_FILE);
    if (!existsSync(path)) return new ReplayBuffer(capacity);
    const file = await readCheckpointFile(path, ReplayFileSchema);
    const bad = file.entries.findIndex((e) => e.promptIndex >= prompts);
    if (bad !== -1)
      throw new CheckpointError(
        `${path}: entries[${bad}].promptIndex ${file.entries[bad]!.promptIndex} is not one of this run's ${prompts} prompts`,
      );
    const buffer = new ReplayBuffer(capacity);
    buffer.add(file.entries);
    return buffer;
  }
}
