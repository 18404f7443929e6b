import { existsSync, readdirSync } from "node:fs";
import { availableParallelism } from "node:os";
import {
  annotateTrajectory,
  criteriaTarget,
  type MuEngine,
  PROMPT_STYLES,
  type RatedStep,
  RubricModel,
  type Decoding,
  findExport,
  inferredBudget,
  rateSteps,
  readModel,
  readSteps,
  readTrajectories,
  type StepPromptSettings,
  type StepRecord,
  stepsOf,
  type MuSftExample,
  readMuSftExamples,
  type TrajectoryRecord,
  trajectoryOf,
} from "@rubric/arco-heads";
import { definedFields } from "@rubric/core";
import { providerFromSpec, type SpecifiedModel } from "@rubric/providers";
import { SidecarClient } from "@rubric/sidecar";
import { createMu, loadSidecarMu, type SftEpoch, type TrainedMu, trainMu } from "@rubric/rlxar";
import { z } from "zod";
import { type CommandArgs, defineCommand } from "../flags/command.js";
import { choiceFlag, integerFlag, numberFlag, switchFlag, textFlag } from "../flags/flag.js";
import { ggufFileOf, muPoolingFlag } from "../flags/mu-flags.js";
import { type CliIO, InputFileError, UsageError, readText } from "../io.js";
import { progressBar } from "../progress.js";
import { preflightModel } from "../flags/judge-flags.js";
import { OutputExistsError } from "../results/result-files.js";

const SUBCOMMANDS = ["init", "criteria", "train"] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

