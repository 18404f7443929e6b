import {
  annotationOf,
  ArcoInputError,
  criteriaIds,
  findExport,
  fitPrompt,
  inferredBudget,
  type MuEngine,
  muSftExamples,
  type RatedStep,
  rateSteps,
  readModel,
  type StepPromptSettings,
  stepsOf,
  type Trajectory,
  type TrajectoryAnnotation,
  type TrajectoryRecord,
  trajectoryOf,
  withPromptSettings,
} from "@rubric/arco-heads";
import { createRng, definedFields, rocAuc, shuffle } from "@rubric/core";
import type { SidecarClient } from "@rubric/sidecar";
import { RlxarInputError } from "../errors.js";
import { type MuExport, type SftEpoch, type SftRow, exportMu, loadSidecarMu, sftRows } from "./sidecar-mu.js";

/** How {@link trainMu} trains. The defaults are the ones `rubric repro arco` co-evolves its small μ with. */
export interface TrainMuOptions {
  /** Passes of the decomposition loss over the training runs (default 3). */
  readonly epochs?: number;
  /** Runs per `mu.step` (default 8). */
  readonly batchSize?: number;
  /** The backbone's learning rate (default 1e-4; ARCO's LoRA μ uses 1e-5). */
  readonly learningRate?: number;
  /** The score head's (default 1e-3). */
  readonly headLearningRate?: number;
  /** β of KL(μ_ref ‖ μ) on the criteria tokens, μ_ref the μ training starts from (default 0.05, ARCO's). */
  readonly beta?: number;
  /** Seeds the order of the runs and the validation split (default 0). */
  readonly seed?: number;
  /**
   * The share of runs held out (seeded) and scored before and after training, so the result says
   * whether μ's Σ_t s_t came to follow the outcome on runs it did not train on (default 0.2; 0 = none).
   */
  readonly validation?: number;
  /** The budget of runs whose log gives none (default: the longest run's step count). */
  readonly budget?: number;
  /** The step prompt's settings: the model's own, with these fields replaced; kept in the new export. */
  readonly prompt?: StepPromptSettings;
  /**
   * A teacher's warm-up before the decomposition loss: μ-SFT (CE on the criteria + MSE on the
   * scores) on the runs that carry criteria and scores, and on those `annotator` annotates.
   */
  readonly sft?: {
    readonly epochs?: number;
    readonly learningRate?: number;
    readonly headLearningRate?: number;
  };
  /**
   * Annotates the training runs that carry no annotation, one call per run (arco-heads'
   * `annotateTrajectory` with any `LanguageModel`): the LLM teacher of ARCO's warm-up.
   */
  readonly annotator?: (
    trajectory: Trajectory,
    /** μ's K and the step-prompt settings training uses, for the annotator to write for. */
    context: { readonly k: number; readonly prompt: StepPromptSettings },
  ) => Promise<TrajectoryAnnotation>;
  readonly onProgress?: (event: TrainMuEvent) => void;
}

/** What {@link trainMu} reports while it works. */
export type TrainMuEvent =
  | { readonly type: "annotate"; readonly done: number; readonly total: number }
  | { readonly type: "sft"; readonly epoch: SftEpoch; readonly epochs: number }
  | {
      readonly type: "batch";
      readonly epoch: number;
      readonly epochs: number;
      readonly batch: number;
      readonly batches: number;
      /** The decomposition loss of this batch, and mean |Σ_t s_t − R| before the step. */
      readonly loss: number;
      readonly gap: number;
      readonly kl: number;
    }
  | { readonly type: "validate"; readonly when: "before" | "after"; readonly done: number; readonly total: number };

/** How well μ's step scores decompose the outcome on a set of runs. */
export interface DecompositionFit {
  readonly runs: number;
  /** Runs with R ≥ 0.5: with few of either class, the AUC is noise. */
  readonly successes: number;
  /** Mean |Σ_t s_t − R|: 0 when every run's step scores sum to its outcome. */
  readonly gap: number;
  /** ROC AUC of Σ_t s_t for "the run succeeded" (R ≥ 0.5); absent when one class is missing. */
  readonly auc?: number;
}

/** One pass of the decomposition loss. */
export interface TrainMuEpoch {
  readonly epoch: number;
  readonly loss: number;
  /** Mean |Σ_t s_t − R| over the pass's batches, each measured before its step. */
  readonly gap: number;
  readonly kl: number;
}

export interface TrainedMu extends MuExport {
  /** The export training started from. */
  readonly from: string;
  readonly trainRuns: number;
  /** Runs the warm-up trained on (annotated, multi-step, decomposing R), and steps it saw. */
  readonly sft?: { readonly runs: number; readonly steps: number; readonly epochs: readonly SftEpoch[] };
  readonly epochs: readonly TrainMuEpoch[];
  /** The held-out runs before and after training. */
  readonly validation?: { readonly before: DecompositionFit; readonly after: DecompositionFit };
  /** The prompt settings the new export keeps. */
  readonly prompt: StepPromptSettings;
}

