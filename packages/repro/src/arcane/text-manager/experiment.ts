import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import {
  gymSftCorpus,
  gymTask,
  loadGdpval,
  simulatedStakeholder,
  simulatedWorker,
  type SftExample,
  type Worker,
} from "@rubric/autointeract";
import { approximateTokens, createRng, definedFields, mean, type FlatRubric } from "@rubric/core";
import {
  QUESTION_REPERTOIRE,
  SidecarBackend,
  gymPrompt,
  trainGspo,
  trainSftStage,
  trueUtility,
  type GymPrompt,
  type TrainingLogEntry,
} from "@rubric/gspo";
import { z } from "zod";
import { guidedReturns } from "../controls.js";
import { STAGE_II_DEFAULTS, type ArcaneConfig } from "../config.js";
import { PAPER } from "../table.js";
import {
  SidecarManager,
  bpeManagerTokenizer,
  episodeTokens,
  readRubricTurn,
  sidecarManagerTokenizer,
  trainManagerTokenizer,
  type ManagerTokenizer,
  type ManagerEpisode,
  type ReadRubric,
} from "./manager.js";

/** U* an episode gets when its rubric turn does not parse (or reads as no rule): the lowest utility there is. */
export const UNPARSEABLE_UTILITY = 0;

/** What the sidecar run shares with the gym run's configuration (the same meanings, other defaults). */
type SharedSettings = Pick<
  ArcaneConfig,
  | "sftEpochs"
  | "sftLearningRate"
  | "gspoBatches"
  | "promptsPerBatch"
  | "groupSize"
  | "stepsPerBatch"
  | "learningRate"
  | "objective"
  | "epsLow"
  | "epsHigh"
  | "klCoef"
  | "clarifyCostPerToken"
  | "computeCostPerToken"
  | "ns"
  | "trainTasks"
  | "evalTasks"
>;

/** How `rubric repro arcane --manager sidecar` runs; `sidecarManagerConfig` fills the defaults. */
export interface SidecarManagerConfig extends SharedSettings {
  readonly quick: boolean;
  readonly seed: number;
  /**
   * A transformers causal LM (a Hugging Face name, or a local directory) in place of the sidecar's
   * small transformer, with its own tokenizer: the GPU recipe (needs transformers in the sidecar's
   * Python). Null: the small transformer with a BPE learnt from the teacher dialogues.
   */
  readonly transformersModel: string | null;
  /** torch's device for the policy: "auto" (the GPU when there is one), "cpu", "cuda", "cuda:1", … */
  readonly device: string;
  readonly dtype: "float32" | "float64" | "bfloat16" | "float16";
  /** The sidecar's Python interpreter (default: Debian's /usr/bin/python3 when it exists, else python3). */
  readonly python?: string;
  /** The sidecar's small causal transformer (unused with `transformersModel`). */
  readonly model: {
    readonly dModel: number;
    readonly heads: number;
    readonly layers: number;
    readonly maxSequence: number;
  };
  /** Byte-level BPE ids, learnt from the teacher dialogues (the small transformer's). */
  readonly vocabularySize: number;
  readonly sftBatchSize: number;
  /** Teacher dialogues per training task for SFT, each with a stakeholder of its own. */
  readonly teacherStakeholders: number;
  readonly maxQuestionTokens: number;
  readonly maxRubricTokens: number;
  /** torch's threads in the sidecar. */
  readonly threads: number;
}

/**
 * Defaults. Quick (about a quarter of an hour on a CPU): 6 SFT epochs over 4 teacher dialogues per
 * training task, 6 GSPO batches of 8 tasks × 4 dialogues. Full: 12 epochs over 8 per task, 30
 * batches of 16 × 8. The band, KL and costs are the gym run's. With `transformersModel` the
 * learning rates default to a pretrained model's (SFT 1e-5, GSPO 1e-6): the small transformer's
 * (3e-3, 3e-4) would wreck one.
 */
