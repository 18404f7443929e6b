import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { definedFields } from "@rubric/core";
import { PROMPT_LAYOUTS } from "@rubric/arco-heads";
import { z } from "zod";
import {
  ARCO_GYM_DEFAULT_METHODS,
  ARCO_GYM_METHODS,
  ARCO_GYM_MU_METHODS,
  GYM_RUNS_DIR,
  type ArcoGymMethod,
  type ArcoGymProgress,
  arcoGymConfig,
  ReproInputError,
  runArcoGym,
  writeArcoGymOutputs,
} from "@rubric/repro";
import { SidecarClient } from "@rubric/sidecar";
import { type CommandArgs, defineCommand, fixedOperand } from "../flags/command.js";
import { choiceFlag, integerFlag, listFlag, MAX_SEEDS, numberFlag, switchFlag, textFlag } from "../flags/flag.js";
import { ggufFileOf, muPoolingFlag } from "../flags/mu-flags.js";
import { type CliIO, findShared, InputFileError, UsageError } from "../io.js";
import { progressBar } from "../progress.js";
import { OutputExistsError, prepareResultFiles } from "../results/result-files.js";

const gymFlags = {
  out: textFlag("<dir>", "where table.json, table.md, success.svg, curves.svg and credit.svg go").required(),
  quick: switchFlag("H = 2 and 4, 6 seeds, 100 evaluation tasks (about a minute and a half on 2 cores)"),
  hops: listFlag("<h,…>", "chain lengths H to run, each on its own (default 2,3,4; 2,4 with --quick)"),
  seeds: integerFlag("<n>", "training seeds 1..n (default 16; 6 with --quick)", { min: 1, max: MAX_SEEDS }),
  seed: integerFlag(
    "<s>",
    "the generator's seed: evaluation tasks are its eval stream, training tasks its train stream (default 1)",
    { min: 0 },
  ),
  trainTasks: integerFlag("<n>", "training tasks per seed and H (default 32)", { min: 1 }),
  evalTasks: integerFlag("<n>", "evaluation tasks per H, the same for every seed (default 200; 100 with --quick)", {
    min: 1,
  }),
  budget: integerFlag(
    "<n>",
    "training rollouts per method, a multiple of 4 × --train-tasks (default 512, fixed by tools/arco-gym-budget.ts)",
    { min: 1 },
  ),
  lr: numberFlag(
    "<x>",
    "π's learning rate, every method (default 0.1)",
    (n) => Number.isFinite(n) && n > 0,
    "a positive number",
  ),
  mcRollouts: integerFlag("<n>", "the true-advantage control's continuations per Q and V estimate (default 8)", {
    min: 1,
  }),
  probeRollouts: integerFlag(
    "<n>",
    "the credit probe's continuations per Q and V estimate, for the true advantage and its reference (default 64)",
    { min: 1 },
  ),
  methods: listFlag(
    "<a,b,…>",
    `methods to run (default ${ARCO_GYM_DEFAULT_METHODS.join(", ")}; known: ${ARCO_GYM_METHODS.join(", ")}; ${ARCO_GYM_MU_METHODS.join(" and ")} train μ in the sidecar: minutes per H on 2 cores)`,
  ),
  wordVectors: textFlag(
    "<dir|none>",
    "μ's pretrained word vectors (default: the shared GloVe subset, models/glove-6b-100d); none: random token embeddings",
  ),
  muBackbone: textFlag(
    "<file.gguf>",
    "ours: a pretrained llama GGUF (F32/F16) as μ's backbone in place of the small transformer from scratch, e.g. ../shared/models/stories260K.gguf; its vocabulary replaces the word vectors",
  ),
  muEpochs: integerFlag("<n>", "μ's warm-up epochs (default 6; 3 with --quick)", { min: 1 }),
  muTasks: integerFlag("<n>", "tasks of the noisy teacher μ's warm-up reads, per H (default 192)", { min: 1 }),
  muPooling: muPoolingFlag(),
  muPromptLayout: choiceFlag(
    "<layout>",
    "where the action stands in μ's step prompt: arco (default: the action, then the instructions) | action-last (ours: the instructions, then the action, so --mu-pooling last reads the state at the action)",
    z.enum(PROMPT_LAYOUTS),
  ),
  muPretrainTasks: integerFlag(
    "<n>",
    "ours (ARCO's μ starts from a pretrained LM): pretrain μ as a language model on the text of n tasks of their own stream before its warm-up (default 0: none)",
    { min: 0 },
  ),
  muPretrainEpochs: integerFlag("<n>", "passes of that pretraining (default 1)", { min: 1 }),
  threads: integerFlag("<n>", "torch threads of the sidecar (default: the cores)", { min: 1 }),
  resume: switchFlag(
    "continue the run in <dir> with the same flags: its finished runs kept, the rest trained (replaces the tables)",
  ),
  force: switchFlag(
    "replace an earlier run in <dir>, its tables and its finished runs (default: refuse, before any training)",
  ),
};