/**
 * Trains μ on an agent's own logged runs and writes the result as a new export under `out`:
 * ARCO's μ update, which needs only runs and their outcomes. Each batch's steps are rated by μ as
 * it is (criteria written greedily, then scored), and one `mu.step` takes the class-balanced
 * decomposition loss Σ_τ w_τ(Σ_t s_t − R_τ)² + β·KL(μ_ref‖μ), μ_ref being the μ training starts
 * from (after the warm-up, when there is one). Runs that carry a teacher's criteria and scores,
 * or that `annotator` annotates, first warm μ up by μ-SFT, as ARCO's warm-up does.
 *
 * `model` is an export or a model root (its newest export); `out` may be the same root (the new
 * export is the next version there) or a new one. Nothing is written until training is done, and
 * every input is checked before the sidecar is touched.
 *
 * @example
 * const client = await SidecarClient.start();
 * const trained = await trainMu(client, "models/mu", readTrajectories(text, "runs.jsonl"), "models/mu");
 * trained.validation?.after.auc; // Σ_t s_t's AUC for success on held-out runs
 */
export async function trainMu(
  client: SidecarClient,
  model: string,
  records: readonly TrajectoryRecord[],
  out: string,
  options: TrainMuOptions = {},
): Promise<TrainedMu> {
  const epochs = positiveInteger(options.epochs ?? 3, "epochs", 0);
  const batchSize = positiveInteger(options.batchSize ?? 8, "batchSize", 1);
  const validationShare = options.validation ?? 0.2;
  if (!(validationShare >= 0 && validationShare < 1))
    throw new RlxarInputError("validation", `expected a share in [0, 1), got ${validationShare}`);
  if (records.length === 0) throw new RlxarInputError("trajectories", "no runs to train on");
  const { directory } = await findExport(model);
  const { manifest, tokenizer } = await readModel(directory);
  const k = manifest.k;
  const prompt = promptSettings(manifest.prompt, options.prompt);
  const budget = options.budget ?? inferredBudget(records);
  // Every run is converted (and its annotation checked against K) before anything runs.
  const runs = records.map((record) => ({
    record,
    trajectory: trajectoryOf(record, budget),
    annotation: annotationOf(record, k),
  }));
  // A step whose prompt cannot fit the model even with no history is refused now, by run and
  // step, rather than as a flat index halfway through training.
  const promptBudget = manifest.maxLengths.sequence - manifest.maxLengths.criteria;
  for (const { trajectory } of runs)
    stepsOf(trajectory).forEach((step, t) =>
      fitPrompt(tokenizer, step, promptBudget, { ...prompt, k }, `${trajectory.id}.steps[${t}]`),
    );
  const rng = createRng(options.seed ?? 0).fork("mu-train");
  const held = Math.round(runs.length * validationShare);
  const order = shuffle(runs, rng.fork("validation"));
  const validation = order.slice(0, held);
  const training = order.slice(held);
  if (training.length === 0)
    throw new RlxarInputError("validation", `holds out all ${runs.length} runs: none left to train on`);

  // A whole batch of runs' steps per sidecar call: criteria are written token by token, so the
  // calls, not the rows, are what training waits on.
  const { mu, engine } = await loadSidecarMu(client, directory, { batch: 64 });
  const fit = async (when: "before" | "after") =>
    validation.length === 0
      ? undefined
      : decompositionFit(
          engine,
          validation.map((run) => run.trajectory),
          prompt,
          (done, total) => options.onProgress?.({ type: "validate", when, done, total }),
        );
  const before = await fit("before");

  // The warm-up: annotations in the file, then the annotator's, on the training runs only.
  const annotations: TrajectoryAnnotation[] = [];
  const annotated: Trajectory[] = [];
  const unannotated = training.filter((run) => run.annotation === undefined);
  let annotatedSoFar = 0;
  for (const run of training) {
    let annotation = run.annotation;
    if (annotation === undefined && options.annotator !== undefined) {
      annotation = await options.annotator(run.trajectory, { k, prompt });
      options.onProgress?.({ type: "annotate", done: ++annotatedSoFar, total: unannotated.length });
    }
    if (annotation === undefined) continue;
    annotations.push(annotation);
    annotated.push(run.trajectory);
  }
  let sft: TrainedMu["sft"];
  if (annotations.length > 0) {
    const rows: SftRow[] = [];
    let sftRuns = 0;
    annotated.forEach((trajectory, i) => {
      const { examples } = muSftExamples(trajectory, annotations[i]!, { ...prompt });
      if (examples.length > 0) sftRuns++;
      const steps = stepsOf(trajectory);
      for (const example of examples) {
        // Fitted as inference fits a prompt (oldest turns dropped), so μ learns what it will read.
        const ids = fitPrompt(
          tokenizer,
          steps[example.step]!,
          promptBudget,
          { ...prompt, k },
          `${trajectory.id}.steps[${example.step}]`,
        ).ids;
        rows.push({ prompt: ids, criteria: criteriaIds(tokenizer, example.criteria, true), scores: example.scores });
      }
    });
    const sftEpochs = options.sft?.epochs ?? 4;
    const done =
      rows.length === 0
        ? []
        : await sftRows(mu, rows, {
            epochs: sftEpochs,
            learningRate: options.sft?.learningRate ?? 3e-3,
            headLearningRate: options.sft?.headLearningRate ?? 1e-3,
            seed: options.seed ?? 0,
            onEpoch: (epoch) => options.onProgress?.({ type: "sft", epoch, epochs: sftEpochs }),
          });
    sft = { runs: sftRuns, steps: rows.length, epochs: done };
  }

  const update = {
    learningRate: options.learningRate ?? 1e-4,
    headLearningRate: options.headLearningRate ?? 1e-3,
    beta: options.beta ?? 0.05,
  };
  if (update.beta > 0) await mu.setReference();
  const passes: TrainMuEpoch[] = [];
  const batches = Math.ceil(training.length / batchSize);
  for (let epoch = 1; epoch <= epochs; epoch++) {
    const shuffled = shuffle(training, rng.fork(`epoch:${epoch}`));
    let loss = 0;
    let gap = 0;
    let kl = 0;
    for (let b = 0; b < batches; b++) {
      const batch = shuffled.slice(b * batchSize, (b + 1) * batchSize).map((run) => run.trajectory);
      const rated = await rateRuns(engine, batch, prompt);
      const batchGap = meanGap(batch, rated);
      const m = await mu.step(
        batch.map((trajectory, i) => ({ steps: rated[i]!.map((step) => step.ids), reward: trajectory.outcome })),
        update,
      );
      loss += m.loss;
      gap += batchGap;
      kl += m.kl;
      options.onProgress?.({
        type: "batch",
        epoch,
        epochs,
        batch: b + 1,
        batches,
        loss: m.loss,
        gap: batchGap,
        kl: m.kl,
      });
    }
    passes.push({ epoch, loss: loss / batches, gap: gap / batches, kl: kl / batches });
  }
  const after = await fit("after");
  const exported = await exportMu(mu, out, tokenizer, manifest.maxLengths.criteria, prompt);
  return {
    ...exported,
    from: directory,
    trainRuns: training.length,
    ...(sft === undefined ? {} : { sft }),
    epochs: passes,
    ...(before === undefined || after === undefined ? {} : { validation: { before, after } }),
    prompt,
  };
}

