import { join } from "node:path";
import { OBJECTIVES, type Objective } from "@rubric/gspo";
import {
  arcaneConfig,
  methodLabels,
  arcaneLlmMarkdown,
  runArcane,
  runArcaneWithModel,
  trainArcaneManagers,
  ArcaneTableSchema,
  arcaneTrainingSvg,
  arcaneMarkdown,
  scalingSvg,
  sidecarManagerConfig,
  sidecarManagerMarkdown,
  SidecarManagerTableSchema,
  runSidecarManager,
  type ArcaneConfig,
  type ArcaneProgress,
} from "@rubric/repro";
import { loadGdpval } from "@rubric/autointeract";
import { parseProviderSpec, providerFromSpec } from "@rubric/providers";
import { preflightModel } from "../flags/judge-flags.js";
import { ErrorPolicySchema } from "@rubric/core";
import { z } from "zod";
import { EXIT } from "../exit-codes.js";
import { type CommandArgs, defineCommand, fixedOperand } from "../flags/command.js";
import { choiceFlag, integerFlag, listFlag, numberFlag, switchFlag, textFlag, MAX_SEEDS } from "../flags/flag.js";
import { LLAMA_CPP_GDPVAL_CONTEXT, UsageError, gdpvalDir, gdpvalTaskFlag, type CliIO } from "../io.js";
import { progressBar } from "../progress.js";
import { prepareResultFiles, writeResultFile } from "../results/result-files.js";

const positive = (value: string, description: string) =>
  numberFlag(value, description, (n) => Number.isFinite(n) && n > 0, "a positive number");

const reproFlags = {
  out: textFlag("<dir>", "where the tables, the plot and the runs go").required(),
  quick: switchFlag(
    "2 seeds, 6 SFT epochs, 12 GSPO batches (about a minute here); with --manager sidecar 24 SFT epochs and 6 GSPO batches (about a quarter of an hour)",
  ),
  seeds: integerFlag("<n>", "seeds 1..n (default 5; 2 with --quick)", { min: 1, max: MAX_SEEDS }),
  objective: choiceFlag(
    "<name>",
    "gspo (default) | grpo | dr-grpo",
    z.enum(OBJECTIVES as readonly [Objective, ...Objective[]]),
  ).default("gspo"),
  epsLow: positive("<x>", "clipping band below 1 (default 3e-4, the paper's)"),
  epsHigh: positive("<x>", "clipping band above 1 (default 4e-4, the paper's)"),
  epsSweep: listFlag(
    "<lo:hi,…|none>",
    "other clipping bands to train GSPO under for the sensitivity table (default 3e-3:4e-3,0.2:0.28)",
  ),
  batches: integerFlag("<n>", "GSPO batches per seed (default 40; 12 with --quick)", { min: 1 }),
  sftLearningRate: positive("<x>", "Stage I (SFT) learning rate (default: the manager's own; 1e-5 with --model)"),
  learningRate: positive("<x>", "Stage II (GSPO) learning rate (default: the manager's own; 1e-6 with --model)"),
  resume: switchFlag("continue each seed from its latest checkpoint in <dir>/runs (replaces the tables)"),
  force: switchFlag("replace the tables of an earlier run in <dir> (default: refuse, before any training)"),
  keepCheckpoints: choiceFlag(
    "<which>",
    "latest (default: each training stage keeps only its newest checkpoint) | all (one per SFT epoch and GSPO batch)",
    z.enum(["latest", "all"]),
  ).default("latest"),
  gdpval: textFlag("<dir>", "GDPval data (default $RUBRIC_SHARED_DIR/data/gdpval or ../shared/data/gdpval)"),
  manager: choiceFlag(
    "<kind>",
    "bank (default: the in-process log-linear manager) | sidecar (a causal transformer in the torch sidecar that asks and writes its rubric as JSON text, SFT then GSPO end to end)",
    z.enum(["bank", "sidecar"]),
  ).default("bank"),
  model: textFlag(
    "<name|dir>",
    "--manager sidecar: a transformers causal LM (a Hugging Face name, or a local directory) instead of the small transformer, with its own tokenizer; needs transformers in the sidecar's Python (the GPU recipe)",
  ),
  device: textFlag(
    "<name>",
    "--manager sidecar: torch's device for the manager (default auto: the GPU when there is one)",
  ),
  dtype: choiceFlag(
    "<type>",
    "--manager sidecar: float32 (default) | bfloat16 | float16 | float64",
    z.enum(["float32", "bfloat16", "float16", "float64"]),
  ),
  python: textFlag(
    "<path>",
    "--manager sidecar: the sidecar's Python (default /usr/bin/python3 when it exists, else python3 on PATH)",
  ),
  provider: textFlag(
    "<spec>",
    "LLM roles: llama-cpp:<file.gguf> | hf:<model>[@<provider>] | openai-compatible:<baseUrl>#<model>",
  ),
  tasks: integerFlag("<n>", "--provider: the first n eval tasks (default 2)", { min: 1 }).default(2),
  taskIds: listFlag("<a,b,…>", "--provider: eval tasks by id or unique id prefix instead"),
  maxN: integerFlag("<n>", "--provider: largest best-of-N (default 8; N runs over 1, 2, 4, … up to it)", {
    min: 1,
  }).default(8),
  errorsAs: choiceFlag(
    "<policy>",
    "--provider: fail (default: an output with an error verdict has no U*) | renormalize",
    ErrorPolicySchema.extract(["fail", "renormalize"]),
    "an error is never counted as 0",
  ).default("fail"),
  contextSize: integerFlag(
    "<n>",
    `--provider: llama-cpp context window (default ${LLAMA_CPP_GDPVAL_CONTEXT}: GDPval prompts run to several thousand tokens)`,
    { min: 256 },
  ).default(LLAMA_CPP_GDPVAL_CONTEXT),
  threads: integerFlag("<n>", "--provider: llama-cpp CPU threads (default half the cores)", { min: 1 }),
};

