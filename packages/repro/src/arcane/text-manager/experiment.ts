import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { gymSftCorpus, gymTask, loadGdpval, simulatedWorker, type SftExample } from "@rubric/autointeract";
import {
  QUESTION_REPERTOIRE,
  SidecarBackend,
  TrainingInputError,
  gymPrompt,
  trainGspo,
  trainSftStage,
  type GymPrompt,
} from "@rubric/gspo";
import type { SidecarManagerConfig, SidecarManagerRunOptions } from "./config.js";
import { baselineReturns, evaluate, meanOver } from "./evaluation.js";
import { SidecarManager } from "./manager.js";
import { UNPARSEABLE_UTILITY, sidecarManagerReward } from "./reward.js";
import { SidecarManagerTableSchema, emptyCounts, sidecarManagerMarkdown, type SidecarManagerTable } from "./table.js";
import {
  bpeManagerTokenizer,
  sidecarManagerTokenizer,
  trainManagerTokenizer,
  type ManagerTokenizer,
} from "./tokenizer.js";

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
      throw new TrainingInputError(
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
      signal: options.signal,
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
      signal: options.signal,
    });
    const gspoSeconds = (performance.now() - gspoStarted) / 1000;

    const gspoEvaluationStarted = performance.now();
    options.onProgress?.({ phase: "evaluate-gspo" });
    const gspo = await evaluate(manager, evalPrompts, worker, config, "gspo");
    const { noRubric, oracle } = await baselineReturns(evalPrompts, worker, config);
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
    python: config.python,
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