export function sidecarManagerConfig(
  options: { quick?: boolean } & Partial<Omit<SidecarManagerConfig, "quick">> = {},
): SidecarManagerConfig {
  const quick = options.quick ?? false;
  const { quick: _, ...rest } = options;
  const pretrained = options.transformersModel !== undefined && options.transformersModel !== null;
  return {
    quick,
    seed: 1,
    transformersModel: null,
    device: "auto",
    dtype: "float32",
    model: { dModel: 64, heads: 4, layers: 2, maxSequence: 384 },
    // The teacher dialogues repeat their instructions, questions and phrases: with 2,048 ids a
    // rubric turn is about 15 tokens and a rubric prompt about 115 (1,024 ids: 55 and 225).
    vocabularySize: 2048,
    teacherStakeholders: quick ? 4 : 8,
    sftEpochs: quick ? 6 : 12,
    sftLearningRate: pretrained ? 1e-5 : 3e-3,
    sftBatchSize: 16,
    gspoBatches: quick ? 6 : 30,
    promptsPerBatch: quick ? 8 : 16,
    groupSize: quick ? 4 : 8,
    stepsPerBatch: 2,
    learningRate: pretrained ? 1e-6 : 3e-4,
    ...STAGE_II_DEFAULTS,
    maxQuestionTokens: 48,
    maxRubricTokens: 96,
    ns: [1, 8],
    threads: 2,
    ...definedFields(rest),
  };
}

/** What parsed and what did not, over a set of episodes. */
const CountsSchema = z.strictObject({
  episodes: z.number().int(),
  /** Rubric turns that were not JSON, failed the schema, or held no criterion that reads as a rule: U* = the floor. */
  unparseable: z.number().int(),
  /** Questions turns that did not parse (the episode then asked nothing). */
  questionsUnparsed: z.number().int(),
  /** Criteria left out because their text reads as no rule (the gym has no judge). */
  judgedCriteria: z.number().int(),
});
export type SidecarManagerCounts = z.infer<typeof CountsSchema>;
type Counts = SidecarManagerCounts;
/** Counts at zero, for {@link sidecarManagerReward}. */
export const emptyCounts = (): Counts => ({ episodes: 0, unparseable: 0, questionsUnparsed: 0, judgedCriteria: 0 });

const RowSchema = z.strictObject({ n: z.array(z.number().int()), meanReturn: z.array(z.number()) });
const WrittenSchema = z.strictObject({
  counts: CountsSchema,
  criteriaPerRubric: z.number(),
  tokensPerCriterion: z.number(),
  questionsAsked: z.number(),
  /** Mean U* of the pick per N over the episodes whose rubric parsed (null when none did): what the floor hides. */
  meanReturnWhenParsed: z.array(z.number()).nullable(),
  /** The first eval tasks' rubric turns as written, for reading. */
  examples: z.array(z.strictObject({ taskId: z.string(), questions: z.array(z.string()), rubric: z.string() })),
});

/** `table.json` of `rubric repro arcane --manager sidecar`. */
export const SidecarManagerTableSchema = z.strictObject({
  kind: z.literal("arcane-sidecar-manager"),
  simulation: z.string(),
  config: z.record(z.string(), z.unknown()),
  model: z.strictObject({
    /** "sidecar-tiny" (the small transformer), or the transformers model's name or directory. */
    name: z.string(),
    parameters: z.number().int(),
    vocabularySize: z.number().int(),
    /** torch's device the policy trained on. */
    device: z.string(),
  }),
  tasks: z.strictObject({ train: z.number().int(), eval: z.number().int() }),
  /** Mean U* of the pick over the eval tasks, per N; an unparseable rubric's episode counts at the floor. */
  rows: z.strictObject({ noRubric: RowSchema, sft: RowSchema, gspo: RowSchema, oracle: RowSchema }),
  written: z.strictObject({ sft: WrittenSchema, gspo: WrittenSchema }),
  training: z.strictObject({
    /** Teacher dialogues SFT trained on (training tasks × teacher stakeholders). */
    sftDialogues: z.number().int(),
    sftLoss: z.array(z.number()),
    /** Per GSPO batch: mean reward, and the rubric turns of the batch's rollouts that did not parse. */
    gspo: z.array(
      z.strictObject({
        batch: z.number().int(),
        meanReward: z.number(),
        clippedFraction: z.number(),
        /** The KL to the SFT policy (k3 estimate) at the batch's last step. */
        kl: z.number(),
        counts: CountsSchema,
      }),
    ),
    /** The longest teacher dialogue in tokens (prompt + turn, per turn), against the model's positions. */
    longestTurn: z.number().int(),
  }),
  seconds: z.strictObject({ sft: z.number(), gspo: z.number(), evaluation: z.number(), total: z.number() }),
  notes: z.array(z.string()),
});
export type SidecarManagerTable = z.infer<typeof SidecarManagerTableSchema>;

