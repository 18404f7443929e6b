import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { performance } from "node:perf_hooks";
import {
  criteriaTarget,
  type MuSftExample,
  RubricModel,
  stepPrompt,
  stepTrace,
  traceJsonLines,
  type Step,
} from "@rubric/arco-heads";
import {
  createRng,
  definedFields,
  mcnemarExact,
  mean,
  rocAuc,
  sampleStd,
  shuffle,
  wilcoxonSignedRank,
} from "@rubric/core";
import { readInputText } from "@rubric/core/files";
import { RemoteMu, type SidecarClient } from "@rubric/sidecar";
import {
  bucketScores,
  contrastScores,
  createMu,
  type Episode,
  episodeSteps,
  evidenceAuc,
  extractivePolicy,
  goldTeacher,
  type HotpotQuestion,
  hotpotQa,
  isTrainable,
  loadHotpotQa,
  MuCritic,
  type Policy,
  type PolicySftExample,
  rollout,
  sampleCriteria,
  type StepContrast,
  type StepCritic,
  type StepRating,
  teacherAnnotation,
  teacherCritic,
  type TrainablePolicy,
  type TrainerEvent,
  type TrainerSettingsInput,
  trainCoEvolution,
  warmupData,
} from "@rubric/rlxar";
import { checkArcoConfig, type MethodRun, readMethodRun, writeMethodRun } from "./method-run.js";
import { ARCO_METHODS, type ArcoMethod, type ArcoTable, arcoMarkdown, PAPER_ARCO } from "./table.js";
import { arcoPlots } from "./plot.js";

/**
 * ARCO's "w/o adaptive" criteria: one generic list for every step (the released code reads its
 * three from a file it describes as query specificity, evidence, and avoiding redundancy; ours are
 * written to the same description).
 */
export const FIXED_CRITERIA = [
  "The query is specific and relevant to the question",
  "The step gathers evidence the answer needs",
  "The step avoids redundant searches and moves toward an answer",
] as const;

/** How each method is set up: the policy's signal and the μ it reads. */
interface MethodSetup {
  readonly signal: "arco" | "outcome" | "trajectory-rubric";
  /**
   * Which critic: none (outcome), a warm-up μ (generated criteria, fixed criteria, no prefix, or
   * a scalar PRM), or the gold teacher's hindsight scores (the control).
   */
  readonly mu: "none" | "generated" | "fixed" | "noPrefix" | "prm" | "teacher";
  readonly coEvolves: boolean;
  readonly outcomeAtTerminal?: boolean;
}

const SETUPS: Readonly<Record<ArcoMethod, MethodSetup>> = {
  outcome: { signal: "outcome", mu: "none", coEvolves: false },
  rar: { signal: "trajectory-rubric", mu: "generated", coEvolves: false },
  frozenMu: { signal: "arco", mu: "generated", coEvolves: false },
  prm: { signal: "arco", mu: "prm", coEvolves: true },
  fixedCriteria: { signal: "arco", mu: "fixed", coEvolves: true },
  noPrefix: { signal: "arco", mu: "noPrefix", coEvolves: true },
  arco: { signal: "arco", mu: "generated", coEvolves: true },
  arcoOutcome: { signal: "arco", mu: "generated", coEvolves: true, outcomeAtTerminal: true },
  teacherMu: { signal: "arco", mu: "teacher", coEvolves: false },
};

/** The questions a run trains and reports on are drawn with these seeds, the same for every run seed. */
const SELECTION_SEEDS = { train: "arco/train", eval: "arco/eval" } as const;

