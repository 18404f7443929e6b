import { existsSync, type FSWatcher, watch } from "node:fs";
import { readdir } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { ModelClosedError, ModelCorruptError } from "../errors.js";
import type { StepPromptOptions } from "../step/prompt.js";
import type { Step } from "../step/step.js";
import {
  type GeneratedCriteria,
  type GenerateOptions,
  generateCriteria,
  type RatedStep,
  rateSteps,
  type StepScores,
  scoreSteps,
} from "./engine.js";
import { MANIFEST_FILE, type ModelManifest } from "./manifest.js";
import { type OnnxOptions, type OnnxVersion, openOnnxVersion } from "./onnx-engine.js";
import { onnxRuntime } from "./runtime.js";

/** What happened to a model directory being watched or reloaded. */
export type ModelEvent =
  | { readonly type: "reloaded"; readonly from: number; readonly to: number; readonly ms: number }
  /** A newer export could not be loaded; the old one stays in service. */
  | { readonly type: "reload-failed"; readonly error: Error };

export interface RubricModelOptions extends OnnxOptions {
  /** Watch the model root and reload when a newer version appears (off by default). */
  readonly watch?: boolean;
  /** Quiet time after the last file event before a watched reload, in ms (default 100). */
  readonly watchDebounceMs?: number;
  /** Reloads and failed reloads; by default a failed watched reload is written to stderr. */
  readonly onEvent?: (event: ModelEvent) => void;
}

/** What `reload()` did. */
export interface ReloadResult {
  readonly changed: boolean;
  readonly version: number;
}

/** A whole trajectory's criteria and scores, and Σ_t s_t: the quantity μ is trained to match to R. */
export interface TrajectoryScores {
  readonly steps: RatedStep[];
  readonly total: number;
  /** The export that produced every number here. */
  readonly modelVersion: number;
}

const VERSION_NAME = /^v(\d+)$/;

interface Held {
  readonly engine: OnnxVersion;
  users: number;
  retired: boolean;
}

/**
 * ARCO's rubric model μ, served by onnxruntime-node from a model directory (the contract is in
 * the package README). Each call runs on one export from start to end: a reload swaps in a newer
 * export for the calls that start after it, the calls in flight finish on the old sessions, and
 * the old sessions are released when the last of them ends. A partial or damaged newer export is
 * refused with a `ModelCorruptError` and the old one stays in service.
 *
 * @example
 * const mu = await RubricModel.load("models/mu"); // the newest vNNNN under it
 * const [rated] = await mu.rateSteps([{ task: "Who wrote X?", history: [], budgetLeft: 3, action: "Search[X author]" }]);
 * rated.criteria; // K criteria μ wrote; rated.scores: d_t; rated.s: their mean
 * await mu.close();
 */
export class RubricModel {
  #current: Held;
  #closed = false;
  #reloading: Promise<ReloadResult> | undefined;
  #watcher: FSWatcher | undefined;
  readonly #exportWatchers = new Map<string, FSWatcher>();
  #timer: ReturnType<typeof setTimeout> | undefined;

  private constructor(
    engine: OnnxVersion,
    /** The directory holding `vNNNN` exports, or undefined when loaded from a lone export. */
    readonly root: string | undefined,
    private readonly options: RubricModelOptions,
  ) {
    this.#current = { engine, users: 0, retired: false };
    if (options.watch && root !== undefined) this.#watch(root);
  }

  /**
   * Loads a model: `path` is a model root (the newest `vNNNN` export under it is loaded, and
   * `reload()` looks there for newer ones) or one export directory holding `manifest.json` (an
   * export named `vNNNN` makes its parent the root).
   */
  static async load(path: string, options: RubricModelOptions = {}): Promise<RubricModel> {
    // The runtime first: a missing onnxruntime-node is said at once, before any export is hashed.
    await onnxRuntime();
    const { directory, root } = await findExport(path);
    return new RubricModel(await openVersion(directory, options), root, options);
  }

  /** The export in service. */
  get directory(): string {
    return this.#current.engine.directory;
  }
  get manifest(): ModelManifest {
    return this.#current.engine.manifest;
  }
  /** The export number in service (`manifest.exportVersion`). */
  get version(): number {
    return this.manifest.exportVersion;
  }
  get k(): number {
    return this.manifest.k;
  }