export type SidecarManagerProgress =
  | { readonly phase: "prepare" | "evaluate-sft" | "evaluate-gspo" }
  | { readonly phase: "sft" | "gspo"; readonly done: number; readonly total: number; readonly entry: TrainingLogEntry };

export interface SidecarManagerRunOptions {
  readonly gdpvalDir: string;
  readonly config: SidecarManagerConfig;
  readonly onProgress?: (event: SidecarManagerProgress) => void;
  readonly signal?: AbortSignal;
}

/**
 * Reads an episode's rubric turn (`readRubricTurn`) and counts it: the episode, a questions turn
 * that did not parse, a rubric turn that is not a rubric, the criteria only a judge could check.
 */
export function readEpisode(episode: ManagerEpisode, id: string, counts: SidecarManagerCounts): ReadRubric {
  const read = readRubricTurn(episode.rubricText, id);
  counts.episodes++;
  if (!episode.questionsParsed) counts.questionsUnparsed++;
  if (read.ok) counts.judgedCriteria += read.judged;
  else counts.unparseable++;
  return read;
}

/**
 * An episode's reward: U* of the worker's output under its rubric less the costs in tokens
 * (`gymReward`'s), or {@link UNPARSEABLE_UTILITY} less the questions' cost when the rubric turn
 * is not a rubric — counted in `counts` either way.
 */
export function sidecarManagerReward(
  manager: SidecarManager,
  worker: Worker,
  config: Pick<SidecarManagerConfig, "clarifyCostPerToken" | "computeCostPerToken">,
  counts: SidecarManagerCounts,
) {
  return async (prompt: GymPrompt, tokens: readonly number[], { seed }: { seed: number }): Promise<number> => {
    const episode = await manager.episode(prompt, tokens);
    const read = readEpisode(episode, `${prompt.task.id}-rubric`, counts);
    const cost = episodeTokens(episode, read.ok ? read.rubric : undefined);
    const clarify = config.clarifyCostPerToken * cost.questions;
    if (!read.ok) return UNPARSEABLE_UTILITY - clarify;
    const [output] = await worker.produce(prompt.task, read.rubric, 1, { seed });
    return (await trueUtility(prompt, output!.text)) - clarify - config.computeCostPerToken * cost.rubric;
  };
}

/** Each eval task's episode under the manager's current policy, its rubric's returns per N, and what parsed. */
async function evaluate(
  manager: SidecarManager,
  prompts: readonly GymPrompt[],
  worker: Worker,
  config: SidecarManagerConfig,
  fork: string,
): Promise<{ returns: number[][]; written: z.infer<typeof WrittenSchema> }> {
  const counts = emptyCounts();
  const returns: number[][] = [];
  const rubrics: FlatRubric[] = [];
  const parsedReturns: number[][] = [];
  const asked: number[] = [];
  const examples: z.infer<typeof WrittenSchema>["examples"] = [];
  for (const [i, prompt] of prompts.entries()) {
    const seed = createRng(config.seed)
      .fork(`${fork}:${prompt.task.id}`)
      .int(2 ** 31);
    const [sequence] = await manager.sample(prompt, 1, { seed });
    const episode = await manager.episode(prompt, sequence!.tokens);
    const read = readEpisode(episode, `${prompt.task.id}-${fork}`, counts);
    asked.push(episode.questions.length);
    if (i < 3) examples.push({ taskId: prompt.task.id, questions: [...episode.questions], rubric: episode.rubricText });
    if (!read.ok) {
      returns.push(config.ns.map(() => UNPARSEABLE_UTILITY));
      continue;
    }
    rubrics.push(read.rubric);
    const picked = await guidedReturns(prompt, read.rubric, worker, config.ns, outputSeed(config, prompt));
    returns.push(picked);
    parsedReturns.push(picked);
  }
  const criteria = rubrics.flatMap((r) => r.criteria);
  return {
    returns,
    written: {
      counts,
      criteriaPerRubric: rubrics.length > 0 ? mean(rubrics.map((r) => r.criteria.length)) : 0,
      tokensPerCriterion: criteria.length > 0 ? mean(criteria.map((c) => approximateTokens(c.text))) : 0,
      questionsAsked: mean(asked),
      meanReturnWhenParsed: parsedReturns.length > 0 ? meanOver(parsedReturns, config.ns) : null,
      examples,
    },
  };
}