const muFlags = {
  out: textFlag(
    "<dir>",
    "init: the model root (version 1 is written to <dir>/v0001); train: where the new version goes (default: the --model root, as its next version)",
  ),
  k: integerFlag("<n>", "init: criteria per step (default 3)", { min: 1 }).default(3),
  seed: integerFlag(
    "<n>",
    "init: the weights' seed; criteria --sample: the sampling seed; train: the runs' order and validation split (default 0)",
    { min: 0 },
  ).default(0),
  corpus: textFlag(
    "<steps.jsonl>",
    "init: steps the tokenizer learns its merges from (default: the prompt's fixed wording only; your agent's steps keep μ's sequences short)",
  ),
  sft: textFlag(
    "<mu-sft.jsonl>",
    "init: fine-tune on these μ-SFT examples (as arco-heads' muSftJsonLines writes them) before exporting",
  ),
  epochs: integerFlag(
    "<n>",
    "init --sft: passes over the examples (default 10); train: passes of the decomposition loss over the runs (default 3)",
    { min: 0 },
  ),
  learningRate: numberFlag(
    "<x>",
    "backbone learning rate (init --sft: default 3e-3, for a μ trained from scratch; train: default 1e-4)",
    (n) => n > 0,
    "a number > 0",
  ),
  headLearningRate: numberFlag("<x>", "score-head learning rate (default 1e-3, ARCO's)", (n) => n > 0, "a number > 0"),
  // No defaults in the flags: with --backbone they do not apply, and a value given is refused.
  vocab: integerFlag("<n>", "init: tokenizer vocabulary (default 1024)", { min: 259 }),
  dModel: integerFlag("<n>", "init: hidden width (default 64)", { min: 1 }),
  layers: integerFlag("<n>", "init: transformer blocks (default 2)", { min: 1 }),
  heads: integerFlag("<n>", "init: attention heads (default 4)", { min: 1 }),
  backbone: textFlag(
    "<file.gguf>",
    "init: a small pretrained llama (GGUF, F32/F16 tensors) as μ's backbone, its weights and vocabulary, instead of a transformer from scratch (--vocab, --d-model, --layers, --heads, --corpus and --trajectories then do not apply)",
  ),
  maxSequence: integerFlag("<n>", "init: positions, prompt + criteria (default 1024)", { min: 2 }).default(1024),
  maxCriteriaTokens: integerFlag("<n>", "init: new tokens μ may write per step (default 128, ARCO's)", {
    min: 1,
  }).default(128),
  pooling: muPoolingFlag("init: ").default("prompt+criteria"),
  style: choiceFlag(
    "<style>",
    'the step prompt\'s wording: qa (ARCO\'s question answering, the default) | generic (any other agent: "Task:", "Steps remaining"). init and train keep it in the model; criteria overrides the model\'s',
    z.enum(PROMPT_STYLES),
  ),
  environment: textFlag(
    "<text>",
    "the agent's environment and actions, added to μ's system prompt (kept as --style is)",
  ),
  budgetLabel: textFlag(
    "<text>",
    "what the agent's budget counts, e.g. \"Tool calls remaining\" (default: the style's; kept as --style is)",
  ),
  maxObservationChars: integerFlag(
    "<n>",
    "each earlier observation cut to n characters (default 600; kept as --style is)",
    {
      min: 1,
    },
  ),
  model: textFlag("<dir>", "criteria, train: a model root (its newest vNNNN) or one export directory"),
  steps: textFlag("<steps.jsonl>", "criteria: one step per line: {id, task, history, budgetLeft, action}"),
  trajectories: textFlag(
    "<runs.jsonl>",
    "train, criteria: one agent run per line: {id, task, steps: [{action, observation}], outcome ∈ [0, 1]} (criteria scores every step, ids <run id>#<t>)",
  ),
  budget: integerFlag(
    "<n>",
    "train, criteria --trajectories: the budget of runs whose log gives none (default: the longest run's step count)",
    { min: 1 },
  ),
  batchSize: integerFlag("<n>", "train: runs per μ update (default 8)", { min: 1 }).default(8),
  beta: numberFlag(
    "<x>",
    "train: KL(μ_ref‖μ) weight, μ_ref the starting μ (default 0.05, ARCO's)",
    (n) => n >= 0,
    "a number ≥ 0",
  ),
  validation: numberFlag(
    "<share>",
    "train: runs held out (seeded) and scored before and after training (default 0.2; 0 = none)",
    (n) => n >= 0 && n < 1,
    "a share in [0, 1)",
  ),
  sftEpochs: integerFlag("<n>", "train: warm-up passes over runs that carry criteria and scores (default 4)", {
    min: 1,
  }),
  sftLearningRate: numberFlag(
    "<x>",
    "train: the warm-up's backbone learning rate (default 3e-3)",
    (n) => n > 0,
    "a number > 0",
  ),
  annotator: textFlag(
    "<provider>",
    "train: an LLM that annotates each unannotated training run (criteria + scores per step) for the warm-up: llama-cpp:<file.gguf> | hf:<model>[@<provider>] | openai-compatible:<baseUrl>#<model>",
  ),
  backend: choiceFlag(
    "<name>",
    "criteria: onnx (default: onnxruntime-node) | torch (the export's checkpoint in the Python sidecar)",
    z.enum(["onnx", "torch"]),
  ).default("onnx"),
  device: textFlag(
    "<name>",
    "criteria --backend torch: torch's device for μ (default: the one its checkpoint was saved on; cpu reads a μ trained on a GPU where there is none)",
  ),
  sample: switchFlag("criteria: sample the criteria (seeded by --seed) instead of greedy decoding"),
  temperature: numberFlag("<t>", "criteria --sample: temperature (default 0.7, ARCO's)", (n) => n > 0, "a number > 0"),
  maxNewTokens: integerFlag("<n>", "criteria: new tokens per step at most (default: the model's maxLengths.criteria)", {
    min: 1,
  }),
  threads: integerFlag("<n>", "CPU threads for onnxruntime-node or torch (default: the core count)", { min: 1 }),
  json: switchFlag(
    'print one JSON object on stdout (criteria: {"model", "steps": [{id, criteria, scores, s}]}; init, train: the new version)',
  ),
};