export type ReproArgs = CommandArgs<typeof reproFlags, "experiment", "arcane">;

export const reproCommand = defineCommand({
  name: "repro",
  usage: "arcane --out <dir> [options]",
  description: `Reproduces the ARCANE tables. By default in the rubric gym: SFT then GSPO of the in-process manager
on the 175 training tasks, best-of-N on the 44 eval tasks for No Rubric / SFT / GSPO / Oracle.
Writes <dir>/table.json, <dir>/table.md, <dir>/scaling.svg, and per seed <dir>/runs/seed-<n>/
(log.jsonl logs and the latest checkpoint of each stage, about 1 MB each; every epoch's and
batch's with --keep-checkpoints all); <dir>/training.svg plots those logs (SFT loss per epoch,
GSPO mean reward and KL per batch, one line per seed).

With --provider, LLM roles on real GDPval eval tasks and their gold rubrics: one seed of SFT + GSPO
managers is trained in the gym first (the gym flags apply; --quick trains the quick way), then the
model plays stakeholder, an untrained manager, worker and judge beside the trained managers.
A llama-cpp model keeps 3 prompt states for prefix reuse, and its judge's rationales are held
to 200 characters so that a grammar-bound verdict always fits its token budget.

With --manager sidecar, the manager is a small causal transformer in the torch sidecar (Debian's
python3-torch; a CPU is enough): it asks its questions and writes its rubric as JSON text, is
trained by SFT on the gym's teacher dialogues and then by GSPO on the gym's reward, and is
evaluated on the eval tasks beside No Rubric and the oracle. A rubric that does not parse gets the
floor (U* = 0) and is counted. Writes <dir>/table.json and <dir>/table.md.`,
  positional: {
    key: "experiment",
    label: "arcane",
    description: "the experiment (one so far: arcane)",
    schema: fixedOperand("arcane", (given) => `knows one experiment, arcane; got ${JSON.stringify(given)}`),
  },
  flags: reproFlags,
  footer: "Exit codes: 0 done, 1 bad input, 2 usage error or (with --provider) some scores could not be computed.",
  run: (args, { io, isTTY }) => repro(args, io, isTTY),
});