/** Everything an ARCO reproduction run is configured by; `arcoConfig` fills the defaults. */
export interface ArcoConfig {
  readonly quick: boolean;
  readonly seeds: readonly number[];
  readonly trainPath: string;
  readonly evalPath: string;
  /**
   * A seeded sample of n questions of each file (all when absent), the same sample for every
   * seed: seeds vary the training, not the questions. The train file is not shuffled (its yes/no
   * questions cluster at the end), so a first-n slice would not represent it.
   */
  readonly trainQuestions?: number;
  readonly evalQuestions?: number;
  /** μ's diagnostics read this many of the evaluation questions (a seeded sample; all when absent). */
  readonly diagnosticQuestions?: number;
  readonly methods: readonly ArcoMethod[];
  /** K of the ARCO runs beside the main K = `k` (the paper's sensitivity: 1, 3, 5). */
  readonly kSweep: readonly number[];
  readonly k: number;
  readonly teacher: { readonly rollouts: number; readonly noise: number };
  readonly policySft: { readonly epochs: number; readonly learningRate: number; readonly batchSize: number };
  readonly mu: {
    readonly dModel: number;
    readonly heads: number;
    readonly layers: number;
    readonly maxSequence: number;
    readonly vocabularySize: number;
    readonly maxCriteriaTokens: number;
    readonly maxObservationChars: number;
    readonly sftEpochs: number;
    /** μ-SFT examples at most (a seeded sample of the warm-up's); the sidecar's torch cost bounds this on a CPU. */
    readonly sftExamples: number;
    readonly sftLearningRate: number;
    readonly sftHeadLearningRate: number;
    readonly learningRate: number;
    readonly headLearningRate: number;
    readonly beta: number;
  };
  readonly trainer: TrainerSettingsInput;
}

/**
 * Defaults of a run: ARCO's recipe where a CPU allows it (K = 3, groups of 4, temperature 0.7, dense
 * scale 0.5, the dense phase's π learning rate 0.3 × the sparse one's, π's KL 0.05 in the dense
 * phase, μ's KL β 0.05, μ's decomposition loss and its hot reload every batch), scaled down where
 * it does not: a small μ trained from scratch instead of a LoRA on Qwen3-4B, the extractive policy
 * instead of an LLM, 32 rollouts per update instead of 64, and far fewer questions and epochs, so
 * that the full run (3 seeds, every method and K ∈ {1, 3, 5}) fits in about half an hour on 2
 * cores. π's sparse learning rate (0.1) is the one its own learning test uses; a check on
 * held-out *training* questions (`tools/arco-policy-lr.ts`) found no learning rate or batch size
 * at which outcome-only RL raised their EM over the SFT policy, so there was nothing to select.
 * μ's rates are the small μ's. Nothing is selected on dev.
 */
export function arcoConfig(
  options: { quick?: boolean; seeds?: number; trainPath?: string; evalPath?: string } & Partial<
    Omit<ArcoConfig, "quick" | "seeds" | "trainPath" | "evalPath">
  > = {},
): ArcoConfig {
  const quick = options.quick ?? false;
  const count = options.seeds ?? (quick ? 1 : 3);
  return {
    quick,
    seeds: Array.from({ length: count }, (_, i) => i + 1),
    trainPath: options.trainPath ?? "../shared/data/hotpotqa/train.jsonl",
    evalPath: options.evalPath ?? "../shared/data/hotpotqa/dev.jsonl",
    trainQuestions: options.trainQuestions ?? (quick ? 48 : 96),
    ...definedFields({ evalQuestions: options.evalQuestions ?? (quick ? 80 : undefined) }),
    ...definedFields({ diagnosticQuestions: options.diagnosticQuestions ?? (quick ? undefined : 100) }),
    methods: options.methods ?? ARCO_METHODS,
    kSweep: options.kSweep ?? (quick ? [] : [1, 5]),
    k: options.k ?? 3,
    teacher: options.teacher ?? { rollouts: 3, noise: 0.25 },
    policySft: options.policySft ?? { epochs: quick ? 3 : 5, learningRate: 0.05, batchSize: 64 },
    mu: options.mu ?? {
      dModel: 32,
      heads: 2,
      layers: 1,
      maxSequence: 1024,
      vocabularySize: 800,
      maxCriteriaTokens: 48,
      maxObservationChars: 240,
      sftEpochs: 4,
      sftExamples: quick ? 240 : 256,
      sftLearningRate: 3e-3,
      sftHeadLearningRate: 1e-2,
      learningRate: 1e-4,
      headLearningRate: 1e-3,
      beta: 0.05,
    },
    trainer: {
      sparseEpochs: 1,
      denseEpochs: quick ? 1 : 2,
      rolloutsPerBatch: 32,
      groupSize: 4,
      temperature: 0.7,
      sparseLearningRate: 0.1,
      denseLearningRate: 0.03,
      sparseKl: 0,
      denseKl: 0.05,
      denseScale: 0.5,
      ...options.trainer,
    },
  };
}

