import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RunFileError } from "@rubric/core/runs";
import { toJsonLines } from "@rubric/core";
import type { GspoLogEntry, TrainingLogEntry } from "@rubric/gspo";
import { afterAll, describe, expect, it } from "vitest";
import { trainingCurvesSpec, trainingCurvesSvg } from "./plot.js";
import { readArcaneTrainingCurves } from "./training-curves.js";

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

async function runDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "arcane-curves-"));
  dirs.push(dir);
  return dir;
}

const sftLine = (epoch: number, loss: number): Extract<TrainingLogEntry, { stage: "sft" }> => ({
  stage: "sft",
  epoch,
  loss,
  seconds: 0.1,
});
const gspoLine = (batch: number, meanReward: number, kl: number): GspoLogEntry => ({
  stage: "gspo",
  batch,
  meanReward,
  loss: -0.01,
  clippedFraction: 0.5,
  kl,
  rollouts: 16,
  rewardSeconds: 0.2,
  policySeconds: 0.1,
  seconds: 0.3,
});

/** A stage's log.jsonl of one seed, as the trainers write it. */
async function writeLog(dir: string, seed: number, stage: string, text: string): Promise<string> {
  const stageDir = join(dir, `seed-${seed}`, stage);
  await mkdir(stageDir, { recursive: true });
  await writeFile(join(stageDir, "log.jsonl"), text);
  return join(stageDir, "log.jsonl");
}

/** The values of the spec's panel whose y axis is `field`, and that axis's title. */
function panel(spec: Record<string, unknown>, field: string): { title: string; values: Record<string, unknown>[] } {
  const panels = spec["hconcat"] as {
    encoding: { y: { field: string; title: string } };
    data: { values: Record<string, unknown>[] };
  }[];
  const found = panels.find((p) => p.encoding.y.field === field);
  if (found === undefined) throw new Error(`no panel of ${field}`);
  return { title: found.encoding.y.title, values: found.data.values };
}

describe("ARCANE training curves", () => {
  it("plots exactly the numbers the seeds' SFT and GSPO logs hold, one line per seed, and nothing of the other stages", async () => {
    const dir = await runDir();
    const logged = {
      1: {
        sft: [sftLine(0, 2.31), sftLine(1, 1.12), sftLine(2, 0.87)],
        gspo: [gspoLine(0, 0.41, 0), gspoLine(1, 0.44, 0.0021)],
      },
      2: {
        sft: [sftLine(0, 2.4), sftLine(1, 1.3), sftLine(2, 0.9)],
        gspo: [gspoLine(0, 0.39, 0), gspoLine(1, 0.47, 0.0035)],
      },
    } as const;
    for (const seed of [1, 2] as const) {
      await writeLog(dir, seed, "sft", toJsonLines(logged[seed].sft));
      await writeLog(dir, seed, "gspo", toJsonLines(logged[seed].gspo));
      // The controls' stages are not the run's training curves.
      await writeLog(dir, seed, "sft-oracle", toJsonLines([sftLine(0, 99)]));
      await writeLog(dir, seed, "gspo-eps-0.2-0.28", toJsonLines([gspoLine(0, 99, 99)]));
    }
    const curves = await readArcaneTrainingCurves(dir, [1, 2, 3]);
    // Seed 3 left no log: left out.
    expect(curves?.seeds.map((s) => s.seed)).toEqual([1, 2]);

    const spec = trainingCurvesSpec(curves!, "GRPO");
    const bySeed = (seed: 1 | 2) => ({
      sft: logged[seed].sft.map((e) => ({ seed: `seed ${seed}`, epoch: e.epoch + 1, loss: e.loss })),
      gspo: logged[seed].gspo.map((e) => ({
        seed: `seed ${seed}`,
        batch: e.batch + 1,
        meanReward: e.meanReward,
        kl: e.kl,
      })),
    });
    expect(panel(spec, "loss")).toEqual({
      title: "SFT loss (NLL per token)",
      values: [...bySeed(1).sft, ...bySeed(2).sft],
    });
    expect(panel(spec, "meanReward")).toEqual({
      title: "GRPO mean reward",
      values: [...bySeed(1).gspo, ...bySeed(2).gspo],
    });
    expect(panel(spec, "kl")).toEqual({
      title: "GRPO KL to the SFT policy",
      values: [...bySeed(1).gspo, ...bySeed(2).gspo],
    });

    const svg = await trainingCurvesSvg(curves!, "GRPO");
    expect(svg.startsWith("<svg")).toBe(true);
    // One line per seed in each of the three panels, and a legend entry per seed.
    expect(svg.match(/class="mark-line/g)?.length).toBe(2 * 3);
    for (const text of [
      "SFT loss (NLL per token)",
      "GRPO mean reward",
      "GRPO KL to the SFT policy",
      "seed 1",
      "seed 2",
    ])
      expect(svg).toContain(text);
  });

  it("a run without GSPO batches has the SFT panel alone; a run without logs has no curves and no error", async () => {
    const dir = await runDir();
    await writeLog(dir, 1, "sft", toJsonLines([sftLine(0, 2)]));
    await writeLog(dir, 1, "gspo", "");
    const curves = await readArcaneTrainingCurves(dir, [1]);
    expect(curves).toEqual({ seeds: [{ seed: 1, sft: [{ epoch: 0, loss: 2 }], gspo: [] }] });
    expect((trainingCurvesSpec(curves!)["hconcat"] as unknown[]).length).toBe(1);
    expect(await readArcaneTrainingCurves(join(dir, "nowhere"), [1])).toBeUndefined();
    expect(await readArcaneTrainingCurves(dir, [7])).toBeUndefined();
  });

  it("a line its schema refuses is a RunFileError naming the file and line; a linked folder is refused", async () => {
    const dir = await runDir();
    await writeLog(dir, 1, "sft", toJsonLines([sftLine(0, 2)]));
    const file = await writeLog(dir, 1, "gspo", `${JSON.stringify(gspoLine(0, 0.4, 0))}\n{"stage":"gspo","batch":1}\n`);
    const error = await readArcaneTrainingCurves(dir, [1]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunFileError);
    expect((error as RunFileError).file).toBe(file);
    expect((error as Error).message).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:line 2: `));

    const linked = await runDir();
    await symlink(join(dir, "seed-1"), join(linked, "seed-1"));
    await expect(readArcaneTrainingCurves(linked, [1])).rejects.toThrow(
      `${join(linked, "seed-1")}: not a directory (a symbolic link is not followed)`,
    );
  });
});