export type MuArgs = CommandArgs<typeof muFlags, "subcommand", Subcommand>;

export const muCommand = defineCommand({
  name: "mu",
  usage:
    "init --out <dir> [--k 3] [--style generic] | train --model <dir> --trajectories <runs.jsonl> [--out <dir>] [--epochs 3] | criteria --model <dir> --steps <steps.jsonl>|--trajectories <runs.jsonl> [--backend onnx|torch] [--json]",
  description: `ARCO's rubric model μ (a generation head that writes K criteria per step, a score head that
scores them in [−1, 1]).

  init      creates a μ in the Python sidecar, with a byte-level BPE tokenizer trained here, and
            exports it as version 1: ONNX graphs, tokenizer, torch checkpoint and manifest (with
            the step prompt's settings: --style, --environment, --budget-label).
  train     trains μ on your agent's own runs and their outcomes (ARCO's decomposition loss:
            each run's step scores made to sum to its outcome, KL to the starting μ), after a
            warm-up on any teacher annotations they carry or --annotator writes; reports held-out
            runs before and after; writes the next version.
  criteria  writes and scores the criteria of every step in a steps or trajectories file. Both
            backends read the same export and give the same criteria and the same scores (to
            float32 rounding).`,
  positional: {
    key: "subcommand",
    label: "init|train|criteria",
    description: "what to do",
    schema: z.array(z.string()).transform((given, context) => {
      if (given.length === 1 && (SUBCOMMANDS as readonly string[]).includes(given[0]!)) return given[0] as Subcommand;
      context.addIssue({
        code: "custom",
        message: `takes init, train or criteria; got ${JSON.stringify(given.join(" "))}`,
      });
      return z.NEVER;
    }),
  },
  flags: muFlags,
  footer: "Exit codes: 0 done, 1 bad input (a steps or trajectories file's bad lines are all listed), 2 usage error.",
  run: (args, { io, isTTY }) =>
    args.subcommand === "init"
      ? init(args, io)
      : args.subcommand === "train"
        ? train(args, io, isTTY)
        : criteria(args, io),
});

function required<T>(value: T | undefined, flag: string, subcommand: Subcommand): T {
  if (value === undefined) throw new UsageError(`mu ${subcommand} needs ${flag}`);
  return value;
}

/** A file read by one of arco-heads' readers; its `ArcoFileError` (every bad line) becomes the CLI's input error. */
function recordsFile<T>(path: string, read: (text: string, source: string) => T[]): T[] {
  const text = readText(path);
  try {
    return read(text, path);
  } catch (error) {
    throw new InputFileError((error as Error).message);
  }
}
const stepsFile = (path: string): StepRecord[] => recordsFile(path, readSteps);
const sftFile = (path: string): MuSftExample[] => recordsFile(path, readMuSftExamples);
const trajectoriesFile = (path: string): TrajectoryRecord[] => recordsFile(path, readTrajectories);

/** The step prompt's settings the flags give (only those given: the rest come from the model). */
function promptFlags(args: MuArgs): StepPromptSettings {
  return definedFields({
    style: args.style,
    environment: args.environment,
    budgetLabel: args.budgetLabel,
    maxObservationChars: args.maxObservationChars,
  });
}