export type ReproArcoGymArgs = CommandArgs<typeof gymFlags, "experiment", "arco-gym">;

export const reproArcoGymCommand = defineCommand({
  name: "repro arco-gym",
  usage: "--out <dir> [--quick] [--hops 2,3,4] [--seeds n] [--seed s] [options]",
  description: `ARCO's question in the ARCO gym, a simulation: procedurally generated multi-hop worlds
of fictional entities, where a search for a name's first word alone finds a look-alike two times
in three. Per chain length H and seed, a warm-up imitates a careless teacher, then each method
trains a copy of it for the same rollout budget and is evaluated greedily on evaluation tasks that
no seed trains or selects on. It measures the value of dense credit first: outcome-only RL (GRPO
groups) against the true-advantage control (Monte-Carlo step advantages as the dense signal),
with a paired t-test over seeds; the teacher's hindsight scores are the other control. The learned
critics (--methods rar,frozenMu,arco,arcoOutcome) train μ in the sidecar: one warm-up per H on the
teacher's annotated episodes, token embeddings from GloVe vectors; muValue (ours) is the same μ
warmed up on each step's outcome and trained as a value, a step's credit the change of μ's value
it brought; muAdvantage (ours, a diagnostic control) is the same μ told each step's true advantage
under the teacher, frozen: can it read credit at all? Each warm-up μ's fit to its own targets is
reported, on its episodes and on fresh ones. The feature critics (--methods
featureMu,featureArco,featureNoPrefix,valueDifference; a labelled variant, no sidecar) fit the same
loss on the same episodes' outcomes over the policy's own step features, or the action's alone, or
fit a state value whose changes are the steps' credit. Every critic's
credit is measured against the true advantage. Writes <dir>/table.json, table.md and the plots; \`rubric report <dir>\`
renders them. Each run (H, seed, method) is kept in <dir>/runs/ as it finishes: --resume continues a
stopped run from there.`,
  positional: {
    key: "experiment",
    label: "arco-gym",
    description: "the experiment",
    schema: fixedOperand("arco-gym", (given) => `arco-gym takes no further operands; got ${JSON.stringify(given)}`),
  },
  flags: gymFlags,
  footer: "Exit codes: 0 done, 1 bad input, 2 usage error.",
  run: (args, { io, isTTY }) => reproArcoGym(args, io, isTTY),
});

/** The hop counts as numbers; which ones a run can honour is `arcoGymConfig`'s to say (as `--hops`). */
function hopsOf(given: readonly string[] | undefined): number[] | undefined {
  return given?.map((text) => {
    const h = Number(text);
    if (text.trim() === "" || !Number.isFinite(h))
      throw new UsageError(`--hops: expected integers, got ${JSON.stringify(text)}`);
    return h;
  });
}

function methodsOf(given: readonly string[] | undefined): ArcoGymMethod[] | undefined {
  if (given === undefined) return undefined;
  for (const method of given)
    if (!(ARCO_GYM_METHODS as readonly string[]).includes(method))
      throw new UsageError(
        `--methods: unknown method ${JSON.stringify(method)}; known: ${ARCO_GYM_METHODS.join(", ")}`,
      );
  return given as ArcoGymMethod[];
}

/** The word-vector directory μ starts from: the flag, `none`, or the shared GloVe subset. */
function wordVectorsOf(given: string | undefined): string | null {
  if (given === "none") return null;
  if (given !== undefined) return given;
  const found = findShared("models", "glove-6b-100d", "words.txt");
  if (found === undefined)
    throw new InputFileError(
      "cannot find the shared GloVe vectors (models/glove-6b-100d): pass --word-vectors <dir>, --word-vectors none, or set RUBRIC_SHARED_DIR",
    );
  return found;
}

/**
 * `--mu-backbone`'s file, made absolute (the sidecar reads it from its own working directory). A
 * llama brings its own token embeddings, so word vectors beside it are a usage error.
 */
function backboneOf(file: string, wordVectors: string | undefined): string {
  if (wordVectors !== undefined && wordVectors !== "none")
    throw new UsageError(
      "--word-vectors: a --mu-backbone llama has its own token embeddings; leave --word-vectors out",
    );
  return ggufFileOf("--mu-backbone", file);
}

const TABLES = ["table.json", "table.md", "success.svg", "curves.svg", "credit.svg"];