  /** The criteria μ writes for each step, batched across steps (greedy unless `decoding` samples). */
  generateCriteria(steps: readonly Step[], options: GenerateOptions = {}): Promise<GeneratedCriteria[]> {
    return this.#use((engine) => generateCriteria(engine, steps, options));
  }

  /** μ's scores d_t and s_t of given criteria (K per step, or none for a K = 1 model without a rubric). */
  scoreSteps(
    steps: readonly Step[],
    criteria: readonly (readonly string[])[],
    options: StepPromptOptions = {},
  ): Promise<StepScores[]> {
    return this.#use((engine) => scoreSteps(engine, steps, criteria, options));
  }

  /** Criteria, then scores of them, for every step, on one export. */
  rateSteps(steps: readonly Step[], options: GenerateOptions = {}): Promise<RatedStep[]> {
    return this.#use((engine) => rateSteps(engine, steps, options));
  }

  /** A trajectory's steps rated, and Σ_t s_t. */
  scoreTrajectory(steps: readonly Step[], options: GenerateOptions = {}): Promise<TrajectoryScores> {
    return this.#use(async (engine) => {
      const rated = await rateSteps(engine, steps, options);
      return {
        steps: rated,
        total: rated.reduce((sum, step) => sum + step.s, 0),
        modelVersion: engine.manifest.exportVersion,
      };
    });
  }

  /**
   * Swaps in the newest export under the root when it is newer than the one in service. A newer
   * export that is partial or damaged throws (`ModelCorruptError`, `ModelFormatError`) and the
   * current one stays. Concurrent calls share one reload.
   */
  reload(): Promise<ReloadResult> {
    if (this.#closed) return Promise.reject(new ModelClosedError(this.directory));
    this.#reloading ??= this.#reload().finally(() => {
      this.#reloading = undefined;
    });
    return this.#reloading;
  }

  /** Stops watching and releases the sessions once the calls in flight have finished. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#watcher?.close();
    for (const directory of [...this.#exportWatchers.keys()]) this.#forget(directory);
    clearTimeout(this.#timer);
    await this.#reloading?.catch(() => undefined);
    await this.#retire(this.#current);
  }

  async #reload(): Promise<ReloadResult> {
    const current = this.#current;
    const started = performance.now();
    if (this.root === undefined) return { changed: false, version: this.version };
    const newest = await newestExport(this.root);
    if (newest === undefined || versionOf(newest) <= this.version) return { changed: false, version: this.version };
    const engine = await openVersion(newest, this.options);
    if (this.#closed) {
      await engine.close();
      throw new ModelClosedError(this.directory);
    }
    this.#current = { engine, users: 0, retired: false };
    await this.#retire(current);
    this.options.onEvent?.({
      type: "reloaded",
      from: current.engine.manifest.exportVersion,
      to: engine.manifest.exportVersion,
      ms: performance.now() - started,
    });
    return { changed: true, version: engine.manifest.exportVersion };
  }

  async #use<T>(work: (engine: OnnxVersion) => Promise<T>): Promise<T> {
    if (this.#closed) throw new ModelClosedError(this.directory);
    const held = this.#current;
    held.users++;
    try {
      return await work(held.engine);
    } finally {
      held.users--;
      if (held.retired && held.users === 0) await held.engine.close();
    }
  }

  async #retire(held: Held): Promise<void> {
    held.retired = true;
    if (held.users === 0) await held.engine.close();
  }

  #watch(root: string): void {
    const onEvent =
      this.options.onEvent ??
      ((event: ModelEvent) => {
        if (event.type === "reload-failed")
          process.stderr.write(`rubric μ: kept version ${this.version}: ${event.error.message}\n`);
      });
    const schedule = () => {
      clearTimeout(this.#timer);
      this.#timer = setTimeout(() => {
        this.reload()
          .then(() => this.#forgetExportsUpTo(this.version))
          .catch((error: unknown) => {
            if (!(error instanceof ModelClosedError)) onEvent({ type: "reload-failed", error: error as Error });
          });
      }, this.options.watchDebounceMs ?? 100);
      this.#timer.unref();
    };
    // The root's watch sees a new `vNNNN` directory appear, not the files written into it later:
    // an export copied in file by file was tried half-copied, failed once, and never heard of
    // again. So each newer export directory is watched too until it is served, and every write
    // inside restarts the quiet time. (Not `recursive: true`: Node 20's recursive watch on Linux
    // throws an uncaught ENOENT when a directory, like the sidecar's staging one, vanishes as it
    // is scanned.)
    this.#watcher = watch(root, (_event, name) => {
      // An event on the name means it was made, renamed or removed: a watch already held may
      // follow a directory renamed away, so it is dropped and the name watched anew.
      if (typeof name === "string" && VERSION_NAME.test(name) && versionOf(name) > this.version) {
        this.#forget(join(root, name));
        this.#watchExport(join(root, name), schedule);
      }
      schedule();
    });
    this.#watcher.on("error", (error) => onEvent({ type: "reload-failed", error }));
    this.#watcher.unref();
  }

  /** Watches one newer export directory for the files still being written into it. */
  #watchExport(directory: string, onChange: () => void): void {
    if (this.#closed || this.#exportWatchers.has(directory)) return;
    let watcher: FSWatcher;
    try {
      watcher = watch(directory, onChange);
    } catch {
      return; // gone again (renamed or removed): the root's watch reports what comes next
    }
    watcher.on("error", () => this.#forget(directory));
    watcher.unref();
    this.#exportWatchers.set(directory, watcher);
  }

  #forgetExportsUpTo(version: number): void {
    for (const directory of this.#exportWatchers.keys()) if (versionOf(directory) <= version) this.#forget(directory);
  }

  #forget(directory: string): void {
    this.#exportWatchers.get(directory)?.close();
    this.#exportWatchers.delete(directory);
  }
}

