import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { RunExistsError, RunFileError, RunSettingsError } from "./errors.js";
import { type RunDirectory, type RunSpec, TrainingRun } from "./training-run.js";

const LineSchema = z.discriminatedUnion("stage", [
  z.strictObject({ stage: z.literal("warm"), unit: z.int().min(0), value: z.number() }),
  z.strictObject({ stage: z.literal("train"), unit: z.int().min(0), value: z.number() }),
]);
type Line = z.infer<typeof LineSchema>;

const spec = (stage: "warm" | "train", extra: Partial<RunSpec<Line>> = {}): RunSpec<Line> => ({
  trainer: "toy",
  stage,
  logSchema: LineSchema,
  ownsLine: (line) => line.stage === stage,
  ...extra,
});

/** A toy trainable: one number, saved as a file. */
const counter = () => {
  let value = 0;
  return {
    step: () => ++value,
    get value() {
      return value;
    },
    save: async (dir: string) => {
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, "value.json"), JSON.stringify(value));
    },
    load: async (dir: string) => {
      value = JSON.parse(await readFile(join(dir, "value.json"), "utf8")) as number;
    },
  };
};

/** Trains `units` units of `stage`, stopping after `stopAfter` (a crash) if given. */
async function train(directory: RunDirectory, stage: "warm" | "train", units: number, stopAfter?: number) {
  const model = counter();
  const run = await TrainingRun.open(directory, spec(stage, { settings: { units } }));
  if (run.resumed) await model.load(run.resumed.checkpoint);
  for (let unit = run.done; unit < units; unit++) {
    if (stopAfter !== undefined && unit === stopAfter) return { run, model };
    await run.append({ stage, unit, value: model.step() });
    await run.commit(unit + 1, unit === units - 1, (dir) => model.save(dir), { after: unit });
  }
  return { run, model };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "rubric-run-"));
});


describe("TrainingRun", () => {
  it("resumes a stopped run to the same log and state as an uninterrupted one, one checkpoint kept", async () => {
    const whole = await mkdtemp(join(tmpdir(), "rubric-run-whole-"));
    const uninterrupted = await train({ dir: whole }, "train", 5);

    await train({ dir, checkpointEvery: 2 }, "train", 5, 3); // stops after 3 units, checkpoint at 2
    // The line of unit 2 was written after the last checkpoint: a resume drops it and redoes the unit.
    expect((await readFile(join(dir, "log.jsonl"), "utf8")).trim().split("\n")).toHaveLength(3);
    const resumed = await train({ dir, checkpointEvery: 2, resume: true }, "train", 5);
    expect(resumed.run.resumed).toMatchObject({ done: 2, state: { after: 1 } });
    expect(resumed.model.value).toBe(uninterrupted.model.value);
    expect(await readFile(join(dir, "log.jsonl"), "utf8")).toBe(await readFile(join(whole, "log.jsonl"), "utf8"));
    expect((await readdir(join(dir, "checkpoints"))).sort()).toEqual(["latest.json", "train-00005"]);
    expect(JSON.parse(await readFile(join(dir, "checkpoints", "latest.json"), "utf8"))).toMatchObject({
      format: "rubric-run",
      trainer: "toy",
      stage: "train",
      done: 5,
      checkpoint: "checkpoints/train-00005",
      settings: { units: 5 },
      state: { after: 4 },
    });
  });

  it("keeps another stage's lines and checkpoints, and every checkpoint with keepCheckpoints all", async () => {
    await train({ dir }, "warm", 2);
    await train({ dir, keepCheckpoints: "all" }, "train", 3);
    expect((await readdir(join(dir, "checkpoints"))).sort()).toEqual([
      "latest.json",
      "train-00001",
      "train-00002",
      "train-00003",
      "warm-00002",
    ]);
    const lines = (await readFile(join(dir, "log.jsonl"), "utf8")).trim().split("\n");
    expect(lines.map((l) => (JSON.parse(l) as Line).stage)).toEqual(["warm", "warm", "train", "train", "train"]);
    // A fresh start of one stage replaces that stage alone.
    await train({ dir }, "train", 1);
    expect((await readdir(join(dir, "checkpoints"))).sort()).toEqual(["latest.json", "train-00001", "warm-00002"]);
  });

  it("refuses, before changing anything: a damaged log line, a foreign or damaged pointer, other settings, a symlinked log", async () => {
    await train({ dir }, "train", 2);
    const log = await readFile(join(dir, "log.jsonl"), "utf8");
    const latest = join(dir, "checkpoints", "latest.json");
    const pointer = await readFile(latest, "utf8");

    await writeFile(join(dir, "log.jsonl"), `${log}{"stage":"train","unit":"two"}\n`);
    const damaged = await TrainingRun.open({ dir, resume: true }, spec("train")).catch((e: unknown) => e);
    expect(damaged).toBeInstanceOf(RunFileError);
    expect((damaged as RunFileError).message).toMatch(/log\.jsonl:line 3: unit/);
    expect((damaged as RunFileError).code).toBe("run.file");
    expect(await readFile(join(dir, "log.jsonl"), "utf8")).toContain('"unit":"two"'); // untouched
    await writeFile(join(dir, "log.jsonl"), log);

    await writeFile(latest, pointer.replace('"toy"', '"other"'));
    await expect(TrainingRun.open({ dir, resume: true }, spec("train"))).rejects.toThrow(
      /latest\.json: trainer: this run was written by "other"/,
    );
    await writeFile(latest, pointer.replace('"done": 2', '"done": 0'));
    await expect(TrainingRun.open({ dir, resume: true }, spec("train"))).rejects.toThrow(/latest\.json: done: /);
    await writeFile(latest, pointer);

    await expect(
      TrainingRun.open({ dir, resume: true }, spec("train", { settings: { units: 9 } })),
    ).rejects.toBeInstanceOf(RunSettingsError);
    await expect(TrainingRun.open({ dir }, spec("train", { existing: "refuse" }))).rejects.toBeInstanceOf(
      RunExistsError,
    );

    const secret = join(dir, "secret.txt");
    await writeFile(secret, "sk-x\n");
    await writeFile(join(dir, "log.jsonl.bak"), log);
    await rm(join(dir, "log.jsonl"));
    await symlink(secret, join(dir, "log.jsonl"));
    await expect(TrainingRun.open({ dir, resume: true }, spec("train"))).rejects.toMatchObject({
      code: "file.symlink",
      message: expect.stringContaining("log.jsonl"),
    });
  });
});
