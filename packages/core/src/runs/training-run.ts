import { appendFile, lstat, mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { readInputText } from "../files/read.js";
import { readJsonLines, toJsonLines } from "../records/json-lines.js";
import { formatRubricIssue } from "../rubric/errors.js";
import { formatZodIssues } from "../records/zod-issues.js";
import { RunExistsError, RunFileError, RunSettingsError } from "./errors.js";

/**
 * One run directory for every trainer (GSPO's stages, ARCO's co-evolution):
 *
 * ```
 * <dir>/log.jsonl                    one line per finished unit (epoch, batch, evaluation), the trainer's schema
 * <dir>/checkpoints/<stage>-<nnnnn>/ what the trainable policy saved, plus the trainer's own extras
 * <dir>/checkpoints/latest.json      the newest whole checkpoint: stage, units done, settings, trainer state
 * ```
 *
 * A checkpoint is written first and `latest.json` pointed at it after (renamed into place), so at
 * every moment the pointer names a whole checkpoint; a resume reads the pointer, restores that
 * checkpoint and cuts the log back to the lines the checkpoint vouches for. Everything a resume
 * reads is read through a schema before anything is restored: a damaged file changes nothing.
 */
export const RUN_LOG_FILE = "log.jsonl";
export const RUN_CHECKPOINTS_DIR = "checkpoints";
export const RUN_LATEST_FILE = "latest.json";

/** `checkpoints/latest.json`. */
export const RunPointerSchema = z.strictObject({
  format: z.literal("rubric-run"),
  /** Which trainer wrote the run (`gspo`, `rlxar`): another trainer does not resume it. */
  trainer: z.string().min(1),
  /** The stage the checkpoint belongs to (`sft`, `gspo`, `co-evolution`). */
  stage: z.string().min(1),
  /** Units (epochs, batches) of that stage finished when the checkpoint was taken. */
  done: z.int().min(1),
  /** The checkpoint, relative to the run directory: `checkpoints/<stage>-<nnnnn>`. */
  checkpoint: z.string().regex(/^checkpoints\/[a-z][a-z-]*-\d{5,}$/, "expected checkpoints/<stage>-<nnnnn>"),
  /** The settings the stage ran with; a resume with other settings is refused. */
  settings: z.unknown().optional(),
  /** What the trainer keeps beside the policy (μ's version, …), as it wrote it. */
  state: z.unknown().optional(),
});
export type RunPointer = z.infer<typeof RunPointerSchema>;

/** Where a run keeps its log and checkpoints, and how it treats what is already there. */
export interface RunDirectory {
  readonly dir: string;
  /** Checkpoint every this many units (and always after the last). Default 1. */
  readonly checkpointEvery?: number;
  /**
   * `"latest"` (default): once a new checkpoint is written and `latest.json` names it, the stage's
   * earlier checkpoints are deleted (a resume needs only the latest). `"all"`: keep every one.
   */
  readonly keepCheckpoints?: "latest" | "all";
  /** Continue from `latest.json` when it names a checkpoint of this stage. Default false. */
  readonly resume?: boolean;
}

/** What a trainer tells the run about itself. */
export interface RunSpec<Line> {
  readonly trainer: string;
  readonly stage: string;
  /** Every line of the log, of any stage, reads through this schema. */
  readonly logSchema: z.ZodType<Line>;
  /** Whether a log line belongs to this stage (its lines are cut back on a resume, dropped afresh). */
  readonly ownsLine: (line: Line) => boolean;
  /**
   * This stage's lines a checkpoint of `done` units vouches for, in order (default: the first
   * `done`). Lines written after the checkpoint died with the process that wrote them.
   */
  readonly vouchedFor?: (lines: readonly Line[], done: number) => Line[];
  /** Recorded in every checkpoint's pointer and compared on resume (JSON equality). */
  readonly settings?: unknown;
  /**
   * A fresh start (no `resume`) in a directory that holds this stage's run: `"replace"` (default)
   * drops its lines and checkpoints; `"refuse"` throws a `RunExistsError` before anything changes.
   */
  readonly existing?: "replace" | "refuse";
}

/** The trainer's side of a resume: where the checkpoint is and what was kept beside it. */
export interface ResumePoint {
  readonly checkpoint: string;
  readonly done: number;
  readonly state: unknown;
}

/**
 * An open run directory: its log so far, the point it resumed from, and the two writes a trainer
 * makes (`append` a log line, `commit` a checkpoint).
 *
 * @example
 * const run = await TrainingRun.open({ dir: "runs/x", resume: true }, { trainer: "mine", stage: "train",
 *   logSchema: LineSchema, ownsLine: () => true, settings });
 * if (run.resumed) await policy.load(run.resumed.checkpoint);
 * for (let unit = run.done; unit < units; unit++) {
 *   await run.append(await trainOne(unit));
 *   await run.commit(unit + 1, unit === units - 1, (dir) => policy.save(dir));
 * }
 */
export class TrainingRun<Line> {
  readonly #lines: Line[];

  private constructor(
    readonly directory: RunDirectory,
    readonly spec: RunSpec<Line>,
    lines: Line[],
    /** Where the stage resumed from; undefined on a fresh start. */
    readonly resumed: ResumePoint | undefined,
  ) {
    this.#lines = lines;
  }

  /**
   * Opens `directory` for `spec`'s stage: afresh (this stage's lines dropped, or refused when
   * `existing` says so), or, with `resume`, from the checkpoint `latest.json` names when it is
   * this stage's. Reads the log and the pointer through their schemas first; a damaged line is a
   * `RunFileError` naming the file and line, and settings that differ from the run's a
   * `RunSettingsError`, both before anything is written.
   */
  static async open<Line>(directory: RunDirectory, spec: RunSpec<Line>): Promise<TrainingRun<Line>> {
    const { dir } = directory;
    await mkdir(join(dir, RUN_CHECKPOINTS_DIR), { recursive: true });
    const logFile = join(dir, RUN_LOG_FILE);
    const previous = await readLog(logFile, spec.logSchema);
    const pointer = await readPointer(dir);
    if (pointer !== undefined && pointer.trainer !== spec.trainer) {
      throw new RunFileError(
        join(dir, RUN_CHECKPOINTS_DIR, RUN_LATEST_FILE),
        `trainer: this run was written by ${JSON.stringify(pointer.trainer)}, not ${JSON.stringify(spec.trainer)}`,
      );
    }
    const ours = pointer?.stage === spec.stage ? pointer : undefined;
    const hasRun = ours !== undefined || previous.some(spec.ownsLine);
    if (!directory.resume && hasRun && spec.existing === "refuse") throw new RunExistsError(dir);
    const resumeFrom = directory.resume ? ours : undefined;
    if (resumeFrom !== undefined && spec.settings !== undefined) {
      if (JSON.stringify(resumeFrom.settings) !== JSON.stringify(spec.settings))
        throw new RunSettingsError(join(dir, RUN_CHECKPOINTS_DIR, RUN_LATEST_FILE));
    }
    const vouched = resumeFrom === undefined ? [] : vouchedLines(spec, previous.filter(spec.ownsLine), resumeFrom.done);
    const kept = [...previous.filter((line) => !spec.ownsLine(line)), ...vouched];
    await writeFile(logFile, toJsonLines(kept));
    if (resumeFrom === undefined) {
      // A fresh start: this stage's checkpoints go, and the pointer with them when it named one.
      if (ours !== undefined) await rm(join(dir, RUN_CHECKPOINTS_DIR, RUN_LATEST_FILE), { force: true });
      await removeCheckpoints(dir, spec.stage, undefined);
    }
    const resumed =
      resumeFrom === undefined
        ? undefined
        : { checkpoint: join(dir, resumeFrom.checkpoint), done: resumeFrom.done, state: resumeFrom.state };
    return new TrainingRun(directory, spec, kept, resumed);
  }

  /** Units of this stage already finished: where training goes on (0 on a fresh start). */
  get done(): number {
    return this.resumed?.done ?? 0;
  }

  /** The whole log, of every stage, as it stands. */
  get log(): readonly Line[] {
    return this.#lines;
  }

  /** This stage's lines. */
  get lines(): Line[] {
    return this.#lines.filter(this.spec.ownsLine);
  }

  /** Appends a line to the log, in memory and on disk. */
  async append(line: Line): Promise<void> {
    this.#lines.push(line);
    await appendFile(join(this.directory.dir, RUN_LOG_FILE), toJsonLines([line]));
  }

  /**
   * After `done` units: when a checkpoint is due (every `checkpointEvery` units, and at the
   * `last`), `save` writes the policy (and whatever the trainer keeps) into a new checkpoint
   * directory, `latest.json` is pointed at it with `state`, and then, keeping the latest, the
   * stage's earlier checkpoints are deleted.
   */
  async commit(done: number, last: boolean, save: (dir: string) => Promise<void>, state?: unknown): Promise<boolean> {
    const every = this.directory.checkpointEvery ?? 1;
    if (!last && done % every !== 0) return false;
    const name = `${this.spec.stage}-${String(done).padStart(5, "0")}`;
    const relative = `${RUN_CHECKPOINTS_DIR}/${name}`;
    await save(join(this.directory.dir, relative));
    const pointer: RunPointer = {
      format: "rubric-run",
      trainer: this.spec.trainer,
      stage: this.spec.stage,
      done,
      checkpoint: relative,
      settings: this.spec.settings,
      state,
    };
    const latest = join(this.directory.dir, RUN_CHECKPOINTS_DIR, RUN_LATEST_FILE);
    await writeFile(`${latest}.tmp`, `${JSON.stringify(pointer, null, 2)}\n`);
    await rename(`${latest}.tmp`, latest);
    if ((this.directory.keepCheckpoints ?? "latest") === "latest")
      await removeCheckpoints(this.directory.dir, this.spec.stage, name);
    return true;
  }
}

function vouchedLines<Line>(spec: RunSpec<Line>, lines: Line[], done: number): Line[] {
  return spec.vouchedFor === undefined ? lines.slice(0, done) : spec.vouchedFor(lines, done);
}

/**
 * A file of a run directory as text, undefined when it is not there. Read by core's one reader
 * (`@rubric/core/files`) with links refused: a resumed run directory may come from elsewhere, and a
 * link or FIFO in it must not stand for another file of this machine or hang the resume (a
 * `file.*` error naming the path).
 */
export async function readRunFile(path: string): Promise<string | undefined> {
  // bigint: Node's module loader reuses the last plain stat, and a FIFO's breaks later imports.
  if ((await lstat(path, { bigint: true }).catch(() => undefined)) === undefined) return undefined;
  return readInputText(path, { symlinks: "refuse" });
}

/** A JSON file of a run directory read through `schema` (see {@link readRunFile}); undefined when it is not there. */
export async function readRunJson<S extends z.ZodType>(path: string, schema: S): Promise<z.output<S> | undefined> {
  const text = await readRunFile(path);
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RunFileError(path, `not JSON (${(error as Error).message})`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new RunFileError(path, formatZodIssues(parsed.error, { separator: "; " }));
  return parsed.data;
}

async function readLog<Line>(file: string, schema: z.ZodType<Line>): Promise<Line[]> {
  const text = await readRunFile(file);
  if (text === undefined) return [];
  const { records, issues } = readJsonLines(text, schema, { source: file });
  if (issues.length > 0) throw new RunFileError(file, formatRubricIssue(issues[0]!), { prefixed: true });
  return records.map((record) => record.value as Line);
}

function readPointer(dir: string): Promise<RunPointer | undefined> {
  return readRunJson(join(dir, RUN_CHECKPOINTS_DIR, RUN_LATEST_FILE), RunPointerSchema);
}

/** Deletes `<dir>/checkpoints/<stage>-<n>/` but `keep`; other stages' checkpoints are left alone. */
async function removeCheckpoints(dir: string, stage: string, keep: string | undefined): Promise<void> {
  const root = join(dir, RUN_CHECKPOINTS_DIR);
  const ofStage = new RegExp(`^${stage}-\\d+$`);
  for (const entry of await readdir(root))
    if (entry !== keep && ofStage.test(entry)) await rm(join(root, entry), { recursive: true, force: true });
}