/** The worker's outputs of an eval task: the same draws for every row, so rows differ only by their rubric. */
function outputSeed(config: SidecarManagerConfig, prompt: GymPrompt): number {
  return createRng(config.seed)
    .fork(`outputs:${prompt.task.id}`)
    .int(2 ** 31);
}

const meanOver = (returns: readonly number[][], ns: readonly number[]) =>
  ns.map((_, j) => mean(returns.map((r) => r[j]!)));

/**
 * The run's tasks and teacher dialogues: the training and eval tasks' gym prompts (stakeholder seed
 * `config.seed`), and `teacherStakeholders` teacher dialogues per training task, each with a
 * stakeholder of its own (seeds seed, seed + 1000, …): with one dialogue per task the model
 * memorises them long before the rubric's format generalises to tasks it has not seen.
 */
export async function sidecarManagerData(
  gdpvalDir: string,
  config: Pick<SidecarManagerConfig, "seed" | "trainTasks" | "evalTasks" | "teacherStakeholders">,
): Promise<{
  train: GymPrompt[];
  evalPrompts: GymPrompt[];
  teacherPrompts: GymPrompt[];
  teacher: SftExample[];
}> {
  const gdpval = await loadGdpval(gdpvalDir);
  const train = await Promise.all(
    gdpval.train.slice(0, config.trainTasks).map((e) => gymPrompt(gymTask(e.task), config.seed, QUESTION_REPERTOIRE)),
  );
  const evalPrompts = await Promise.all(
    gdpval.eval.slice(0, config.evalTasks).map((e) => gymPrompt(gymTask(e.task), config.seed, QUESTION_REPERTOIRE)),
  );
  const teacherPrompts: GymPrompt[] = [];
  const teacher: SftExample[] = [];
  for (let j = 0; j < config.teacherStakeholders; j++) {
    const seed = config.seed + 1000 * j;
    const prompts = j === 0 ? train : await Promise.all(train.map((p) => gymPrompt(p.task, seed, QUESTION_REPERTOIRE)));
    teacherPrompts.push(...prompts);
    teacher.push(
      ...(await gymSftCorpus(
        prompts.map((p) => p.task),
        { seed, questionBudget: 5, reference: "elicited" },
      )),
    );
  }
  return { train, evalPrompts, teacherPrompts, teacher };
}

/**
 * ARCANE's manager as an LLM trained end to end (issue 16, item 6): the sidecar's small causal
 * transformer with a byte-level BPE learnt from the teacher dialogues, or a transformers model with
 * its own tokenizer (`config.transformersModel`), asks its questions and writes its rubric as JSON
 * text (`SidecarManager`); Stage I is SFT on the gym's teacher dialogues,
 * Stage II GSPO on the gym's reward through `SidecarBackend`, with the KL to the SFT policy. Each
 * stage's manager is evaluated on the eval tasks (one dialogue per task, best-of-N by its rubric),
 * beside No Rubric and the oracle on the same worker outputs.
 */