/** `rubric repro arcane --manager sidecar`: the LLM manager trained end to end in the gym. */
async function reproSidecarManager(
  args: ReproArgs,
  data: string,
  io: CliIO,
  bar: Bar,
  replace: boolean,
): Promise<number> {
  if (args.seeds !== undefined && args.seeds > 1)
    throw new UsageError("--manager sidecar trains one seed (seed 1); leave out --seeds or pass --seeds 1");
  const config = sidecarManagerConfig({
    quick: args.quick,
    seed: 1,
    objective: args.objective,
    epsLow: args.epsLow,
    epsHigh: args.epsHigh,
    gspoBatches: args.batches,
    sftLearningRate: args.sftLearningRate,
    learningRate: args.learningRate,
    transformersModel: args.model ?? null,
    device: args.device,
    dtype: args.dtype,
    python: args.python,
  });
  const model =
    config.transformersModel === null
      ? `a ${config.model.layers}-layer transformer, d=${config.model.dModel}`
      : `the transformers model ${config.transformersModel}`;
  io.err(
    `ARCANE with an LLM manager in the torch sidecar (${model}, device ${config.device}): ${config.sftEpochs} SFT epochs on the teacher dialogues, ${config.gspoBatches} ${config.objective.toUpperCase()} batches of ${config.promptsPerBatch} tasks × ${config.groupSize} dialogues, ε = ${config.epsLow}/${config.epsHigh}\n`,
  );
  const table = await runSidecarManager({
    gdpvalDir: data,
    config,
    onProgress: (event) => {
      if (event.phase === "sft" || event.phase === "gspo")
        bar.update(
          event.done,
          event.total,
          event.phase === "sft" ? "SFT epochs" : `${config.objective.toUpperCase()} batches`,
          event.entry.stage === "sft"
            ? `loss ${event.entry.loss.toFixed(3)}`
            : `reward ${event.entry.meanReward.toFixed(3)} clipped ${(100 * event.entry.clippedFraction).toFixed(0)}%`,
        );
      else bar.update(0, 1, event.phase === "prepare" ? "preparing" : event.phase.replace("-", " "), "");
    },
  });
  bar.done();
  const paths = { json: join(args.out, "table.json"), markdown: join(args.out, "table.md") };
  writeResultFile(paths.json, `${JSON.stringify(SidecarManagerTableSchema.parse(table), null, 2)}\n`, replace);
  writeResultFile(paths.markdown, sidecarManagerMarkdown(table), replace);
  const r = table.rows;
  const at = (row: { meanReturn: number[] }) => row.meanReturn.map((x) => x.toFixed(3)).join(" / ");
  const unparsed = (w: { counts: { unparseable: number; episodes: number } }) =>
    `${w.counts.unparseable}/${w.counts.episodes}`;
  io.out(
    `Rubric gym, a simulation, LLM manager (sidecar) — mean return at N=${r.sft.n.join(" / N=")}: No Rubric ${at(r.noRubric)}, SFT ${at(r.sft)}, ${config.objective.toUpperCase()} ${at(r.gspo)}, Oracle ${at(r.oracle)}; rubric turns not parsed: SFT ${unparsed(table.written.sft)}, ${config.objective.toUpperCase()} ${unparsed(table.written.gspo)}\n`,
  );
  io.out(`wrote ${paths.json}, ${paths.markdown} (${table.seconds.total.toFixed(0)} s)\n`);
  return 0;
}

/** 1, 2, 4, … up to and including `max` (added when it is not a power of two). */
function powersOfTwo(max: number): number[] {
  const ns: number[] = [];
  for (let n = 1; n < max; n *= 2) ns.push(n);
  return [...ns, max];
}

type Bar = ReturnType<typeof progressBar>;

/** What a run writes in <dir> besides runs/: refused if an earlier run's are there, unless --force or --resume. */
const GYM_TABLES = ["table.json", "table.md", "scaling.svg", "training.svg"];
const SIDECAR_TABLES = ["table.json", "table.md"];
const PROVIDER_TABLES = ["table.json", "table.md"];

/** `rubric repro arcane`: the gym reproduction, or with `--provider` the LLM-roles pipeline. */
export async function repro(args: ReproArgs, io: CliIO, isTTY: boolean): Promise<number> {
  const bar = progressBar(io, isTTY);
  try {
    return await reproWith(args, io, bar);
  } finally {
    bar.done();
  }
}

