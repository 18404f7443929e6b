import { existsSync, readdirSync } from "node:fs";
import { availableParallelism } from "node:os";
import {
  type MuEngine,
  type RatedStep,
  RubricModel,
  type Decoding,
  findExport,
  rateSteps,
  readModel,
  readSteps,
  type StepRecord,
  type MuSftExample,
  readMuSftExamples,
} from "@rubric/arco-heads";
import { SidecarClient } from "@rubric/sidecar";
import { createMu, type SftEpoch, sidecarMuEngine } from "@rubric/rlxar";
import { z } from "zod";
import { type CommandArgs, defineCommand } from "../flags/command.js";
import { choiceFlag, integerFlag, numberFlag, switchFlag, textFlag } from "../flags/flag.js";
import { type CliIO, InputFileError, UsageError, readText } from "../io.js";
import { OutputExistsError } from "../results/result-files.js";

const SUBCOMMANDS = ["init", "criteria"] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

const muFlags = {
  out: textFlag("<dir>", "init: the model root; version 1 is written to <dir>/v0001"),
  k: integerFlag("<n>", "init: criteria per step (default 3)", { min: 1 }).default(3),
  seed: integerFlag("<n>", "init: the weights' seed; criteria --sample: the sampling seed (default 0)", {
    min: 0,
  }).default(0),
  corpus: textFlag(
    "<steps.jsonl>",
    "init: steps the tokenizer learns its merges from (default: the prompt's fixed wording only; your agent's steps keep μ's sequences short)",
  ),
  sft: textFlag(
    "<mu-sft.jsonl>",
    "init: fine-tune on these μ-SFT examples (as arco-heads' muSftJsonLines writes them) before exporting",
  ),
  epochs: integerFlag("<n>", "init --sft: passes over the examples (default 10)", { min: 1 }).default(10),
  learningRate: numberFlag(
    "<x>",
    "init --sft: backbone learning rate (default 3e-3, for a μ trained from scratch)",
    (n) => n > 0,
    "a number > 0",
  ),
  headLearningRate: numberFlag(
    "<x>",
    "init --sft: score-head learning rate (default 1e-3, ARCO's)",
    (n) => n > 0,
    "a number > 0",
  ),
  vocab: integerFlag("<n>", "init: tokenizer vocabulary (default 1024)", { min: 259 }).default(1024),
  dModel: integerFlag("<n>", "init: hidden width (default 64)", { min: 1 }).default(64),
  layers: integerFlag("<n>", "init: transformer blocks (default 2)", { min: 1 }).default(2),
  heads: integerFlag("<n>", "init: attention heads (default 4)", { min: 1 }).default(4),
  maxSequence: integerFlag("<n>", "init: positions, prompt + criteria (default 1024)", { min: 2 }).default(1024),
  maxCriteriaTokens: integerFlag("<n>", "init: new tokens μ may write per step (default 128, ARCO's)", {
    min: 1,
  }).default(128),
  pooling: choiceFlag(
    "<tokens>",
    "init: what the score head pools: prompt+criteria (default, the paper's) | criteria (ours)",
    z.enum(["prompt+criteria", "criteria"]),
  ).default("prompt+criteria"),
  model: textFlag("<dir>", "criteria: a model root (its newest vNNNN) or one export directory"),
  steps: textFlag("<steps.jsonl>", "criteria: one step per line: {id, task, history, budgetLeft, action}"),
  backend: choiceFlag(
    "<name>",
    "criteria: onnx (default: onnxruntime-node) | torch (the export's checkpoint in the Python sidecar)",
    z.enum(["onnx", "torch"]),
  ).default("onnx"),
  sample: switchFlag("criteria: sample the criteria (seeded by --seed) instead of greedy decoding"),
  temperature: numberFlag("<t>", "criteria --sample: temperature (default 0.7, ARCO's)", (n) => n > 0, "a number > 0"),
  maxNewTokens: integerFlag("<n>", "criteria: new tokens per step at most (default: the model's maxLengths.criteria)", {
    min: 1,
  }),
  threads: integerFlag("<n>", "CPU threads for onnxruntime-node or torch (default: the core count)", { min: 1 }),
  json: switchFlag('print one JSON object on stdout (criteria: {"model", "steps": [{id, criteria, scores, s}]})'),
};

