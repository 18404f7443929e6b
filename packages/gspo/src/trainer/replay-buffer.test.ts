import { execFileSync } from "node:child_process";
import { mkdtemp, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InputFileNotRegularError, InputFileSymlinkError } from "@rubric/core/files";
import { afterAll, describe, expect, it } from "vitest";
import { CheckpointError, TrainingInputError } from "../errors.js";
import { REPLAY_FILE, ReplayBuffer, type ReplayEntry } from "./replay-buffer.js";

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

const entry = (batch: number, promptIndex: number, meanReward: number): ReplayEntry => ({
  batch,
  promptIndex,
  meanReward,
  sequences: [{ tokens: [promptIndex, batch], advantage: meanReward - 0.5 }],
});

describe("ReplayBuffer", () => {
  it("keeps the last `capacity` groups, oldest out first", () => {
    const buffer = new ReplayBuffer(3);
    buffer.add([entry(0, 0, 0.1), entry(0, 1, 0.2)]);
    buffer.add([entry(1, 2, 0.3), entry(1, 3, 0.4)]);
    expect(buffer.entries.map((e) => e.promptIndex)).toEqual([1, 2, 3]);
    expect(() => new ReplayBuffer(0)).toThrow(TrainingInputError);
    expect(() => new ReplayBuffer(0)).toThrow(
      expect.objectContaining({
        code: "training.input",
        message: expect.stringMatching(/^replay capacity .*, got 0 /),
      }),
    );
  });

  it("replays the buffer's lowest-return percentile, lowest first, at most `max`", () => {
    const buffer = new ReplayBuffer(10);
    const rewards = [0.9, 0.2, 0.5, 0.1, 0.7, 0.3, 0.8, 0.6, 0.4, 0.0];
    buffer.add(rewards.map((r, i) => entry(i, i, r)));
    // The 30th percentile of the ten returns is 0.27: 0.0, 0.1 and 0.2 lie at or below it.
    expect(buffer.select(30, 10).map((e) => e.meanReward)).toEqual([0.0, 0.1, 0.2]);
    expect(buffer.select(30, 2).map((e) => e.meanReward)).toEqual([0.0, 0.1]);
    expect(buffer.select(100, 4).map((e) => e.meanReward)).toEqual([0.0, 0.1, 0.2, 0.3]);
    expect(new ReplayBuffer(4).select(30, 2)).toEqual([]);
  });

  it("round-trips through a checkpoint directory, and names a damaged file or a foreign prompt", async () => {
    const dir = await mkdtemp(join(tmpdir(), "replay-"));
    dirs.push(dir);
    const buffer = new ReplayBuffer(4);
    buffer.add([entry(0, 1, 0.25), entry(1, 2, 0.75)]);
    await buffer.save(dir);
    expect((await ReplayBuffer.load(dir, 4, 3)).entries).toEqual(buffer.entries);
    // A checkpoint from before the buffer: empty.
    expect((await ReplayBuffer.load(join(dir, "none"), 4, 3)).entries).toEqual([]);
    await expect(ReplayBuffer.load(dir, 4, 2)).rejects.toThrow(
      /replay\.json: entries\[1\]\.promptIndex 2 is not one of this run's 2 prompts/,
    );
    await writeFile(join(dir, REPLAY_FILE), JSON.stringify({ version: 1, capacity: 4, entries: [{ batch: 0 }] }));
    await expect(ReplayBuffer.load(dir, 4, 3)).rejects.toBeInstanceOf(CheckpointError);
    await writeFile(join(dir, REPLAY_FILE), "{");
    await expect(ReplayBuffer.load(dir, 4, 3)).rejects.toThrow(/replay\.json: .*JSON/);
  });

  it("reads a checkpoint's file only as a regular file, never through a link or from a FIFO", async () => {
    const dir = await mkdtemp(join(tmpdir(), "replay-"));
    dirs.push(dir);
    const buffer = new ReplayBuffer(4);
    buffer.add([entry(0, 1, 0.25)]);
    await buffer.save(dir);
    // A checkpoint directory may come from elsewhere: a link there could stand for any file here.
    await rename(join(dir, REPLAY_FILE), join(dir, "elsewhere.json"));
    await symlink(join(dir, "elsewhere.json"), join(dir, REPLAY_FILE));
    await expect(ReplayBuffer.load(dir, 4, 3)).rejects.toThrow(InputFileSymlinkError);
    await rm(join(dir, REPLAY_FILE));
    execFileSync("mkfifo", [join(dir, REPLAY_FILE)]);
    await expect(ReplayBuffer.load(dir, 4, 3)).rejects.toThrow(InputFileNotRegularError);
  }, 10_000);
});
