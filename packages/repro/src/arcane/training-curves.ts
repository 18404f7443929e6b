import { lstat } from "node:fs/promises";
import { join } from "node:path";
import { formatRubricIssue, readJsonLines } from "@rubric/core";
import { RUN_LOG_FILE, RunFileError, readRunFile } from "@rubric/core/runs";
import { TrainingLogEntrySchema, type TrainingLogEntry } from "@rubric/gspo";

/** How one seed trained, as its logs recorded it. */
export interface ArcaneSeedCurves {
  readonly seed: number;
  /** Stage I, per epoch (from 0): the epoch's mean NLL per token. */
  readonly sft: readonly { readonly epoch: number; readonly loss: number }[];
  /** Stage II, per batch (from 0): the batch's mean reward (U* minus costs) and k3 KL to the SFT policy. */
  readonly gspo: readonly { readonly batch: number; readonly meanReward: number; readonly kl: number }[];
}

/** The training curves of an ARCANE run's seeds, those with a log. */
export interface ArcaneTrainingCurves {
  readonly seeds: readonly ArcaneSeedCurves[];
}

/**
 * An ARCANE run's training curves from the logs it wrote under `runDir` (`ArcaneRunOptions.runDir`;
 * `<out>/runs` for `rubric repro arcane`): each seed's `seed-<n>/sft/log.jsonl` and
 * `seed-<n>/gspo/log.jsonl`, read through `@rubric/gspo`'s `TrainingLogEntrySchema`. A seed or
 * stage without a log is left out, and undefined comes back when no seed has one (a run written
 * without `runDir`): there is nothing to draw, and that is no error. A line the schema refuses is
 * a `RunFileError` naming the file and line. The run directory may come from someone else, so
 * its files and the folders to them are read only as they are, never through a symbolic link.
 *
 * @example
 * const curves = await readArcaneTrainingCurves("runs/arcane-quick/runs", table.training.map((t) => t.seed));
 * if (curves !== undefined) await writeFile("training.svg", await trainingCurvesSvg(curves));
 */
export async function readArcaneTrainingCurves(
  runDir: string,
  seeds: readonly number[],
): Promise<ArcaneTrainingCurves | undefined> {
  const read: ArcaneSeedCurves[] = [];
  for (const seed of seeds) {
    const sft = await readStageLog(runDir, seed, "sft");
    const gspo = await readStageLog(runDir, seed, "gspo");
    if (sft.length === 0 && gspo.length === 0) continue;
    read.push({
      seed,
      sft: sft.flatMap((e) => (e.stage === "sft" ? [{ epoch: e.epoch, loss: e.loss }] : [])),
      gspo: gspo.flatMap((e) => (e.stage === "gspo" ? [{ batch: e.batch, meanReward: e.meanReward, kl: e.kl }] : [])),
    });
  }
  return read.length === 0 ? undefined : { seeds: read };
}

/** One stage's log of one seed; none when its folder or log is not there. */
async function readStageLog(runDir: string, seed: number, stage: "sft" | "gspo"): Promise<TrainingLogEntry[]> {
  let dir = "";
  for (const part of [runDir, `seed-${seed}`, stage]) {
    dir = dir === "" ? part : join(dir, part);
    // A bigint stat, as readRunFile's: a number stat of a FIFO confuses Node 20's module loader.
    const stat = await lstat(dir, { bigint: true }).catch(() => undefined);
    if (stat === undefined) return [];
    if (!stat.isDirectory()) throw new RunFileError(dir, "not a directory (a symbolic link is not followed)");
  }
  const file = join(dir, RUN_LOG_FILE);
  const text = await readRunFile(file);
  if (text === undefined) return [];
  const { records, issues } = readJsonLines(text, TrainingLogEntrySchema, { source: file });
  if (issues.length > 0) throw new RunFileError(file, formatRubricIssue(issues[0]!), { prefixed: true });
  return records.map((r) => r.value);
}