/** The settings a trained μ keeps: the model's own with `overrides` replacing fields (K is the model's, not a setting). */
function promptSettings(saved: StepPromptSettings | undefined, overrides: StepPromptSettings = {}): StepPromptSettings {
  const { k: _k, ...settings } = withPromptSettings(saved, overrides);
  return definedFields(settings);
}

function positiveInteger(value: number, path: string, min: number): number {
  if (!Number.isInteger(value) || value < min)
    throw new RlxarInputError(path, `expected an integer ≥ ${min}, got ${value}`);
  return value;
}

/** Every step of every run rated in one batched call, grouped back by run. */
async function rateRuns(
  engine: MuEngine,
  runs: readonly Trajectory[],
  prompt: StepPromptSettings,
): Promise<RatedStep[][]> {
  const flat = await rateSteps(
    engine,
    runs.flatMap((run) => stepsOf(run)),
    { ...prompt },
  );
  let next = 0;
  return runs.map((run) => run.turns.map(() => flat[next++]!));
}

const sumOf = (steps: readonly RatedStep[]) => steps.reduce((a, step) => a + step.s, 0);

function meanGap(runs: readonly Trajectory[], rated: readonly (readonly RatedStep[])[]): number {
  return runs.reduce((a, run, i) => a + Math.abs(sumOf(rated[i]!) - run.outcome), 0) / runs.length;
}

/** μ's fit on `runs`: mean |Σ_t s_t − R| and Σ_t s_t's AUC for success, rated in batches of 16 runs. */
export async function decompositionFit(
  engine: MuEngine,
  runs: readonly Trajectory[],
  prompt: StepPromptSettings = {},
  onProgress?: (done: number, total: number) => void,
): Promise<DecompositionFit> {
  if (runs.length === 0) throw new ArcoInputError("runs", "no runs to score");
  const sums: number[] = [];
  for (let start = 0; start < runs.length; start += 16) {
    const rated = await rateRuns(engine, runs.slice(start, start + 16), prompt);
    sums.push(...rated.map(sumOf));
    onProgress?.(sums.length, runs.length);
  }
  const gap = runs.reduce((a, run, i) => a + Math.abs(sums[i]! - run.outcome), 0) / runs.length;
  const success = runs.map((run) => run.outcome >= 0.5);
  const both = success.some((s) => s) && success.some((s) => !s);
  const successes = success.filter((s) => s).length;
  return { runs: runs.length, successes, gap, ...(both ? { auc: rocAuc(sums, success) } : {}) };
}