/** A line of progress, for the CLI. */
export type ArcoProgress =
  | { readonly type: "stage"; readonly seed: number; readonly stage: string }
  | { readonly type: "trainer"; readonly seed: number; readonly method: string; readonly event: TrainerEvent };

export interface ArcoRunOptions {
  readonly out: string;
  /** The sidecar (torch) that trains μ. */
  readonly client: SidecarClient;
  /** π for a seed; the extractive policy by default. A policy that is not trainable is rolled out only. */
  readonly policy?: (seed: number) => Policy;
  readonly onProgress?: (progress: ArcoProgress) => void;
  /**
   * Continue the run in `out` (the same configuration, refused otherwise): a method that finished
   * is kept as it was, one that was stopped goes on from its latest checkpoint (π and μ), and one
   * that never started starts.
   */
  readonly resume?: boolean;
}

/** The answer an episode finished with ("" when it ended without one). */
export function finalAnswer(episode: Episode): string {
  const last = episode.steps.at(-1)?.transition;
  return last?.kind === "finish" ? (last.action?.argument ?? "") : "";
}

/** An episode's HotpotQA numbers: EM, ARCO's EM variant and F1 of its answer (0 without one). */
export function hotpotMeasure(episode: Episode): Record<string, number> {
  const info = episode.steps.at(-1)?.transition.info as { em?: unknown; arcoEm?: unknown; f1?: unknown } | undefined;
  const num = (value: unknown) => (typeof value === "number" ? value : 0);
  return { em: num(info?.em), arcoEm: num(info?.arcoEm), f1: num(info?.f1) };
}

/** The warm-up μ of one kind: the export every run of that kind starts from. */
interface WarmMu {
  readonly directory: string;
  readonly k: number;
}

/**
 * The ARCO reproduction on HotpotQA (train on `trainPath`, report on `evalPath`): per seed, the
 * gold teacher's warm-up (k rollouts per question with noise, annotated and projected), π SFT on its
 * successful multi-step trajectories, one warm-up μ per kind the methods need, then every method
 * trained from the same π and μ at the same budget and evaluated greedily. Writes `table.json`,
 * `table.md`, `curves.svg` and μ's traces on the eval set under `out`.
 */