/** `rubric repro arco-gym`. */
export async function reproArcoGym(args: ReproArcoGymArgs, io: CliIO, isTTY: boolean): Promise<number> {
  let config: ReturnType<typeof arcoGymConfig>;
  const methods = methodsOf(args.methods);
  try {
    config = arcoGymConfig({
      quick: args.quick,
      ...definedFields({
        hops: hopsOf(args.hops),
        seeds: args.seeds,
        seed: args.seed,
        trainTasks: args.trainTasks,
        evalTasks: args.evalTasks,
        budget: args.budget,
        learningRate: args.lr,
        trueAdvantageRollouts: args.mcRollouts,
        creditProbeRollouts: args.probeRollouts,
        methods,
      }),
      // The word vectors are looked for only when a method trains μ.
      mu: {
        ...(args.muBackbone !== undefined
          ? { backbone: backboneOf(args.muBackbone, args.wordVectors), wordVectors: null }
          : methods?.some((m) => ARCO_GYM_MU_METHODS.includes(m))
            ? { wordVectors: wordVectorsOf(args.wordVectors) }
            : {}),
        ...definedFields({
          sftEpochs: args.muEpochs,
          sftTasks: args.muTasks,
          pooling: args.muPooling,
          promptLayout: args.muPromptLayout,
          pretrainTasks: args.muPretrainTasks,
          pretrainEpochs: args.muPretrainEpochs,
        }),
      },
    });
  } catch (error) {
    // A setting the run cannot honour (a budget of partial epochs, a hop count twice) is a usage
    // error, named by its flag.
    if (error instanceof ReproInputError) {
      const setting = error.path.replace(/\[\d+\]$/u, "");
      throw new UsageError(`${FLAG_OF[setting] ?? setting}: ${error.message.slice(error.path.length + 2)}`);
    }
    throw error;
  }
  const learned = config.methods.filter((m) => ARCO_GYM_MU_METHODS.includes(m));
  // A resumed run continues the one in <dir>, so its tables are meant to be replaced; a fresh
  // start would discard an earlier run's finished pieces, so it asks for --force.
  prepareResultFiles(
    TABLES.map((name) => ({ path: join(args.out, name), what: `a table of an earlier run (${name})` })),
    args.force || args.resume,
  );
  const earlierRuns = join(args.out, GYM_RUNS_DIR);
  if (!args.resume && !args.force && existsSync(earlierRuns))
    throw new OutputExistsError(
      earlierRuns,
      "holds an earlier run's finished runs; pass --resume to continue that run, --force to replace it, or choose another --out",
    );
  io.err(
    `ARCO gym (a simulation): H ${config.hops.join(", ")}, ${config.seeds.length} seed${config.seeds.length === 1 ? "" : "s"}, ${config.rl.budget} rollouts per method\n`,
  );
  const bar = progressBar(io, isTTY);
  let label = "";
  const client =
    learned.length > 0 ? await SidecarClient.start({ threads: args.threads ?? availableParallelism() }) : undefined;
  try {
    const table = await runArcoGym(config, {
      ...(client === undefined ? {} : { client }),
      out: args.out,
      resume: args.resume,
      onProgress: (progress: ArcoGymProgress) => {
        if (progress.type === "mu") {
          const stage = progress.stage === "pretrain" ? "μ's language-model pretraining" : "μ's warm-up";
          bar.update(progress.epoch, progress.of, `${stage} for H = ${progress.hops}`, "epochs");
        } else if (progress.type === "run") {
          label = `run ${progress.index} of ${progress.total}: H = ${progress.hops}, seed ${progress.seed}, ${progress.method}${progress.kept ? " (kept from the earlier run)" : ""}`;
          bar.update(0, 1, label, "");
        } else bar.update(progress.done, progress.total, label, "");
      },
    });
    bar.done();
    await writeArcoGymOutputs(args.out, table);
    const rows = table.valueOfDenseCredit.map(
      (row) =>
        `H=${row.hops} outcome ${(100 * row.outcome.mean).toFixed(1)} vs true advantage ${(100 * row.trueAdvantage.mean).toFixed(1)} (p ${row.p === null ? "n/a" : row.p.toPrecision(2)})`,
    );
    io.out(`value of dense credit (a simulation; success %, greedy, mean over seeds): ${rows.join("; ")}\n`);
    io.out(
      `wrote ${TABLES.map((name) => join(args.out, name)).join(", ")} (${(table.timing.totalMs / 1000).toFixed(0)} s)\n`,
    );
    return 0;
  } finally {
    bar.done();
    await client?.close();
  }
}

/** The flag that sets each setting `arcoGymConfig` checks. */
const FLAG_OF: Readonly<Record<string, string>> = {
  hops: "--hops",
  seeds: "--seeds",
  trainTasks: "--train-tasks",
  evalTasks: "--eval-tasks",
  budget: "--budget",
  learningRate: "--lr",
  "trueAdvantage.rollouts": "--mc-rollouts",
  creditProbeRollouts: "--probe-rollouts",
  methods: "--methods",
  "mu.sftEpochs": "--mu-epochs",
  "mu.sftTasks": "--mu-tasks",
  "mu.pooling": "--mu-pooling",
  "mu.promptLayout": "--mu-prompt-layout",
  "mu.pretrainTasks": "--mu-pretrain-tasks",
  "mu.pretrainEpochs": "--mu-pretrain-epochs",
  "mu.wordVectors": "--word-vectors",
};