export async function runSidecarManager(options: SidecarManagerRunOptions): Promise<SidecarManagerTable> {
  const { config } = options;
  const started = performance.now();
  options.onProgress?.({ phase: "prepare" });
  const { train, evalPrompts, teacherPrompts, teacher } = await sidecarManagerData(options.gdpvalDir, config);
  const { backend, tokenizer } = await startManagerModel(config, train, teacher, options.signal);
  const manager = new SidecarManager(backend, tokenizer, config);
  try {
    const teacherTokens = await manager.teacherTokens(teacher);
    const examples = teacherPrompts.map((prompt, i) => ({ prompt, tokens: teacherTokens[i]! }));
    let longestTurn = 0;
    for (const { prompt, tokens } of examples) {
      const { questions, rubric } = manager.split(tokens);
      const { ids } = await manager.dialogue(prompt, questions);
      longestTurn = Math.max(
        longestTurn,
        (await manager.questionsIds(prompt.task)).length + questions.length,
        ids.length + rubric.length,
      );
    }
    if (longestTurn > backend.summary.max_seq_len)
      throw new RangeError(
        `a teacher dialogue's turn takes ${longestTurn} tokens, more than the model's ${backend.summary.max_seq_len} positions: ${config.transformersModel === null ? "raise model.maxSequence or vocabularySize" : "use a model with more positions"}`,
      );

    const sftStarted = performance.now();
    const sftLog = await trainSftStage({
      backend: manager,
      examples,
      epochs: config.sftEpochs,
      seed: config.seed,
      batchSize: config.sftBatchSize,
      learningRate: config.sftLearningRate,
      onLog: (entry) =>
        options.onProgress?.({
          phase: "sft",
          done: (entry.stage === "sft" ? entry.epoch : 0) + 1,
          total: config.sftEpochs,
          entry,
        }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    const sftSeconds = (performance.now() - sftStarted) / 1000;

    const worker = simulatedWorker();
    const evaluationStarted = performance.now();
    options.onProgress?.({ phase: "evaluate-sft" });
    const sft = await evaluate(manager, evalPrompts, worker, config, "sft");
    let evaluationMs = performance.now() - evaluationStarted;

    const gspoStarted = performance.now();
    await manager.setReference();
    await manager.resetOptimizer();
    const counts = emptyCounts();
    const perBatch: SidecarManagerTable["training"]["gspo"] = [];
    let before = emptyCounts();
    const gspoLog = await trainGspo({
      backend: manager,
      prompts: train,
      reward: sidecarManagerReward(manager, worker, config, counts),
      seed: config.seed,
      batches: config.gspoBatches,
      promptsPerBatch: config.promptsPerBatch,
      groupSize: config.groupSize,
      stepsPerBatch: config.stepsPerBatch,
      objective: config.objective,
      epsLow: config.epsLow,
      epsHigh: config.epsHigh,
      learningRate: config.learningRate,
      klCoef: config.klCoef,
      onLog: (entry) => {
        if (entry.stage !== "gspo") return;
        perBatch.push({
          batch: entry.batch,
          meanReward: entry.meanReward,
          clippedFraction: entry.clippedFraction,
          kl: entry.kl,
          counts: {
            episodes: counts.episodes - before.episodes,
            unparseable: counts.unparseable - before.unparseable,
            questionsUnparsed: counts.questionsUnparsed - before.questionsUnparsed,
            judgedCriteria: counts.judgedCriteria - before.judgedCriteria,
          },
        });
        before = { ...counts };
        options.onProgress?.({ phase: "gspo", done: entry.batch + 1, total: config.gspoBatches, entry });
      },
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    const gspoSeconds = (performance.now() - gspoStarted) / 1000;

    const gspoEvaluationStarted = performance.now();
    options.onProgress?.({ phase: "evaluate-gspo" });
    const gspo = await evaluate(manager, evalPrompts, worker, config, "gspo");
    const noRubric: number[][] = [];
    const oracle: number[][] = [];
    for (const prompt of evalPrompts) {
      // An empty rubric scores every output 0, so the pick is the first: an unguided draw.
      noRubric.push(
        await guidedReturns(prompt, { id: "none", criteria: [] }, worker, config.ns, outputSeed(config, prompt)),
      );
      const utility = simulatedStakeholder(prompt.task, prompt.stakeholderSeed).utility;
      oracle.push(await guidedReturns(prompt, utility, worker, config.ns, outputSeed(config, prompt)));
    }
    evaluationMs += performance.now() - gspoEvaluationStarted;

    const rows = {
      noRubric: { n: [...config.ns], meanReturn: meanOver(noRubric, config.ns) },
      sft: { n: [...config.ns], meanReturn: meanOver(sft.returns, config.ns) },
      gspo: { n: [...config.ns], meanReturn: meanOver(gspo.returns, config.ns) },
      oracle: { n: [...config.ns], meanReturn: meanOver(oracle, config.ns) },
    };
    const trainedUnparseable = (w: typeof sft.written) =>
      `${w.counts.unparseable} of ${w.counts.episodes} eval rubric turns did not parse`;
    return SidecarManagerTableSchema.parse({
      kind: "arcane-sidecar-manager",
      simulation: `Rubric gym, a simulation: simulated stakeholders and worker; the manager is ${config.transformersModel === null ? "the sidecar's small causal transformer" : `the transformers model ${config.transformersModel}`} trained here, not the paper's LLM.`,
      config: { ...config },
      model: {
        name: config.transformersModel ?? "sidecar-tiny",
        parameters: backend.summary.parameters,
        vocabularySize: tokenizer.vocabularySize,
        device: backend.summary.device,
      },
      tasks: { train: train.length, eval: evalPrompts.length },
      rows,
      written: { sft: sft.written, gspo: gspo.written },
      training: {
        sftDialogues: examples.length,
        sftLoss: sftLog.flatMap((e) => (e.stage === "sft" ? [e.loss] : [])),
        gspo: perBatch,
        longestTurn,
      },
      seconds: {
        sft: sftSeconds,
        gspo: gspoSeconds,
        evaluation: evaluationMs / 1000,
        total: (performance.now() - started) / 1000,
      },
      notes: [
        `SFT: ${trainedUnparseable(sft.written)}; GSPO: ${trainedUnparseable(gspo.written)}. An unparseable rubric's episode counts at U* = ${UNPARSEABLE_UTILITY} (the floor), in training and here.`,
        `GSPO's ${gspoLog.length} batches: ${perBatch.reduce((n, b) => n + b.counts.unparseable, 0)} of ${perBatch.reduce((n, b) => n + b.counts.episodes, 0)} rollouts' rubric turns did not parse.`,
        "Each dialogue turn is a sequence of its own in GSPO's objective (its own length-normalised ratio and clip), with the episode's advantage.",
      ],
    });
  } finally {
    await manager.close();
  }
}

/**
 * The manager's model and tokenizer in a new sidecar: the small transformer with a BPE learnt from
 * the first stakeholder's teacher dialogues (the wording is the same in all), or a transformers
 * model with its own tokenizer.
 */
async function startManagerModel(
  config: SidecarManagerConfig,
  train: readonly GymPrompt[],
  teacher: readonly SftExample[],
  signal: AbortSignal | undefined,
): Promise<{ backend: SidecarBackend; tokenizer: ManagerTokenizer }> {
  const common = {
    threads: config.threads,
    ...(config.python === undefined ? {} : { python: config.python }),
    ...(signal === undefined ? {} : { call: { signal } }),
  };
  const policy = {
    seed: config.seed,
    device: config.device,
    dtype: config.dtype,
    max_new_tokens: Math.max(config.maxQuestionTokens, config.maxRubricTokens),
  };
  if (config.transformersModel !== null) {
    const backend = await SidecarBackend.start({
      ...common,
      policy: { ...policy, model: { kind: "transformers", name: config.transformersModel } },
    });
    try {
      return { backend, tokenizer: sidecarManagerTokenizer(backend) };
    } catch (error) {
      await backend.close();
      throw error;
    }
  }
  const bpe = bpeManagerTokenizer(trainManagerTokenizer(train, teacher.slice(0, train.length), config.vocabularySize));
  const backend = await SidecarBackend.start({
    ...common,
    policy: {
      ...policy,
      model: {
        kind: "tiny",
        vocab_size: bpe.vocabularySize,
        d_model: config.model.dModel,
        n_heads: config.model.heads,
        n_layers: config.model.layers,
        max_seq_len: config.model.maxSequence,
      },
      eos_token_id: bpe.eos,
    },
  });
  return { backend, tokenizer: bpe };
}

/** `table.md` of a sidecar-manager run. */
export function sidecarManagerMarkdown(table: SidecarManagerTable): string {
  const f3 = (x: number) => x.toFixed(3);
  // The paper's column stays beside ours (its LLM manager, on GDPval), for orientation only.
  const header = `| Method | ${table.rows.sft.n.map((n) => `N=${n}`).join(" | ")} | paper N=1 | paper N=8 |`;
  const line = (label: string, row: { meanReturn: number[] }, paper: { n1: number; n8: number }) =>
    `| ${label} | ${row.meanReturn.map(f3).join(" | ")} | ${paper.n1} | ${paper.n8} |`;
  const written = (label: string, w: SidecarManagerTable["written"]["sft"]) =>
    `| ${label} | ${w.counts.unparseable} / ${w.counts.episodes} | ${w.counts.questionsUnparsed} | ${w.counts.judgedCriteria} | ${w.criteriaPerRubric.toFixed(1)} | ${w.tokensPerCriterion.toFixed(1)} | ${w.questionsAsked.toFixed(2)} | ${w.meanReturnWhenParsed === null ? "—" : w.meanReturnWhenParsed.map(f3).join(" / ")} |`;
  return [
    `# ARCANE with an LLM manager trained end to end (${table.config["quick"] ? "quick" : "full"})`,
    "",
    `> ${table.simulation}`,
    "",
    `The manager: ${table.model.name === "sidecar-tiny" ? `a ${table.model.parameters.toLocaleString("en")}-parameter causal transformer in the torch sidecar, byte-level BPE of ${table.model.vocabularySize} ids` : `${table.model.name} (${table.model.parameters.toLocaleString("en")} parameters, its own tokenizer of ${table.model.vocabularySize} ids)`} on ${table.model.device}; SFT on ${table.training.sftDialogues} teacher dialogues of ${table.tasks.train} training tasks, GSPO on those tasks, ${table.tasks.eval} eval tasks; ${table.seconds.total.toFixed(0)} s (SFT ${table.seconds.sft.toFixed(0)} s, GSPO ${table.seconds.gspo.toFixed(0)} s, evaluation ${table.seconds.evaluation.toFixed(0)} s).`,
    "",
    "## Mean return (U* of the selected output)",
    "",
    header,
    `|---|${table.rows.sft.n.map(() => "---").join("|")}|---|---|`,
    line("No Rubric", table.rows.noRubric, PAPER.meanReturn.noRubric),
    line("LLM manager, SFT", table.rows.sft, PAPER.meanReturn.sft),
    line("LLM manager, GSPO", table.rows.gspo, PAPER.meanReturn.gspo),
    line("Oracle rubric", table.rows.oracle, PAPER.meanReturn.oracle),
    "",
    "## What the manager wrote (eval tasks)",
    "",
    `| Manager | rubric turns not parsed | questions turns not parsed | criteria read as no rule (left out) | criteria per rubric | tokens per criterion | questions asked | mean return when parsed (N=${table.rows.sft.n.join(" / N=")}) |`,
    "|---|---|---|---|---|---|---|---|",
    written("SFT", table.written.sft),
    written("GSPO", table.written.gspo),
    "",
    ...table.written.gspo.examples.flatMap((e) => [
      `GSPO on ${e.taskId}: asked ${e.questions.length === 0 ? "nothing" : e.questions.map((q) => `“${q}”`).join(", ")}; wrote \`${e.rubric.slice(0, 400)}\``,
      "",
    ]),
    "## Training",
    "",
    `SFT loss per epoch: ${table.training.sftLoss.map((l) => l.toFixed(3)).join(", ")}.`,
    "",
    "| GSPO batch | mean reward | clipped | KL to SFT | rubric turns not parsed |",
    "|---|---|---|---|---|",
    ...table.training.gspo.map(
      (b) =>
        `| ${b.batch} | ${f3(b.meanReward)} | ${(100 * b.clippedFraction).toFixed(0)}% | ${b.kl.toFixed(4)} | ${b.counts.unparseable} / ${b.counts.episodes} |`,
    ),
    "",
    "## Notes",
    "",
    ...table.notes.map((n) => `- ${n}`),
    "",
  ].join("\n");
}

/** Runs the sidecar manager and writes `table.json` and `table.md` into `out`. */
export async function writeSidecarManagerRun(
  out: string,
  options: SidecarManagerRunOptions,
): Promise<SidecarManagerTable> {
  const table = await runSidecarManager(options);
  await mkdir(out, { recursive: true });
  await writeFile(join(out, "table.json"), `${JSON.stringify(table, null, 2)}\n`);
  await writeFile(join(out, "table.md"), sidecarManagerMarkdown(table));
  return table;
}
