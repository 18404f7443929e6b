import { closeSync, existsSync, readdirSync, rmSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { definedFields } from "@rubric/core";
import { isInputFileError, openInputFileSync } from "@rubric/core/files";
import { SidecarClient } from "@rubric/sidecar";
import { parseProviderSpec, providerFromSpec } from "@rubric/providers";
import { preflightModel } from "../flags/judge-flags.js";
import { hotpotQa, llmPolicy } from "@rubric/rlxar";
import {
  ARCO_METHODS,
  type ArcoMethod,
  type ArcoPolicySetting,
  type ArcoProgress,
  arcoConfig,
  arcoMuModel,
  type MuModelSetting,
  TINY_MU_MODEL,
  arcoPolicySetting,
  ReproInputError,
  runArco,
} from "@rubric/repro";
import { z } from "zod";
import { type CommandArgs, defineCommand, fixedOperand } from "../flags/command.js";
import { choiceFlag, integerFlag, listFlag, numberFlag, switchFlag, textFlag, MAX_SEEDS } from "../flags/flag.js";
import { muPoolingFlag } from "../flags/mu-flags.js";
import { type CliIO, findSharedData, InputFileError, UsageError } from "../io.js";
import { overallProgress, progressBar } from "../progress.js";
import { OutputExistsError, prepareResultFiles } from "../results/result-files.js";

const positive = (value: string, description: string) =>
  numberFlag(value, description, (n) => Number.isFinite(n) && n > 0, "a positive number");
const fraction = (value: string, description: string) =>
  numberFlag(value, description, (n) => n >= 0 && n <= 1, "a number in [0, 1]");

const arcoFlags = {
  out: textFlag("<dir>", "where table.json, table.md, curves.svg and the runs go").required(),
  quick: switchFlag(
    "1 seed, 48 train and 80 dev questions, 1 sparse + 1 dense epoch, no K sweep (about 3 minutes on 2 cores)",
  ),
  seeds: integerFlag("<n>", "seeds 1..n (default 3; 1 with --quick or an LLM --policy)", { min: 1, max: MAX_SEEDS }),
  trainData: textFlag(
    "<jsonl>",
    "training questions (default $RUBRIC_SHARED_DIR/data/hotpotqa/train.jsonl or ../shared/…)",
  ),
  evalData: textFlag("<jsonl>", "evaluation questions (default …/hotpotqa/dev.jsonl)"),
  evalSplit: choiceFlag(
    "<split>",
    "dev (default: the --eval-data file) | tune (the training file's 69 held-out questions, to choose a setting without reading dev)",
    z.enum(["dev", "tune"]),
  ),
  trainQuestions: integerFlag(
    "<n>",
    "a seeded sample of n of the 400 training questions (the other 69 are held out to tune on), the same for every seed (default all 400; 48 with --quick; 8 with an LLM --policy)",
    { min: 1 },
  ),
  evalQuestions: integerFlag(
    "<n>",
    "a seeded sample of n evaluation questions (default all; 80 with --quick; 8 with an LLM --policy)",
    { min: 1 },
  ),
  policy: textFlag(
    "<spec>",
    "π: extractive (default: the in-process trainable policy); a causal LM trained in the torch sidecar: sidecar:tiny (its small transformer, from scratch) | sidecar:<name|dir> (a transformers model with its own tokenizer and chat template, LoRA on q/v; needs transformers in the sidecar's Python: the GPU recipe); trained in the sidecar and rolled out by a vLLM server that loads each update's LoRA adapter at runtime (VLLM_ALLOW_RUNTIME_LORA_UPDATING=True): served:<http://host:port>#<name|dir>; or a model rolled out but not trained: llama-cpp:<file.gguf> | hf:<model>[@<provider>] | openai-compatible:<baseUrl>#<model>",
  ),
  device: textFlag("<name>", "--policy sidecar:…: torch's device for π (default auto: the GPU when there is one)"),
  dtype: choiceFlag(
    "<type>",
    "--policy sidecar:<model> and --mu-model <model>: the transformers models' dtype (default bfloat16; the small transformers are float32)",
    z.enum(["float32", "bfloat16", "float16"]),
  ),
  muModel: textFlag(
    "<name|dir>",
    "μ served by the torch sidecar: a transformers model (ARCO's μ: LoRA r 8, α 32, dropout 0.05 on q/v, its own tokenizer and chat template, ARCO's rates; needs transformers and peft in the sidecar's Python: the GPU recipe), or tiny (the small μ, served by torch instead of onnxruntime-node). Default: the small μ exported to ONNX",
  ),
  muPooling: muPoolingFlag(),
  muDevice: textFlag(
    "<name>",
    "torch's device for μ (default cpu; auto for a transformers --mu-model), e.g. cuda:1 beside π on cuda:0 (ARCO's placement); its checkpoints keep it",
  ),
  loraRank: integerFlag(
    "<r>",
    "--policy sidecar:<model>: LoRA rank on q/v, α = 4r (default 8, ARCO's); 0 trains every weight",
    { min: 0 },
  ),
  python: textFlag(
    "<path>",
    "the sidecar's Python (default /usr/bin/python3 when it exists, else python3 on PATH); --policy sidecar:<model> needs one with transformers and peft",
  ),
  methods: listFlag("<a,b,…>", `methods to run (default all: ${ARCO_METHODS.join(", ")})`),
  k: integerFlag("<n>", "criteria per step of μ (default 3)", { min: 1 }),
  kSweep: listFlag(
    "<n,…>",
    "further K for ARCO's sensitivity rows, or none (default 1,5; none with --quick or an LLM --policy)",
  ),
  sparseEpochs: integerFlag("<n>", "epochs of the sparse phase (default 1)", { min: 0 }),
  denseEpochs: integerFlag("<n>", "epochs of the dense phase (default 2; 1 with --quick)", { min: 0 }),
  rolloutsPerBatch: integerFlag("<n>", "rollouts per update (default 32; ARCO 64)", { min: 1 }),
  groupSize: integerFlag("<n>", "rollouts per question in the sparse phase (default 4, ARCO's)", { min: 1 }),
  temperature: numberFlag("<x>", "rollout temperature (default 0.7, ARCO's)", (n) => n >= 0, "a number ≥ 0"),
  sparseLr: positive(
    "<x>",
    "π's learning rate in the sparse phase (default 0.1 for the extractive policy, 1e-4 for sidecar:tiny, ARCO's 1e-5 for a transformers model)",
  ),
  denseLr: positive("<x>", "π's learning rate in the dense phase (default 0.3 × the sparse default, ARCO's ratio)"),
  policySftLr: positive(
    "<x>",
    "π's SFT learning rate (default 0.05 for the extractive policy, 3e-3 for sidecar:tiny, ARCO's 1e-5 for a transformers model)",
  ),
  denseKl: numberFlag(
    "<x>",
    "KL(π_ref‖π) weight in the dense phase (default 0.05, ARCO's)",
    (n) => n >= 0,
    "a number ≥ 0",
  ),
  denseScale: numberFlag("<x>", "dense advantage scale (default 0.5, ARCO's)", (n) => n >= 0, "a number ≥ 0"),
  gamma: fraction("<γ>", "discount of the dense reward-to-go (default 1, ARCO's; ours: 0 = immediate step rewards)"),
  terminalBuckets: choiceFlag(
    "<how>",
    "shared (default, ARCO's: one baseline bucket for every terminal step) | per-step (ours: one per step index)",
    z.enum(["shared", "per-step"]),
  ),
  teacherNoise: fraction("<p>", "the warm-up teacher's mistake rate (default 0.25)"),
  teacherRollouts: integerFlag("<n>", "warm-up rollouts per question (default 3, ARCO's k)", { min: 1 }),
  muSftEpochs: integerFlag("<n>", "μ warm-up epochs (default 4)", { min: 1 }),
  muSftExamples: integerFlag("<n>", "μ warm-up examples at most (default 256; 240 with --quick)", { min: 1 }),
  diagnosticQuestions: integerFlag(
    "<n>",
    "μ's diagnostics on a seeded sample of n evaluation questions (default 100; all with --quick)",
    { min: 1 },
  ),
  threads: integerFlag("<n>", "torch threads of the sidecar (default: the cores)", { min: 1 }),
  resume: switchFlag(
    "continue the run in <dir>: finished methods kept, a stopped one from its latest checkpoint (replaces the tables)",
  ),
  force: switchFlag("replace the tables of an earlier run in <dir> (default: refuse, before any training)"),
};

export type ReproArcoArgs = CommandArgs<typeof arcoFlags, "experiment", "arco">;

export const reproArcoCommand = defineCommand({
  name: "repro arco",
  usage: "--out <dir> [--quick] [--seeds n] [--eval-data <jsonl>] [options]",
  description: `Reproduces ARCO (arXiv 2606.21262) on HotpotQA: trains on the train file, evaluates greedily on the
dev file (or --eval-data), nothing selected on it. Per seed: the gold teacher's warm-up (rollouts with
noise, per-step criteria and scores projected onto Σ = K·R), π SFT on its successful multi-step
trajectories, one warm-up μ per kind, then every method from the same start at the same budget:
outcome-only RL, a frozen-judge trajectory rubric (RaR), frozen μ, a scalar PRM (K = 1), fixed
criteria, criteria without the prefix, ARCO, and ours (ARCO keeping the outcome at the terminal step).
Writes <dir>/table.json, <dir>/table.md, <dir>/curves.svg, and per seed and method the trainer's
run directory (log.jsonl, checkpoints/, the same as repro arcane's), μ's traces on the eval set and
result.json. --resume continues a stopped run with the same configuration. Needs /usr/bin/python3 with torch and
onnxruntime-node.`,
  positional: {
    key: "experiment",
    label: "arco",
    description: "the experiment",
    schema: fixedOperand("arco", (given) => `arco takes no further operands; got ${JSON.stringify(given)}`),
  },
  flags: arcoFlags,
  footer: "Exit codes: 0 done, 1 bad input (a data file's bad lines are all listed), 2 usage error.",
  run: (args, { io, isTTY }) => reproArco(args, io, isTTY),
});

/**
 * A HotpotQA file: the flag, else `hotpotqa/<name>` of the shared data (see `findSharedData`).
 * A given file is checked here, before the sidecar starts, by core's reader: a regular file that
 * can be opened (`--eval-data /dev/zero` was read to many GB, issue 29 item 24); the run reads it
 * through the same reader.
 */
function hotpotFile(given: string | undefined, name: string, flag: string): string {
  if (given !== undefined) {
    try {
      closeSync(openInputFileSync(given).fd);
    } catch (error) {
      if (isInputFileError(error)) throw new InputFileError(`${flag} ${given}: ${error.detail}`);
      throw error;
    }
    return given;
  }
  const found = findSharedData(join("hotpotqa", name));
  if (found === undefined)
    throw new InputFileError(`cannot find HotpotQA's ${name}: pass ${flag} <jsonl> or set RUBRIC_SHARED_DIR`);
  return found;
}

function methodsOf(given: readonly string[] | undefined): ArcoMethod[] | undefined {
  if (given === undefined) return undefined;
  for (const method of given) {
    if (!(ARCO_METHODS as readonly string[]).includes(method)) {
      throw new UsageError(`--methods: unknown method ${JSON.stringify(method)}; known: ${ARCO_METHODS.join(", ")}`);
    }
  }
  return given as ArcoMethod[];
}

export function ksOf(given: readonly string[] | undefined): number[] | undefined {
  // `none`: no sensitivity rows, for a full run of a few methods.
  if (given?.length === 1 && given[0] === "none") return [];
  return given?.map((text) => {
    const k = Number(text);
    if (!Number.isInteger(k) || k < 1)
      throw new UsageError(`--k-sweep: expected integers ≥ 1, got ${JSON.stringify(text)}`);
    return k;
  });
}

const TABLES = ["table.json", "table.md", "curves.svg"];

/**
 * An earlier run's per-seed directories (logs, checkpoints, traces) would be mixed with this
 * run's: refused before any work, or removed with --force.
 */
function clearEarlierSeeds(out: string, force: boolean): void {
  const earlier = existsSync(out) ? readdirSync(out).filter((name) => /^seed-\d+$/.test(name)) : [];
  if (earlier.length === 0) return;
  if (!force) {
    throw new OutputExistsError(
      join(out, earlier[0]!),
      `an earlier run's seed directory; pass --force to replace that run, or choose another --out`,
    );
  }
  for (const name of earlier) rmSync(join(out, name), { recursive: true, force: true });
}

/**
 * `--policy`, `--mu-model` and the sidecar's flags as the configuration's π and μ; a sidecar flag
 * that neither uses is a usage error.
 */
function modelSettingsOf(args: ReproArcoArgs): { policy: ArcoPolicySetting; muModel: MuModelSetting | undefined } {
  const transformersMu = args.muModel !== undefined && args.muModel !== TINY_MU_MODEL;
  let policy: ArcoPolicySetting;
  let muModel: MuModelSetting | undefined;
  try {
    // --dtype is π's when π is in the sidecar (any other π reads none of these), and a transformers μ's too.
    policy = arcoPolicySetting(
      args.policy,
      definedFields({ device: args.device, dtype: args.dtype, loraRank: args.loraRank }),
    );
    muModel = arcoMuModel(args.muModel, definedFields({ dtype: transformersMu ? args.dtype : undefined }));
  } catch (error) {
    if (error instanceof ReproInputError) throw new UsageError(error.message);
    throw error;
  }
  const given = (
    [
      ["--device", args.device],
      ["--lora-rank", args.loraRank],
      ...(transformersMu ? [] : ([["--dtype", args.dtype]] as const)),
    ] as const
  ).find(([, value]) => value !== undefined);
  if (policy.kind !== "sidecar" && policy.kind !== "served" && given !== undefined)
    throw new UsageError(
      `${given[0]} is for --policy sidecar:… (π trained in the torch sidecar)${given[0] === "--dtype" ? " or --mu-model" : ""}`,
    );
  return { policy, muModel };
}

/** `rubric repro arco`. */
export async function reproArco(args: ReproArcoArgs, io: CliIO, isTTY: boolean): Promise<number> {
  const { policy, muModel } = modelSettingsOf(args);
  const llm = policy.kind === "llm" ? policy.spec : undefined;
  // Fails on a malformed spec before any work, with the spec's own error.
  if (llm !== undefined) {
    parseProviderSpec(llm);
    await preflightModel("--policy", llm, io);
  }
  // A served π's rollouts are the server's chat completions under each adapter's name: the server
  // must answer before any training (a model it does not list is a warning: it names adapters too).
  const servedUrl = policy.kind === "served" ? policy.url : undefined;
  const servedSpec = (adapter: string) => `openai-compatible:${servedUrl}/v1#${adapter}`;
  if (policy.kind === "served") await preflightModel("--policy", servedSpec(policy.model), io);
  const defaults = arcoConfig({ quick: args.quick, policy, ...(muModel === undefined ? {} : { muModel }) });
  // An LLM policy on a CPU is slow and is not trained here: one seed on a few questions, no K
  // sweep, demonstrates the pipeline.
  const demonstration = llm !== undefined && !args.quick;
  const fewQuestions = demonstration ? 8 : undefined;
  if (args.evalSplit === "tune" && args.evalData !== undefined)
    throw new UsageError("--eval-split tune evaluates on the training file's held-out questions; drop --eval-data");
  const config = arcoConfig({
    quick: args.quick,
    policy,
    trainPath: hotpotFile(args.trainData, "train.jsonl", "--train-data"),
    evalPath: hotpotFile(args.evalData, "dev.jsonl", "--eval-data"),
    ...(args.evalSplit === "tune" ? { evalSplit: "tune" as const } : {}),
    ...definedFields({
      seeds: args.seeds ?? (demonstration ? 1 : undefined),
      trainQuestions: args.trainQuestions ?? fewQuestions,
      evalQuestions: args.evalQuestions ?? fewQuestions,
      diagnosticQuestions: args.diagnosticQuestions,
      methods: methodsOf(args.methods),
      kSweep: ksOf(args.kSweep) ?? (demonstration ? [] : undefined),
      k: args.k,
    }),
    teacher: { ...defaults.teacher, ...definedFields({ rollouts: args.teacherRollouts, noise: args.teacherNoise }) },
    policySft: { ...defaults.policySft, ...definedFields({ learningRate: args.policySftLr }) },
    mu: {
      ...defaults.mu,
      ...definedFields({
        sftEpochs: args.muSftEpochs,
        sftExamples: args.muSftExamples,
        device: args.muDevice,
        // ARCO's mean stays unwritten, so a run's recorded configuration (and its --resume) reads
        // the same with the flag as without it.
        pooling: args.muPooling === "prompt+criteria" ? undefined : args.muPooling,
      }),
    },
    trainer: definedFields({
      sparseEpochs: args.sparseEpochs,
      denseEpochs: args.denseEpochs,
      rolloutsPerBatch: args.rolloutsPerBatch,
      groupSize: args.groupSize,
      temperature: args.temperature,
      sparseLearningRate: args.sparseLr,
      denseLearningRate: args.denseLr,
      denseKl: args.denseKl,
      denseScale: args.denseScale,
      gamma: args.gamma,
      terminalBuckets: args.terminalBuckets,
    }),
  });
  // A resumed run continues the one in <dir> (the same mechanism as `repro arcane --resume`: each
  // method's run directory resumes from its latest checkpoint), so its tables are meant to be replaced.
  prepareResultFiles(
    TABLES.map((name) => ({ path: join(args.out, name), what: `a table of an earlier run (${name})` })),
    args.force || args.resume,
  );
  if (!args.resume) clearEarlierSeeds(args.out, args.force);
  io.err(
    `ARCO on HotpotQA: ${config.seeds.length} seed(s), methods ${config.methods.join(", ")}${config.kSweep.length > 0 ? `, K sweep ${config.kSweep.join(", ")}` : ""}\n`,
  );
  const bar = progressBar(io, isTTY);
  // Every method of every seed (the K sweep's too) is one unit of the whole run, in the run's order.
  const overall = overallProgress(
    config.seeds.flatMap(() => [...config.methods, ...config.kSweep.map((k) => `arcoK${k}`)]),
  );
  // llama-cpp's own default (half the logical cores): more threads than physical cores make its spinning threads fight.
  const model = llm === undefined ? undefined : providerFromSpec(llm);
  const client = await SidecarClient.start({
    threads: args.threads ?? availableParallelism(),
    ...definedFields({ python: args.python }),
  });
  try {
    const table = await runArco(config, {
      out: args.out,
      client,
      resume: args.resume,
      ...(model === undefined
        ? {}
        : { policy: () => llmPolicy(model, { environment: hotpotQa(), name: llm!, concurrency: 4 }) }),
      ...(servedUrl === undefined ? {} : { modelFor: (adapter: string) => providerFromSpec(servedSpec(adapter)) }),
      onProgress: (progress: ArcoProgress) => {
        if (progress.type === "stage") {
          bar.done();
          const unit = progress.stage.startsWith("training ") ? ` (method run ${overall.next()})` : "";
          io.err(`seed ${progress.seed}: ${progress.stage}${unit}\n`);
        } else if (progress.event.type === "batch") {
          const { line } = progress.event;
          bar.update(
            progress.event.done,
            progress.event.total,
            `${progress.method} (${line.phase})`,
            `reward ${line.meanReward.toFixed(2)}${line.muVersion === undefined ? "" : `, μ v${line.muVersion}`}`,
          );
        }
      },
    });
    bar.done();
    const rows = Object.entries(table.methods).map(
      ([method, result]) =>
        `${method} EM ${(100 * result!.em.mean).toFixed(1)} F1 ${(100 * result!.f1.mean).toFixed(1)}`,
    );
    const split = config.evalSplit === "tune" ? "held-out training questions (tune, not a result)" : "dev";
    io.out(`HotpotQA ${split} (a CPU-sized reproduction, not the paper's setting): ${rows.join("; ")}\n`);
    io.out(
      `wrote ${TABLES.map((name) => join(args.out, name)).join(", ")} (${(table.timing.totalMs / 1000).toFixed(0)} s)\n`,
    );
    return 0;
  } finally {
    bar.done();
    await client.close();
    await model?.dispose?.();
  }
}