async function reproWith(args: ReproArgs, io: CliIO, bar: Bar): Promise<number> {
  const data = gdpvalDir(args.gdpval);
  const config = gymConfig(args);
  if (args.manager === "sidecar" && args.provider !== undefined)
    throw new UsageError("--manager sidecar trains its manager in the gym; it does not take --provider");
  const sidecarOnly = (["model", "device", "dtype", "python"] as const).filter((k) => args[k] !== undefined);
  if (args.manager !== "sidecar" && sidecarOnly.length > 0)
    throw new UsageError(`--${sidecarOnly[0]} is for --manager sidecar (the manager in the torch sidecar)`);
  const tables =
    args.manager === "sidecar" ? SIDECAR_TABLES : args.provider === undefined ? GYM_TABLES : PROVIDER_TABLES;
  // A resumed run continues the one in <dir>, so its tables are meant to be replaced.
  const replace = args.force || args.resume;
  prepareResultFiles(
    tables.map((name) => ({ path: join(args.out, name), what: `a table of an earlier run (${name})` })),
    replace,
  );
  if (args.provider !== undefined) return reproWithProvider(args, args.provider, config, data, args.out, io, bar);
  if (args.manager === "sidecar") return reproSidecarManager(args, data, io, bar, replace);
  io.err(
    `ARCANE in the rubric gym: ${config.seeds.length} seed(s), ${config.sftEpochs} SFT epochs, ${config.gspoBatches} ${config.objective.toUpperCase()} batches of ${config.promptsPerBatch} tasks × ${config.groupSize} rubrics, ε = ${config.epsLow}/${config.epsHigh}\n`,
  );
  const table = await runArcane({
    gdpvalDir: data,
    config,
    runDir: join(args.out, "runs"),
    resume: args.resume,
    keepCheckpoints: args.keepCheckpoints,
    onProgress: trainingProgress(bar, config),
  });
  bar.done();
  const paths = {
    json: join(args.out, "table.json"),
    markdown: join(args.out, "table.md"),
    svg: join(args.out, "scaling.svg"),
  };
  writeResultFile(paths.json, `${JSON.stringify(ArcaneTableSchema.parse(table), null, 2)}\n`, replace);
  writeResultFile(paths.markdown, arcaneMarkdown(table), replace);
  writeResultFile(paths.svg, await scalingSvg(table), replace);
  // Drawn from the logs just written under runs/, as `rubric report` draws it from the same files.
  const trainingSvg = await arcaneTrainingSvg(table, join(args.out, "runs"));
  const training = join(args.out, "training.svg");
  if (trainingSvg !== undefined) writeResultFile(training, trainingSvg, replace);
  const m = table.meanReturn;
  const trained = methodLabels(table).gspo;
  const voi = table.valueOfInformation.n8;
  const vs = table.wilcoxon.gspoVsControls;
  const diff = (t: { meanDifference: number; pValue: number | null }) =>
    `${t.meanDifference >= 0 ? "+" : ""}${t.meanDifference.toFixed(3)} (p ${t.pValue === null ? "n/a" : t.pValue.toPrecision(2)})`;
  io.out(
    `Rubric gym, a simulation — mean return at N=8 (N=1): No Rubric ${m.noRubric.n8.mean.toFixed(3)} (${m.noRubric.n1.mean.toFixed(3)}), SFT ${m.sft.n8.mean.toFixed(3)} (${m.sft.n1.mean.toFixed(3)}), ${trained} ${m.gspo.n8.mean.toFixed(3)} (${m.gspo.n1.mean.toFixed(3)}), Oracle ${m.oracle.n8.mean.toFixed(3)} (${m.oracle.n1.mean.toFixed(3)})\n`,
  );
  io.out(
    `NDCG@8: no dialogue ${table.ndcg8.noDialogue.mean.toFixed(3)}, SFT ${table.ndcg8.sft.mean.toFixed(3)}, ${trained} ${table.ndcg8.gspo.mean.toFixed(3)}; Wilcoxon ${trained} vs SFT ${table.wilcoxon.gspoVsSft.pValue === null ? "not defined (no task differs)" : `p = ${table.wilcoxon.gspoVsSft.pValue.toPrecision(3)}`}\n`,
  );
  io.out(
    `Controls at N=8: ${trained} − no questions ${diff(vs.gspoNoQuestions)}, − uninformative replies ${diff(vs.gspoUninformative)}, − best fixed rubric ${diff(vs.fixedRubric)}, − SFT on oracle ${diff(vs.sftOracle)}; value of information ${voi.gap.toFixed(3)} (fixed rubric ${voi.noDialogue.toFixed(3)} → oracle ${voi.fullPreferences.toFixed(3)})\n`,
  );
  io.out(
    `wrote ${paths.json}, ${paths.markdown}, ${paths.svg}${trainingSvg === undefined ? "" : `, ${training}`} (${table.timing.seconds.toFixed(0)} s)\n`,
  );
  return 0;
}

/** The gym configuration from the flags (also what `--provider` trains its managers with). */
function gymConfig(args: ReproArgs): ArcaneConfig {
  const { seeds, batches, epsLow, epsHigh } = args;
  return arcaneConfig({
    quick: args.quick,
    objective: args.objective,
    seeds,
    gspoBatches: batches,
    sftLearningRate: args.sftLearningRate,
    learningRate: args.learningRate,
    epsLow,
    epsHigh,
    epsSweep: bandsOf(args.epsSweep),
  });
}

/** `--eps-sweep`: "lo:hi" pairs with 0 < lo and 0 < hi, or "none". */
function bandsOf(given: readonly string[] | undefined): [number, number][] | undefined {
  if (given === undefined) return undefined;
  if (given.length === 1 && given[0] === "none") return [];
  return given.map((band) => {
    const [lo, hi, ...rest] = band.split(":").map(Number);
    if (rest.length > 0 || !(lo! > 0) || !(hi! > 0))
      throw new UsageError(`--eps-sweep: expected lo:hi pairs of positive numbers (or none), got "${band}"`);
    return [lo!, hi!];
  });
}