export type MuArgs = CommandArgs<typeof muFlags, "subcommand", Subcommand>;

export const muCommand = defineCommand({
  name: "mu",
  usage:
    "init --out <dir> [--k 3] [--seed n] | criteria --model <dir> --steps <steps.jsonl> [--backend onnx|torch] [--json]",
  description: `ARCO's rubric model μ (a generation head that writes K criteria per step, a score head that
scores them in [−1, 1]).

  init      creates a μ in the Python sidecar, with a byte-level BPE tokenizer trained here, and
            exports it as version 1: ONNX graphs, tokenizer, torch checkpoint and manifest.
  criteria  writes and scores the criteria of every step in a steps file. Both backends read the
            same export and give the same criteria and the same scores (to float32 rounding).`,
  positional: {
    key: "subcommand",
    label: "init|criteria",
    description: "what to do",
    schema: z.array(z.string()).transform((given, context) => {
      if (given.length === 1 && (SUBCOMMANDS as readonly string[]).includes(given[0]!)) return given[0] as Subcommand;
      context.addIssue({ code: "custom", message: `takes init or criteria; got ${JSON.stringify(given.join(" "))}` });
      return z.NEVER;
    }),
  },
  flags: muFlags,
  footer: "Exit codes: 0 done, 1 bad input (a steps file's bad lines are all listed), 2 usage error.",
  run: (args, { io }) => (args.subcommand === "init" ? init(args, io) : criteria(args, io)),
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

async function init(args: MuArgs, io: CliIO): Promise<number> {
  const out = required(args.out, "--out <dir>", "init");
  if (existsSync(out) && readdirSync(out).some((name) => /^v\d+$/.test(name)))
    throw new OutputExistsError(out, "holds μ exports already; mu init starts a new model root: choose another --out");
  const corpus = args.corpus === undefined ? [] : stepsFile(args.corpus);
  const examples = args.sft === undefined ? undefined : sftFile(args.sft);
  const client = await SidecarClient.start({ threads: args.threads ?? availableParallelism() });
  try {
    const started = performance.now();
    const exported = await createMu(client, out, {
      k: args.k,
      seed: args.seed,
      pooling: args.pooling,
      vocabularySize: args.vocab,
      maxCriteriaTokens: args.maxCriteriaTokens,
      shape: { dModel: args.dModel, layers: args.layers, heads: args.heads, maxSequence: args.maxSequence },
      corpus,
      ...(examples === undefined
        ? {}
        : {
            sft: {
              examples,
              epochs: args.epochs,
              learningRate: args.learningRate ?? 3e-3,
              ...(args.headLearningRate === undefined ? {} : { headLearningRate: args.headLearningRate }),
              seed: args.seed,
              onEpoch: (e: SftEpoch) =>
                io.err(
                  `μ SFT epoch ${e.epoch}/${args.epochs}: loss ${e.loss.toFixed(4)} (CE ${e.ce.toFixed(4)}, MSE ${e.mse.toFixed(4)})\n`,
                ),
            },
          }),
    });
    const { manifest } = await readModel(exported.directory);
    if (examples === undefined) io.err(`${untrained(exported.version)}; pass --sft <mu-sft.jsonl> to warm it up\n`);
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

/** What a μ that has taken no training step is, said wherever one is made or used. */
const untrained = (version: number) =>
  `warning: μ version ${version} has taken no training step: its criteria and scores are an untrained network's noise`;

async function criteria(args: MuArgs, io: CliIO): Promise<number> {
  const directory = required(args.model, "--model <dir>", "criteria");
  const steps = stepsFile(required(args.steps, "--steps <steps.jsonl>", "criteria"));
  const decoding: Decoding = args.sample
    ? { mode: "sampled", seed: args.seed, ...(args.temperature === undefined ? {} : { temperature: args.temperature }) }
    : { mode: "greedy" };
  const options = { decoding, ...(args.maxNewTokens === undefined ? {} : { maxNewTokens: args.maxNewTokens }) };
  const threads = args.threads ?? availableParallelism();
  let rated: RatedStep[];
  let version: number;
  let served: string;
  let trainingSteps: number;
  if (args.backend === "onnx") {
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
      const engine: MuEngine = await sidecarMuEngine(client, served);
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