async function init(args: MuArgs, io: CliIO): Promise<number> {
  const out = required(args.out, "--out <dir>", "init");
  if (existsSync(out) && readdirSync(out).some((name) => /^v\d+$/.test(name)))
    throw new OutputExistsError(out, "holds μ exports already; mu init starts a new model root: choose another --out");
  const runs = args.trajectories === undefined ? [] : trajectoriesFile(args.trajectories);
  const corpus = [...(args.corpus === undefined ? [] : stepsFile(args.corpus)), ...runSteps(runs, args.budget)];
  // A teacher's criteria in the runs join the tokenizer's corpus, so μ learns to write them in few tokens.
  const texts = runs.flatMap((run) =>
    run.steps.flatMap((step) => (step.criteria ? [criteriaTarget(step.criteria)] : [])),
  );
  const examples = args.sft === undefined ? undefined : sftFile(args.sft);
  const backbone = args.backbone === undefined ? undefined : backboneOf(args);
  const client = await SidecarClient.start({ threads: args.threads ?? availableParallelism() });
  try {
    const started = performance.now();
    const exported = await createMu(client, out, {
      k: args.k,
      seed: args.seed,
      pooling: args.pooling,
      maxCriteriaTokens: args.maxCriteriaTokens,
      ...(backbone === undefined
        ? {
            vocabularySize: args.vocab ?? 1024,
            shape: {
              dModel: args.dModel ?? 64,
              layers: args.layers ?? 2,
              heads: args.heads ?? 4,
              maxSequence: args.maxSequence,
            },
            corpus,
            texts,
          }
        : { backbone: { gguf: backbone }, shape: { maxSequence: args.maxSequence } }),
      prompt: promptFlags(args),
      ...(examples === undefined
        ? {}
        : {
            sft: {
              examples,
              epochs: args.epochs ?? 10,
              learningRate: args.learningRate ?? 3e-3,
              ...(args.headLearningRate === undefined ? {} : { headLearningRate: args.headLearningRate }),
              seed: args.seed,
              onEpoch: (e: SftEpoch) =>
                io.err(
                  `μ SFT epoch ${e.epoch}/${args.epochs ?? 10}: loss ${e.loss.toFixed(4)} (CE ${e.ce.toFixed(4)}, MSE ${e.mse.toFixed(4)})\n`,
                ),
            },
          }),
    });
    const { manifest } = await readModel(exported.directory);
    if (examples === undefined)
      io.err(
        `${untrained(exported.version)}; train it on your agent's runs (rubric mu train --model ${out} --trajectories <runs.jsonl>) or pass --sft <mu-sft.jsonl>\n`,
      );
    if (args.json)
      io.out(`${JSON.stringify({ directory: exported.directory, version: exported.version, manifest })}\n`);
    else
      io.out(
        `μ version ${exported.version} in ${exported.directory} (K ${args.k}, ${manifest.model.parameters} parameters, ` +
          `tokenizer of ${manifest.model.vocabularySize} ids; ${((performance.now() - started) / 1000).toFixed(1)} s)\n`,
      );
    return 0;
  } finally {
    await client.close();
  }
}

/**
 * `--backbone`'s file, made absolute (the sidecar resolves paths from its own directory). The
 * flags that size or tokenize the small μ do not apply to a llama, which brings its own shape and
 * vocabulary: one given beside it is a usage error rather than silently ignored.
 */
function backboneOf(args: MuArgs): string {
  const given = (
    [
      ["--vocab", args.vocab],
      ["--d-model", args.dModel],
      ["--layers", args.layers],
      ["--heads", args.heads],
      ["--corpus", args.corpus],
      ["--trajectories", args.trajectories],
    ] as const
  ).find(([, value]) => value !== undefined)?.[0];
  if (given !== undefined)
    throw new UsageError(`${given}: does not apply with --backbone (the GGUF file sets μ's shape and vocabulary)`);
  return ggufFileOf("--backbone", args.backbone!);
}

/** What a μ that has taken no training step is, said wherever one is made or used. */
const untrained = (version: number) =>
  `warning: μ version ${version} has taken no training step: its criteria and scores are an untrained network's noise`;

/**
 * Every step of every run, as a steps file would hold them (`<run id>#<t>`), budgets counted down
 * from each run's budget, else `budget`, else the longest run's length.
 */
function runSteps(runs: readonly TrajectoryRecord[], budget: number | undefined): StepRecord[] {
  const total = budget ?? inferredBudget(runs);
  return runs.flatMap((run) => {
    try {
      return stepsOf(trajectoryOf(run, total)).map((step, t) => ({ id: `${run.id}#${t}`, ...step }));
    } catch (error) {
      throw new InputFileError((error as Error).message);
    }
  });
}