export async function runArco(config: ArcoConfig, options: ArcoRunOptions): Promise<ArcoTable> {
  const started = performance.now();
  const train = loadHotpotQa(
    config.trainPath,
    config.trainQuestions === undefined ? {} : { sample: { size: config.trainQuestions, seed: SELECTION_SEEDS.train } },
  );
  const evaluation = loadHotpotQa(
    config.evalPath,
    config.evalQuestions === undefined ? {} : { sample: { size: config.evalQuestions, seed: SELECTION_SEEDS.eval } },
  );
  await mkdir(options.out, { recursive: true });
  await checkArcoConfig(options.out, config, options.resume === true);
  await writeFile(join(options.out, "eval-questions.jsonl"), rowsOf(config.evalPath, evaluation));
  const diagnosed =
    config.diagnosticQuestions === undefined || config.diagnosticQuestions >= evaluation.length
      ? evaluation
      : shuffle(evaluation, createRng("arco/diagnostics")).slice(0, config.diagnosticQuestions);
  const environment = hotpotQa();
  const runs: Record<string, MethodRun[]> = {};
  const warmups: Record<string, unknown>[] = [];
  const scratch = await mkdtemp(join(tmpdir(), "rubric-arco-"));
  try {
    for (const seed of config.seeds) {
      const progress = (stage: string) => options.onProgress?.({ type: "stage", seed, stage });
      const seedDir = join(options.out, `seed-${seed}`);
      await mkdir(seedDir, { recursive: true });

      progress("teacher rollouts");
      const t0 = performance.now();
      const teacherEpisodes = await rollout(environment, train, goldTeacher(train, { noise: config.teacher.noise }), {
        temperature: 1,
        seed: `${seed}/teacher`,
        replicas: config.teacher.rollouts,
      });
      const promptOptions = { maxObservationChars: config.mu.maxObservationChars };
      const warm = warmupData(
        teacherEpisodes,
        teacherEpisodes.map((episode) => teacherAnnotation(episode, config.k)),
        promptOptions,
      );
      const teacherMs = performance.now() - t0;

      progress("π SFT");
      const t1 = performance.now();
      const makePolicy = options.policy ?? (() => extractivePolicy());
      const base = makePolicy(seed);
      const piDir = join(seedDir, "pi-sft");
      const piSft = isTrainable(base) ? await sftPolicy(base, warm.policy, config, seed, piDir) : undefined;
      const piMs = performance.now() - t1;

      let muWarmupMs = 0;
      const mus = new Map<string, WarmMu>();
      const needMu = async (kind: WarmMuKind, k: number): Promise<WarmMu> => {
        const key = `${kind}/${k}`;
        const existing = mus.get(key);
        if (existing !== undefined) return existing;
        progress(`μ warm-up (${kind}, K = ${k})`);
        const tMu = performance.now();
        const made = await warmUpMu(options.client, join(scratch, `seed-${seed}`, key.replace("/", "-k")), kind, k, {
          config,
          seed,
          teacherEpisodes,
          promptOptions,
        });
        muWarmupMs += performance.now() - tMu;
        mus.set(key, made);
        return made;
      };

      const plans: { name: string; method: ArcoMethod; k: number }[] = [
        ...config.methods.map((method) => ({ name: method, method, k: config.k })),
        ...(config.methods.includes("arco")
          ? config.kSweep.filter((k) => k !== config.k).map((k) => ({ name: `arcoK${k}`, method: "arco" as const, k }))
          : []),
      ];
      for (const plan of plans) {
        const setup = SETUPS[plan.method];
        const dir = join(seedDir, plan.name);
        const finished = options.resume === true ? await readMethodRun(dir) : undefined;
        if (finished !== undefined) {
          progress(`kept ${plan.name} (finished)`);
          (runs[plan.name] ??= []).push(finished);
          continue;
        }
        const kind = setup.mu;
        const warmMu =
          kind === "none" || kind === "teacher" ? undefined : () => needMu(kind, kind === "prm" ? 1 : plan.k);
        progress(`training ${plan.name}`);
        const run = await runMethod(plan.name, setup, warmMu, {
          config,
          seed,
          environment,
          train,
          evaluation,
          diagnosed,
          policy: makePolicy(seed),
          piDir: isTrainable(base) ? piDir : undefined,
          client: options.client,
          dir,
          resume: options.resume === true,
          promptOptions,
          onEvent: (event) => options.onProgress?.({ type: "trainer", seed, method: plan.name, event }),
        });
        (runs[plan.name] ??= []).push(run);
      }
      warmups.push({
        seed,
        teacher: { ...warm.counts, policyExamples: warm.policy.length, muExamples: warm.mu.length, ms: teacherMs },
        policySft: { ...(piSft ?? { losses: [], examples: 0, learnable: 0 }), ms: piMs },
        muWarmupMs,
      });
      // Each finished seed's tables are written at once: a later seed that fails loses only itself.
      await writeArcoOutputs(
        options.out,
        tableOf(config, runs, warmups, performance.now() - started, train.length, evaluation.length),
      );
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  const table = tableOf(config, runs, warmups, performance.now() - started, train.length, evaluation.length);
  await writeArcoOutputs(options.out, table);
  return table;
}

async function sftPolicy(
  policy: TrainablePolicy,
  examples: readonly PolicySftExample[],
  config: ArcoConfig,
  seed: number,
  dir: string,
): Promise<{ losses: number[]; examples: number; learnable: number }> {
  // A policy that cannot express every target (the extractive one) keeps those it can before
  // batching, so a shuffled batch is never left with nothing to learn.
  const usable = examples.filter((example) => policy.learnable?.(example) ?? true);
  const losses: number[] = [];
  const rng = createRng(seed).fork("pi-sft");
  for (let epoch = 1; epoch <= config.policySft.epochs && usable.length > 0; epoch++) {
    const order = shuffle(usable, rng.fork(`epoch:${epoch}`));
    let total = 0;
    let batches = 0;
    for (let start = 0; start < order.length; start += config.policySft.batchSize) {
      const { loss } = await policy.sft(order.slice(start, start + config.policySft.batchSize), {
        learningRate: config.policySft.learningRate,
      });
      total += loss;
      batches++;
    }
    losses.push(total / batches);
  }
  await policy.save(dir);
  return { losses, examples: examples.length, learnable: usable.length };
}

/** μ-SFT examples of one kind: as warmed (ARCO), with the fixed criteria, or without the prefix. */
function muExamples(
  kind: WarmMuKind,
  k: number,
  teacherEpisodes: readonly Episode[],
  promptOptions: { maxObservationChars: number },
): MuSftExample[] {
  const warm = warmupData(
    teacherEpisodes,
    teacherEpisodes.map((episode) => teacherAnnotation(episode, k)),
    promptOptions,
  );
  if (kind === "generated") return warm.mu;
  if (kind === "fixed") {
    return warm.mu.map((example) => ({
      ...example,
      criteria: [...FIXED_CRITERIA],
      target: criteriaTarget([...FIXED_CRITERIA]),
    }));
  }
  const byId = new Map(teacherEpisodes.map((episode) => [`${episode.taskId}#${episode.replica}`, episode]));
  const stepOf = (example: MuSftExample) => episodeSteps(byId.get(example.trajectory)!)[example.step]!;
  if (kind === "prm") {
    // The scalar process reward ("w/o rubric", ARCO's `--rubric_mode direct`): K = 1 and no
    // criteria text, the score head regressed on the mean of the teacher's K projected scores.
    // The prompt is the K = 1 one, as μ's scoring writes it for a K = 1 export.
    return warm.mu.map((example) => ({
      ...example,
      messages: stepPrompt(stepOf(example), { ...promptOptions, k: 1 }),
      criteria: [],
      target: "",
      scores: [mean(example.scores)],
    }));
  }
  // Without the prefix: the same targets, the prompt of the question and the action alone.
  return warm.mu.map((example) => ({
    ...example,
    messages: stepPrompt({ ...stepOf(example), history: [] }, { ...promptOptions, k }),
  }));
}

type WarmMuKind = Exclude<MethodSetup["mu"], "none" | "teacher">;

async function warmUpMu(
  client: SidecarClient,
  root: string,
  kind: WarmMuKind,
  k: number,
  context: {
    config: ArcoConfig;
    seed: number;
    teacherEpisodes: readonly Episode[];
    promptOptions: { maxObservationChars: number };
  },
): Promise<WarmMu> {
  const { config, seed, teacherEpisodes, promptOptions } = context;
  const corpus: Step[] = teacherEpisodes.flatMap((episode) => episodeSteps(episode));
  const shape = {
    dModel: config.mu.dModel,
    heads: config.mu.heads,
    layers: config.mu.layers,
    maxSequence: config.mu.maxSequence,
  };
  const sftOptions = {
    epochs: config.mu.sftEpochs,
    learningRate: config.mu.sftLearningRate,
    headLearningRate: config.mu.sftHeadLearningRate,
    batchSize: 8,
    seed,
  };
  const sample = <T>(items: readonly T[]) =>
    shuffle(items, createRng(seed).fork(`mu-sft:${kind}`)).slice(0, config.mu.sftExamples);
  // The scalar reward averages the teacher's scores over the experiment's K criteria.
  const examples = muExamples(kind, kind === "prm" ? config.k : k, teacherEpisodes, promptOptions);
  const exported = await createMu(client, root, {
    k,
    seed,
    shape,
    vocabularySize: config.mu.vocabularySize,
    maxCriteriaTokens: config.mu.maxCriteriaTokens,
    corpus: sample(corpus),
    sft: { examples: sample(examples), ...sftOptions },
  });
  return { directory: exported.directory, k };
}

interface MethodContext {
  readonly config: ArcoConfig;
  readonly seed: number;
  readonly environment: ReturnType<typeof hotpotQa>;
  readonly train: readonly HotpotQuestion[];
  readonly evaluation: readonly HotpotQuestion[];
  /** The evaluation questions μ's diagnostics read. */
  readonly diagnosed: readonly HotpotQuestion[];
  readonly policy: Policy;
  readonly piDir: string | undefined;
  readonly client: SidecarClient;
  readonly dir: string;
  readonly resume: boolean;
  readonly promptOptions: { maxObservationChars: number };
  readonly onEvent: (event: TrainerEvent) => void;
}

async function runMethod(
  name: string,
  setup: MethodSetup,
  warmMu: (() => Promise<WarmMu>) | undefined,
  context: MethodContext,
): Promise<MethodRun> {
  const started = performance.now();
  const { config, seed, environment, policy, client } = context;
  if (context.piDir !== undefined && isTrainable(policy)) await policy.load(context.piDir);
  let model: RubricModel | undefined;
  let critic: StepCritic | undefined;
  let mu: MuCritic | undefined;
  if (setup.mu === "teacher") critic = teacherCritic(config.k);
  if (warmMu !== undefined) {
    // μ's exports live beside the method's run, so a resume serves (and trains on from) the
    // newest; a fresh start copies the warm-up μ in, keeping the export's own directory name
    // (its manifest's exportVersion must match it).
    const root = join(context.dir, "mu");
    let start = context.resume ? await newestExportIn(root) : undefined;
    if (start === undefined) {
      const warm = await warmMu();
      start = join(root, basename(warm.directory));
      await rm(root, { recursive: true, force: true });
      await cp(warm.directory, start, { recursive: true });
    }
    const remote = await RemoteMu.load(client, start);
    model = await RubricModel.load(root, { threads: 1 });
    mu = await MuCritic.open({
      model,
      ...(setup.coEvolves
        ? {
            mu: remote,
            root,
            update: {
              learningRate: config.mu.learningRate,
              headLearningRate: config.mu.headLearningRate,
              beta: config.mu.beta,
            },
          }
        : {}),
      ...(setup.mu === "fixed" ? { criteria: { kind: "fixed" as const, criteria: [...FIXED_CRITERIA] } } : {}),
      ...(setup.mu === "prm" ? { criteria: { kind: "none" as const } } : {}),
      prefix: setup.mu !== "noPrefix",
      maxNewTokens: config.mu.maxCriteriaTokens,
      prompt: context.promptOptions,
    });
    critic = mu;
  }
  let run: MethodRun;
  try {
    const result = await trainCoEvolution({
      environment,
      train: context.train,
      evaluation: context.evaluation,
      policy,
      ...(critic === undefined ? {} : { critic }),
      settings: { ...config.trainer, signal: setup.signal, outcomeAtTerminal: setup.outcomeAtTerminal === true, seed },
      run: { dir: context.dir, resume: context.resume },
      measure: hotpotMeasure,
      onEvent: context.onEvent,
    });
    const curve = result.log.flatMap((line) =>
      line.type === "eval" ? [{ epoch: line.epoch, em: line.metrics.em ?? 0, f1: line.metrics.f1 ?? 0 }] : [],
    );
    // The trainer's last evaluation again, episode by episode (greedy, the trainer's eval seed):
    // the paired tests compare methods question by question.
    const finals = await rollout(environment, context.evaluation, policy, { temperature: 0, seed: `${seed}/eval` });
    const perQuestion = finals.map((episode) => {
      const measured = hotpotMeasure(episode);
      return { id: episode.taskId, em: measured.em!, f1: measured.f1! };
    });
    // The official predictions format, so `rubric eval hotpotqa` (or hotpot_evaluate_v1.py) can
    // score the same answers; an episode that ended without an answer predicts "".
    const answers = Object.fromEntries(finals.map((episode) => [episode.taskId, finalAnswer(episode)]));
    await writeFile(join(context.dir, "predictions.json"), `${JSON.stringify({ answer: answers }, null, 2)}\n`);
    let diagnostics: Record<string, unknown> | undefined;
    if (mu !== undefined && (name === "arco" || name === "frozenMu")) {
      const shown = new Set(context.diagnosed.map((question) => question.id));
      diagnostics = await diagnose(
        mu,
        finals.filter((episode) => shown.has(episode.taskId)),
        context,
      );
    }
    run = {
      metrics: result.final ?? {},
      perQuestion,
      curve,
      log: result.log,
      rollouts: result.rollouts,
      ms: performance.now() - started,
      ...(diagnostics === undefined ? {} : { diagnostics }),
    };
  } finally {
    await model?.close();
  }
  // Finished: μ's exports were kept for a resume (its traces and diagnostics are written), and
  // result.json tells a resume to keep this run as it is.
  await rm(join(context.dir, "mu"), { recursive: true, force: true });
  await writeMethodRun(context.dir, run);
  return run;
}

/** The newest `vNNNN` export under a μ root a stopped run left, if any. */
async function newestExportIn(root: string): Promise<string | undefined> {
  const names = await readdir(root).catch(() => [] as string[]);
  const versions = names.filter((name) => /^v\d+$/.test(name)).sort((a, b) => Number(b.slice(1)) - Number(a.slice(1)));
  return versions.length === 0 ? undefined : join(root, versions[0]!);
}

/** Query pairs on the eval set: the same prefix, a search for a gold paragraph against one for a distractor. */
export function hotpotContrasts(questions: readonly HotpotQuestion[], seed: number | string): StepContrast[] {
  const rng = createRng(seed).fork("contrasts");
  return questions.flatMap((question) => {
    const distractors = question.paragraphs.filter((p) => !question.supportingTitles.includes(p.title));
    if (distractors.length === 0 || question.supportingTitles.length < 2) return [];
    const worse = distractors[rng.int(distractors.length)]!.title;
    const [first, second] = question.supportingTitles as [string, string];
    const firstText = question.paragraphs.find((p) => p.title === first)!.text;
    const start = { task: question.question, history: [], budgetLeft: 3 };
    const after = {
      task: question.question,
      history: [{ action: `Search[${first}]`, observation: firstText }],
      budgetLeft: 2,
    };
    return [
      { better: { ...start, action: `Search[${first}]` }, worse: { ...start, action: `Search[${worse}]` } },
      { better: { ...after, action: `Search[${second}]` }, worse: { ...after, action: `Search[${worse}]` } },
    ];
  });
}

async function diagnose(critic: MuCritic, episodes: readonly Episode[], context: MethodContext) {
  const ratings = await critic.rate(episodes);
  const traces = episodes.flatMap((episode, e) =>
    ratings[e]!.map((rating: StepRating, t) => stepTrace(`${episode.taskId}#${t}`, rating.criteria, rating.scores)),
  );
  await writeFile(join(context.dir, "eval-traces.jsonl"), traceJsonLines(traces));
  const contrast = await contrastScores(critic, hotpotContrasts(context.diagnosed, context.seed));
  const trajectorySums = ratings.map((steps) => steps.reduce((sum, step) => sum + step.s, 0));
  const outcomes = episodes.map((episode) => episode.reward > 0);
  return {
    evidence: evidenceAuc(episodes, ratings),
    // Does Σ_t s_t, which μ is trained to make equal R, rank successes above failures?
    outcomeAuc: outcomes.some((x) => x) && outcomes.some((x) => !x) ? rocAuc(trajectorySums, outcomes) : null,
    buckets: bucketScores(episodes, ratings),
    contrast: {
      pairs: contrast.pairs,
      meanDelta: contrast.meanDelta,
      preferred: contrast.preferred,
      ...(contrast.p === undefined ? {} : { p: contrast.p }),
    },
    criteria: sampleCriteria(episodes, ratings, 2, context.seed),
    adjusted: ratings.flat().filter((r) => r.adjusted !== undefined).length,
    unparsed: ratings.flat().filter((r) => r.adjusted === "unparsed").length,
    steps: ratings.flat().length,
  };
}

/** A method against outcome-only RL over (seed, question) pairs: McNemar on EM, Wilcoxon on F1. */
function pairedTests(runs: readonly MethodRun[], baseline: readonly MethodRun[]) {
  const ours = runs.flatMap((run) => run.perQuestion);
  const theirs = baseline.flatMap((run) => run.perQuestion);
  if (ours.length !== theirs.length || ours.some((q, i) => q.id !== theirs[i]!.id)) return undefined;
  const em = mcnemarExact(
    ours.map((q) => q.em),
    theirs.map((q) => q.em),
  );
  const f1Differs = ours.some((q, i) => q.f1 !== theirs[i]!.f1);
  return {
    emWins: em.b,
    emLosses: em.c,
    emP: em.pValue,
    f1P: f1Differs
      ? wilcoxonSignedRank(
          ours.map((q) => q.f1),
          theirs.map((q) => q.f1),
        ).pValue
      : null,
  };
}

function meanStd(values: readonly number[]) {
  return { mean: mean(values), std: values.length > 1 ? sampleStd(values) : 0, n: values.length };
}

function tableOf(
  config: ArcoConfig,
  runs: Record<string, MethodRun[]>,
  warmups: readonly Record<string, unknown>[],
  ms: number,
  trainCount: number,
  evalCount: number,
): ArcoTable {
  const baseline = runs["outcome"];
  const summarize = (name: string) => {
    const list = runs[name] ?? [];
    const paired = name === "outcome" || baseline === undefined ? undefined : pairedTests(list, baseline);
    return {
      em: meanStd(list.map((r) => r.metrics.em ?? 0)),
      arcoEm: meanStd(list.map((r) => r.metrics.arcoEm ?? 0)),
      f1: meanStd(list.map((r) => r.metrics.f1 ?? 0)),
      rollouts: list[0]?.rollouts ?? 0,
      perSeed: list.map((r) => ({ em: r.metrics.em ?? 0, f1: r.metrics.f1 ?? 0 })),
      ...(paired === undefined ? {} : { vsOutcome: paired }),
    };
  };
  const methods = Object.fromEntries(config.methods.map((m) => [m, summarize(m)]));
  const ablations = Object.fromEntries(
    Object.keys(runs)
      .filter((name) => name.startsWith("arcoK"))
      .map((name) => [name, summarize(name)]),
  );
  const shares = { environment: 0, policy: 0, muInference: 0, policyUpdate: 0, muTraining: 0, exportReload: 0 };
  let rollouts = 0;
  for (const list of Object.values(runs))
    for (const run of list)
      for (const line of run.log) {
        if (line.type !== "batch") continue;
        rollouts += line.rollouts;
        for (const key of Object.keys(shares) as (keyof typeof shares)[]) shares[key] += line.ms[key];
      }
  const trainingMs = Object.values(shares).reduce((a, b) => a + b, 0);
  return {
    kind: "arco-hotpotqa",
    config: { ...config, trainQuestions: trainCount, evalQuestions: evalCount } as unknown as Record<string, unknown>,
    methods: methods as ArcoTable["methods"],
    ablations,
    curves: Object.fromEntries(Object.entries(runs).map(([name, list]) => [name, list.map((r) => r.curve)])),
    diagnostics: Object.fromEntries(
      Object.entries(runs).flatMap(([name, list]) =>
        list.some((r) => r.diagnostics !== undefined) ? [[name, list.map((r) => r.diagnostics ?? null)]] : [],
      ),
    ),
    warmup: [...warmups],
    timing: {
      totalMs: ms,
      trainingMs,
      rollouts,
      rolloutsPerSecond: rollouts / (trainingMs / 1000),
      shares: Object.fromEntries(Object.entries(shares).map(([key, value]) => [key, value / trainingMs])),
    },
    paper: PAPER_ARCO,
  };
}

/**
 * The evaluated questions' own lines of the data file, in its order: the questions a table
 * reports on, as data `rubric eval hotpotqa --data` reads.
 */
function rowsOf(path: string, questions: readonly HotpotQuestion[]): string {
  const ids = new Set(questions.map((question) => question.id));
  const lines = readInputText(path)
    .split("\n")
    .filter((line) => line.trim() !== "" && ids.has((JSON.parse(line) as { _id: string })._id));
  return `${lines.join("\n")}\n`;
}

/** `table.json`, `table.md`, `curves.svg` and (when μ was diagnosed) `buckets.svg` under `out`. */
export async function writeArcoOutputs(out: string, table: ArcoTable): Promise<void> {
  await mkdir(out, { recursive: true });
  await writeFile(join(out, "table.json"), `${JSON.stringify(table, null, 2)}\n`);
  await writeFile(join(out, "table.md"), arcoMarkdown(table));
  for (const plot of await arcoPlots(table)) await writeFile(join(out, plot.file), plot.svg);
}