/** Where a model path leads: the export to open, and the root that holds newer ones (none for a lone export). */
export interface ModelExportLocation {
  readonly directory: string;
  readonly root: string | undefined;
}

/**
 * The export a model path names, as `RubricModel.load` reads it: a directory holding
 * `manifest.json` is that export (and its parent is the root when it is named `vNNNN`); any other
 * directory is a root, whose newest `vNNNN` export is taken. Other backends (the sidecar's torch
 * one) use it to serve the same export. Nothing is verified here: `readModel` does that.
 */
export async function findExport(path: string): Promise<ModelExportLocation> {
  if (existsSync(join(path, MANIFEST_FILE)))
    return { directory: path, root: VERSION_NAME.test(basename(path)) ? dirname(path) : undefined };
  const directory = await newestExport(path);
  if (directory === undefined)
    throw new ModelCorruptError(path, MANIFEST_FILE, "no manifest here and no vNNNN export under it");
  return { directory, root: path };
}

/** Opens an export, refusing one whose `vNNNN` name and manifest disagree (a copied or renamed export). */
async function openVersion(directory: string, options: OnnxOptions): Promise<OnnxVersion> {
  const engine = await openOnnxVersion(directory, options);
  const named = VERSION_NAME.exec(basename(directory));
  if (named && Number(named[1]) !== engine.manifest.exportVersion) {
    await engine.close();
    throw new ModelCorruptError(
      directory,
      MANIFEST_FILE,
      `exportVersion ${engine.manifest.exportVersion} is not the directory's version ${Number(named[1])}`,
    );
  }
  return engine;
}

const versionOf = (directory: string) => Number(VERSION_NAME.exec(basename(directory))?.[1] ?? 0);

/** The highest-numbered `vNNNN` directory under `root` (staging directories start with a dot and never match). */
async function newestExport(root: string): Promise<string | undefined> {
  let names: string[];
  try {
    names = (await readdir(root, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch (error) {
    throw new ModelCorruptError(
      root,
      ".",
      `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
  const versions = names.filter((n) => VERSION_NAME.test(n)).sort((a, b) => versionOf(b) - versionOf(a));
  return versions.length === 0 ? undefined : join(root, versions[0]!);
}