async function criteria(args: MuArgs, io: CliIO): Promise<number> {
  const directory = required(args.model, "--model <dir>", "criteria");
  if (args.steps !== undefined && args.trajectories !== undefined)
    throw new UsageError("mu criteria takes --steps or --trajectories, not both");
  const steps =
    args.trajectories !== undefined
      ? runSteps(trajectoriesFile(args.trajectories), args.budget)
      : stepsFile(required(args.steps, "--steps <steps.jsonl> or --trajectories <runs.jsonl>", "criteria"));
  const decoding: Decoding = args.sample
    ? { mode: "sampled", seed: args.seed, ...(args.temperature === undefined ? {} : { temperature: args.temperature }) }
    : { mode: "greedy" };
  // Flags override the model's saved prompt settings field by field; absent ones keep the model's.
  const options = {
    decoding,
    ...promptFlags(args),
    ...(args.maxNewTokens === undefined ? {} : { maxNewTokens: args.maxNewTokens }),
  };
  const threads = args.threads ?? availableParallelism();
  let rated: RatedStep[];
  let version: number;
  let served: string;
  let trainingSteps: number;
  if (args.backend === "onnx") {
    if (args.device !== undefined)
      throw new UsageError("--device is for --backend torch (onnxruntime-node runs on the CPU here)");
    const model = await RubricModel.load(directory, { threads });
    try {
      rated = await model.rateSteps(steps, options);
      ({ version, directory: served } = model);
      trainingSteps = model.manifest.training.steps;
    } finally {
      await model.close();
    }
  } else {
    const client = await SidecarClient.start({ threads });
    try {
      // The export onnxruntime-node would serve, with no onnxruntime session opened to find it.
      served = (await findExport(directory)).directory;
      const engine: MuEngine = (
        await loadSidecarMu(client, served, args.device === undefined ? {} : { device: args.device })
      ).engine;
      version = engine.manifest.exportVersion;
      trainingSteps = engine.manifest.training.steps;
      rated = await rateSteps(engine, steps, options);
    } finally {
      await client.close();
    }
  }
  if (trainingSteps === 0) io.err(`${untrained(version)}\n`);
  const rows = steps.map((step, i) => {
    const r = rated[i]!;
    return {
      id: step.id,
      criteria: r.criteria,
      scores: r.scores,
      s: r.s,
      ...(r.adjusted === undefined ? {} : { adjusted: r.adjusted }),
      ...(r.droppedTurns === 0 ? {} : { droppedTurns: r.droppedTurns }),
    };
  });
  if (args.json) {
    io.out(`${JSON.stringify({ model: { directory: served, version }, steps: rows })}\n`);
    return 0;
  }
  io.out(`μ version ${version} (${served}, ${args.backend})\n`);
  for (const row of rows) {
    io.out(`\n${row.id}  s = ${row.s.toFixed(4)}${row.adjusted ? `  (${row.adjusted})` : ""}\n`);
    row.criteria.forEach((c, k) => io.out(`  ${row.scores[k]!.toFixed(4).padStart(8)}  ${c || "(empty)"}\n`));
  }
  return 0;
}