/** Gym training and evaluation on the bar: loss per SFT epoch, reward and clipping per batch. */
function trainingProgress(bar: Bar, config: ArcaneConfig): (e: ArcaneProgress) => void {
  return (e) => {
    if (e.phase === "prepare") return;
    const detail =
      e.phase === "evaluate" || e.phase === "fixed-rubric"
        ? undefined
        : e.entry.stage === "sft"
          ? `loss ${e.entry.loss.toFixed(3)}`
          : `reward ${e.entry.meanReward.toFixed(3)} clipped ${(100 * e.entry.clippedFraction).toFixed(0)}%`;
    const what = {
      sft: "SFT epochs",
      "sft-oracle": "SFT-on-oracle epochs (control)",
      "eps-sweep": `${config.objective.toUpperCase()} batches (another ε band)`,
      gspo: `${config.objective.toUpperCase()} batches`,
      "fixed-rubric": "fixed-rubric criteria (control, on training tasks)",
      evaluate: "eval tasks",
    }[e.phase];
    bar.update(e.done, e.total, `seed ${e.seed} ${what}`, detail);
  };
}

/** `--provider`: one seed's managers trained in the gym, then the LLM-roles pipeline on real eval tasks. */
async function reproWithProvider(
  args: ReproArgs,
  spec: string,
  gym: ArcaneConfig,
  data: string,
  out: string,
  io: CliIO,
  bar: Bar,
): Promise<number> {
  const local = parseProviderSpec(spec).kind === "llama-cpp";
  // Before the minutes of training: a model that cannot answer would fail every role.
  await preflightModel("--provider", spec, io);
  const { contextSize, threads, errorsAs, taskIds, tasks, maxN } = args;
  // One seed: the LLM stage is the expensive part, and a second seed would double it.
  const config = { ...gym, seeds: gym.seeds.slice(0, 1) };
  // Check the task ids before the minutes of training, in flag terms.
  if (taskIds !== undefined) {
    const { eval: evalTasks } = await loadGdpval(data);
    for (const id of taskIds) gdpvalTaskFlag(evalTasks, id, "--task-ids", "eval");
  }
  const seed = config.seeds[0]!;
  io.err(
    `Training the managers in the rubric gym (seed ${seed}: ${config.sftEpochs} SFT epochs, ${config.gspoBatches} ${config.objective.toUpperCase()} batches)\n`,
  );
  const managers = await trainArcaneManagers(seed, {
    gdpvalDir: data,
    // The LLM table has no ε sensitivity rows: the other bands' managers would go unused.
    config: { ...config, epsSweep: [] },
    runDir: join(out, "runs"),
    resume: args.resume,
    keepCheckpoints: args.keepCheckpoints,
    onProgress: trainingProgress(bar, config),
  });
  bar.done();
  // A local model keeps a prompt state per role (manager, stakeholder, worker and judge) so that
  // shared prefixes — the task brief above all — are evaluated once.
  const model = providerFromSpec(spec, local ? { llamaCpp: { contextSize, promptCache: 3, threads } } : {});
  try {
    io.err(
      `LLM roles: ${model.modelId} on ${taskIds ? taskIds.join(", ") : `the first ${tasks} eval task(s)`}, N up to ${maxN}\n`,
    );
    const table = await runArcaneWithModel({
      gdpvalDir: data,
      model,
      ...(taskIds ? { taskIds } : { tasks }),
      ns: powersOfTwo(maxN),
      errorsAs,
      managers,
      ...(local ? { judge: { rationaleMaxLength: 200 } } : {}),
      onProgress: (e) => bar.update(e.done, e.total, `tasks — ${e.task.slice(0, 8)}: ${e.step}`),
    });
    bar.done();
    const replace = args.force || args.resume;
    writeResultFile(join(out, "table.json"), `${JSON.stringify(table, null, 2)}\n`, replace);
    const markdown = arcaneLlmMarkdown(table);
    writeResultFile(join(out, "table.md"), markdown, replace);
    io.out(markdown);
    io.out(`\nwrote ${join(out, "table.json")} and ${join(out, "table.md")}\n`);
    const errors = table.tasks.reduce((n, t) => n + t.errors.length, 0);
    if (errors > 0)
      io.err(`${errors} score(s) could not be computed; they are listed in table.md and never counted as 0.\n`);
    return errors > 0 ? EXIT.errorVerdicts : EXIT.ok;
  } finally {
    await model.dispose?.();
  }
}