async function train(args: MuArgs, io: CliIO, isTTY: boolean): Promise<number> {
  const model = required(args.model, "--model <dir>", "train");
  const runs = trajectoriesFile(required(args.trajectories, "--trajectories <runs.jsonl>", "train"));
  const location = await findExport(model);
  const out = args.out ?? location.root;
  if (out === undefined)
    throw new UsageError(`mu train needs --out <dir>: ${model} is one export, not a model root to add a version to`);
  let annotator: SpecifiedModel | undefined;
  const client = await SidecarClient.start({ threads: args.threads ?? availableParallelism() });
  const bar = progressBar(io, isTTY);
  try {
    if (args.annotator !== undefined) {
      annotator = providerFromSpec(args.annotator, { checkFiles: true });
      await preflightModel("--annotator", args.annotator, io);
    }
    const started = performance.now();
    const { manifest } = await readModel(location.directory);
    if (manifest.training.steps === 0)
      io.err(`note: μ version ${manifest.exportVersion} is untrained; training starts from its random weights\n`);
    const prompt = promptFlags(args);
    const trained = await trainMu(client, location.directory, runs, out, {
      epochs: args.epochs ?? 3,
      batchSize: args.batchSize,
      seed: args.seed,
      prompt,
      ...definedFields({
        learningRate: args.learningRate,
        headLearningRate: args.headLearningRate,
        beta: args.beta,
        validation: args.validation,
        budget: args.budget,
      }),
      sft: definedFields({ epochs: args.sftEpochs, learningRate: args.sftLearningRate }),
      ...(annotator === undefined
        ? {}
        : {
            annotator: (trajectory, context) =>
              annotateTrajectory(annotator!, trajectory, { k: context.k, ...context.prompt }),
          }),
      onProgress: (event) => {
        if (event.type === "batch")
          bar.update(
            (event.epoch - 1) * event.batches + event.batch,
            event.epochs * event.batches,
            "μ updates",
            `epoch ${event.epoch}/${event.epochs}  loss ${event.loss.toFixed(4)}  |Σs−R| ${event.gap.toFixed(3)}`,
          );
        else if (event.type === "validate") bar.update(event.done, event.total, `held-out runs (${event.when})`);
        else if (event.type === "annotate") bar.update(event.done, event.total, "runs annotated");
        else bar.update(event.epoch.epoch, event.epochs, "warm-up epochs", `loss ${event.epoch.loss.toFixed(4)}`);
      },
    });
    bar.done();
    if (args.json) io.out(`${JSON.stringify(trained)}\n`);
    else printTrained(io, trained, (performance.now() - started) / 1000);
    return 0;
  } finally {
    bar.done();
    await annotator?.dispose?.();
    await client.close();
  }
}

function printTrained(io: CliIO, trained: TrainedMu, seconds: number): void {
  io.out(`μ version ${trained.version} in ${trained.directory} (from ${trained.from}; ${seconds.toFixed(1)} s)\n`);
  if (trained.sft !== undefined)
    io.out(
      `warm-up: ${trained.sft.steps} annotated steps of ${trained.sft.runs} runs, ${trained.sft.epochs.length} epochs, ` +
        `final loss ${trained.sft.epochs.at(-1)?.loss.toFixed(4) ?? "—"}\n`,
    );
  for (const epoch of trained.epochs)
    io.out(
      `epoch ${epoch.epoch}: loss ${epoch.loss.toFixed(4)}  mean |Σ_t s_t − R| ${epoch.gap.toFixed(4)}  KL ${epoch.kl.toFixed(5)}\n`,
    );
  const v = trained.validation;
  if (v !== undefined) {
    const auc = (fit: typeof v.before) => (fit.auc === undefined ? "— (one class only)" : fit.auc.toFixed(3));
    const fewer = Math.min(v.after.successes, v.after.runs - v.after.successes);
    io.out(
      `held-out runs (${v.after.runs}, ${v.after.successes} succeeded): mean |Σ_t s_t − R| ${v.before.gap.toFixed(4)} → ${v.after.gap.toFixed(4)}, ` +
        `AUC of Σ_t s_t for success ${auc(v.before)} → ${auc(v.after)}\n`,
    );
    // An AUC over a handful of runs moves by whole steps of 1/(n₊·n₋): say so rather than let it read as a result.
    if (fewer < 10)
      io.out(
        `note: ${fewer} held-out run(s) of the smaller class: the AUC is noise at this size; hold out more runs (--validation) or log more\n`,
      );
  } else io.out(`trained on all ${trained.trainRuns} runs; none held out (--validation 0)\n`);
}
