// The ARCO gym's learned critics: μ in ARCO's form (one small transformer backbone, the LM head
// writing K criteria of the gym's grammar, the score head scoring them), warmed up once per hop
// count on the teacher's annotated episodes, then frozen or co-evolving in each method's run.
import { cp, mkdir, rm } from "node:fs/promises";
import { basename, join } from "node:path";
import { type MuSftExample, RubricModel, type StepPromptSettings } from "@rubric/arco-heads";
import { mean, spearman } from "@rubric/core";
import { RemoteMu, type SidecarClient } from "@rubric/sidecar";
import {
  arcoGym,
  createMu,
  type Episode,
  episodeSteps,
  episodeTrajectory,
  generateGymTasks,
  type GymTask,
  GYM_FIXED_CRITERIA,
  gymFixedAnnotation,
  gymNoisyTeacher,
  gymTeacherAnnotation,
  MuCritic,
  type MuCriticOptions,
  type Policy,
  readWordVectors,
  rollout,
  type StepRating,
  trueStepAdvantages,
  type WordVectors,
} from "@rubric/rlxar";
import { ReproInputError } from "../errors.js";
import { muExamples } from "../arco/warmup.js";
import type { ArcoGymConfig } from "./config.js";
import type { GymMuObjective, GymMuWarmupKind } from "./table.js";

/** μ's step prompt in the gym: the observations are one sentence each, so nothing is cut. */
export const GYM_MU_PROMPT = { maxObservationChars: 400 } as const;

/** The step prompt a run's μ reads, in warm-up and as a critic: the gym's, in the run's layout. */
export function gymMuPrompt(config: ArcoGymConfig): StepPromptSettings {
  return { ...GYM_MU_PROMPT, layout: config.mu.promptLayout };
}

/** The warm-up μ of one hop count: its export, and what its warm-up saw. */
export interface WarmGymMu {
  readonly directory: string;
  /**
   * What its score head was fitted to: the teacher's decomposed scores (ARCO's), each step's
   * outcome (a value, ours), or each step's true advantage under the teacher (a control, ours).
   */
  readonly objective: GymMuObjective;
  /** Its examples: ARCO's, fixed criteria, without the prefix, or a scalar PRM. */
  readonly variant: GymMuWarmupKind["variant"];
  readonly k: number;
  readonly examples: number;
  readonly episodes: number;
  /** Tokens of the vocabulary that started from a word vector (0 without them). */
  readonly embedded: number;
  readonly sftLoss: readonly number[];
  /**
   * The score head's part of that loss, per epoch: the MSE of its scores against the targets (the
   * loss is the criteria's CE + 10 × this), beside the targets' own variance — what a head that
   * learnt only their mean would reach.
   */
  readonly sftScores: { readonly mse: readonly number[]; readonly targetVariance: number };
  /** Its language-model pretraining (ours), when the run asked for one. */
  readonly pretrain?: { readonly tasks: number; readonly tokens: number; readonly ce: readonly number[] };
  /** The pretrained llama its backbone started from (`mu.backbone`, ours): the file's name and μ's parameters. */
  readonly backbone?: { readonly file: string; readonly parameters: number };
  /** Its fit to its targets, frozen as exported: on its warm-up episodes, and on fresh ones of the same teacher. */
  readonly fit: { readonly train: MuFit; readonly heldOut?: MuFit };
  readonly ms: number;
}

/** The MSE a constant prediction at the values' mean scores: the population variance. */
function meanSquaredDeviation(values: readonly number[]): number {
  const centre = mean(values);
  return mean(values.map((value) => (value - centre) ** 2));
}

/**
 * The gym's own text a μ is pretrained on as a language model (ours): `mu.pretrainTasks` tasks of
 * H hops from their own stream (`${seed}/mu-corpus`, read by nothing else, so neither the
 * warm-up's nor any policy's tasks), each its question and then its pool's paragraphs, one per
 * line as the observations show them ("title: text").
 */
export function gymPretrainTexts(hops: number, config: ArcoGymConfig): string[] {
  if (config.mu.pretrainTasks === 0) return [];
  return generateGymTasks({
    hops,
    count: config.mu.pretrainTasks,
    seed: `${config.seed}/mu-corpus`,
    split: "train",
    lookalikes: config.lookalikes,
  }).map((task) =>
    [task.question, ...task.paragraphs.map((paragraph) => `${paragraph.title}: ${paragraph.text}`)].join("\n"),
  );
}

/** The noisy teacher on one stream of training tasks no policy trains on. */
interface TeacherStream {
  readonly tasks: readonly GymTask[];
  readonly teacher: Policy;
  /** Names the stream in seeds and errors. */
  readonly name: string;
  readonly replicas: number;
}

/**
 * μ's warm-up stream (`${seed}/mu`, `mu.sftTasks` tasks × `mu.sftReplicas`), or the stream its
 * fit is measured on (`${seed}/mu-fit`, `mu.fitTasks` tasks once each), which nothing else reads.
 */
function teacherStream(hops: number, config: ArcoGymConfig, stream: "mu" | "mu-fit"): TeacherStream {
  const tasks = generateGymTasks({
    hops,
    count: stream === "mu" ? config.mu.sftTasks : config.mu.fitTasks,
    seed: `${config.seed}/${stream}`,
    split: "train",
    lookalikes: config.lookalikes,
  });
  return {
    tasks,
    teacher: gymNoisyTeacher(tasks, { noise: config.teacher.noise }),
    name: stream === "mu" ? "mu-warm-up" : stream,
    replicas: stream === "mu" ? config.mu.sftReplicas : 1,
  };
}

/** The teacher's episodes on a stream, at temperature 1. */
function teacherEpisodes(hops: number, stream: TeacherStream): Promise<Episode[]> {
  return rollout(arcoGym(), stream.tasks, stream.teacher, {
    temperature: 1,
    seed: `${stream.name}/${hops}`,
    replicas: stream.replicas,
  });
}

/**
 * The noisy teacher's episodes a learned critic of H-hop tasks warms up on: `mu.sftTasks` tasks of
 * the μ stream (`${seed}/mu`, which no policy trains on) × `mu.sftReplicas`, at temperature 1.
 * μ and the feature critic see the same episodes.
 */
export function criticWarmupEpisodes(hops: number, config: ArcoGymConfig): Promise<Episode[]> {
  return teacherEpisodes(hops, teacherStream(hops, config, "mu"));
}

/**
 * Each step's true advantage under the noisy teacher that wrote `episodes` (by default μ's
 * warm-up episodes): Q − V by Monte Carlo from the replayed prefix, with the teacher continuing
 * at its own temperature (1), twice the control's continuations per Q and V (as many as the
 * credit probe took before it had its own setting, `creditProbeRollouts`). The labels of the
 * `muAdvantage` control (ours): step-level credit that ARCO's setting does not have, given to μ
 * to ask whether its backbone can read credit from text at all.
 */
export async function teacherStepAdvantages(
  hops: number,
  config: ArcoGymConfig,
  episodes: readonly Episode[],
  stream: TeacherStream = teacherStream(hops, config, "mu"),
): Promise<Map<string, number[]>> {
  const environment = arcoGym();
  const byId = new Map(stream.tasks.map((task) => [environment.taskId(task), task]));
  const advantages = new Map<string, number[]>();
  for (const [e, episode] of episodes.entries()) {
    const task = byId.get(episode.taskId);
    if (task === undefined)
      throw new ReproInputError(
        `episodes[${e}].taskId`,
        `${JSON.stringify(episode.taskId)} is not a task of the ${stream.name} stream`,
      );
    const id = episodeTrajectory(episode).id;
    const credit = await trueStepAdvantages(environment, task, stream.teacher, episode, {
      rollouts: 2 * config.trueAdvantage.rollouts,
      temperature: 1,
      seed: `mu-advantage/${hops}/${id}`,
    });
    advantages.set(
      id,
      credit.map((c) => c.advantage),
    );
  }
  return advantages;
}

/**
 * A warm-up's μ-SFT examples of `episodes`: ARCO's (the teacher's checked criteria and projected
 * scores) or a variant's, every step's K targets replaced by its episode's outcome for a value and
 * by its true advantage for the control.
 */
async function warmupExamples(
  kind: GymMuWarmupKind,
  hops: number,
  config: ArcoGymConfig,
  episodes: readonly Episode[],
  stream: TeacherStream,
): Promise<MuSftExample[]> {
  const { objective, variant } = kind;
  // A PRM's scalar is the mean of the teacher's scores at the run's K.
  const annotatedK = variant === "prm" ? config.mu.k : kind.k;
  const data = muExamples(
    variant,
    annotatedK,
    episodes,
    (episode) =>
      variant === "fixed" ? gymFixedAnnotation(episode, annotatedK) : gymTeacherAnnotation(episode, annotatedK),
    gymMuPrompt(config),
  );
  if (objective === "decomposition") return data;
  // A value's target is the step's episode outcome; the control's, the step's true advantage.
  const targets =
    objective === "advantage"
      ? await teacherStepAdvantages(hops, config, episodes, stream)
      : new Map(
          episodes.map((episode) => [episodeTrajectory(episode).id, episodeSteps(episode).map(() => episode.reward)]),
        );
  return data.map((example) => {
    const target = targets.get(example.trajectory)?.[example.step];
    if (target === undefined)
      throw new ReproInputError(
        `μ warm-up, H = ${hops}`,
        `example of step ${example.step} of ${example.trajectory}, a step it did not see`,
      );
    return { ...example, scores: example.scores.map(() => target) };
  });
}

/** How closely μ's step scores follow its warm-up's targets on some episodes. */
export interface MuFit {
  /** Spearman of s_t (the mean of μ's K scores) with the mean of the step's K targets; null if either is constant. */
  readonly spearman: number | null;
  readonly steps: number;
}

/**
 * μ's fit to its targets: per step that has an example, s_t (its ratings' mean score) against the
 * mean of the example's K targets. A rating is needed for every example's step.
 */
export function muFit(
  episodes: readonly Episode[],
  ratings: readonly (readonly StepRating[])[],
  examples: readonly MuSftExample[],
): MuFit {
  const rows = new Map(episodes.map((episode, e) => [episodeTrajectory(episode).id, ratings[e]]));
  const xs: number[] = [];
  const ys: number[] = [];
  for (const [i, example] of examples.entries()) {
    const rating = rows.get(example.trajectory)?.[example.step];
    if (rating === undefined)
      throw new ReproInputError(`examples[${i}]`, `step ${example.step} of ${example.trajectory} has no rating`);
    xs.push(rating.s);
    ys.push(mean(example.scores));
  }
  return { spearman: definedSpearman(xs, ys), steps: xs.length };
}

/**
 * Spearman's ρ of paired values, or null where it is undefined: fewer than 3 pairs, or either
 * side constant. How the gym reports every rank correlation of a critic (its credit, its fit).
 */
export function definedSpearman(xs: readonly number[], ys: readonly number[]): number | null {
  const varies = (values: readonly number[]) => values.some((v) => v !== values[0]);
  return xs.length >= 3 && varies(xs) && varies(ys) ? spearman([...xs], [...ys]).statistic : null;
}

/**
 * Warms up μ for H-hop tasks: the noisy teacher's episodes on the μ stream of training tasks
 * (`${seed}/mu`, which no policy trains on), annotated by the gym's checkers
 * (`gymTeacherAnnotation`: K criteria of the grammar per step, ±0.8 by verdict, projected so
 * Σ_t s_t = R), and ARCO's μ-SFT on them (CE on the criteria + 10 × MSE on the scores). One μ
 * per hop count, shared by every seed: its warm-up does not depend on a seed's policy.
 */
export async function warmGymMu(
  client: SidecarClient,
  root: string,
  hops: number,
  config: ArcoGymConfig,
  options: {
    /** `config.mu.wordVectors` already read (a run reads them once, before any training). */
    readonly wordVectors?: WordVectors;
    readonly onEpoch?: (epoch: number, of: number) => void;
    /** After each epoch of the language-model pretraining (ours), when the run asked for one. */
    readonly onPretrainEpoch?: (epoch: number, of: number) => void;
    /**
     * Which warm-up (`muWarmupOf`): ARCO's `decomposition` objective (the teacher's per-step
     * scores, projected so Σ_t s_t = R), `value` (ours: every step's K targets its episode's
     * outcome R, so that μ's score is a Monte Carlo value of the prefix and the action) or
     * `advantage` (ours, a control: every step's K targets its true advantage under the
     * teacher, `teacherStepAdvantages`); the
     * examples' variant (ARCO's, fixed criteria scored by their checkers, without the prefix, or
     * a scalar PRM); and K. Default: ARCO's at the run's K.
     */
    readonly kind?: GymMuWarmupKind;
  } = {},
): Promise<WarmGymMu> {
  const { onEpoch } = options;
  const { mu } = config;
  const kind = options.kind ?? { objective: "decomposition", variant: "generated", k: mu.k };
  const { objective, variant } = kind;
  if (objective !== "decomposition" && variant !== "generated")
    throw new ReproInputError("kind", `a ${objective} warm-up takes ARCO's examples, not ${JSON.stringify(variant)}`);
  const started = performance.now();
  const stream = teacherStream(hops, config, "mu");
  const episodes = await teacherEpisodes(hops, stream);
  const examples = await warmupExamples(kind, hops, config, episodes, stream);
  let embedded = 0;
  const losses: number[] = [];
  const scoreMse: number[] = [];
  const pretrainTexts = gymPretrainTexts(hops, config);
  const pretrainCe: number[] = [];
  let pretrainTokens = 0;
  const exported = await createMu(client, root, {
    k: kind.k,
    seed: config.seed,
    pooling: mu.pooling,
    maxCriteriaTokens: mu.maxCriteriaTokens,
    // A llama backbone brings its shape and vocabulary; the small μ learns its tokenizer from the warm-up's steps.
    ...(mu.backbone !== undefined
      ? { backbone: { gguf: mu.backbone }, shape: { maxSequence: mu.maxSequence } }
      : {
          shape: { dModel: mu.dModel, heads: mu.heads, layers: mu.layers, maxSequence: mu.maxSequence },
          vocabularySize: mu.vocabularySize,
          corpus: episodes.flatMap((episode) => episodeSteps(episode)),
        }),
    ...(mu.wordVectors === null ? {} : { wordVectors: options.wordVectors ?? (await readWordVectors(mu.wordVectors)) }),
    onEmbedded: ({ matched }) => {
      embedded = matched;
    },
    ...(pretrainTexts.length === 0
      ? {}
      : {
          pretrain: {
            texts: pretrainTexts,
            epochs: mu.pretrainEpochs,
            learningRate: mu.pretrainLearningRate,
            seed: config.seed,
            onEpoch: (epoch) => {
              pretrainCe.push(epoch.ce);
              pretrainTokens = epoch.tokens;
              options.onPretrainEpoch?.(epoch.epoch, mu.pretrainEpochs);
            },
          },
        }),
    sft: {
      examples,
      epochs: mu.sftEpochs,
      learningRate: mu.sftLearningRate,
      headLearningRate: mu.sftHeadLearningRate,
      batchSize: 8,
      seed: config.seed,
      onEpoch: (epoch) => {
        losses.push(epoch.loss);
        scoreMse.push(epoch.mse);
        onEpoch?.(epoch.epoch, mu.sftEpochs);
      },
    },
  });
  const fit = await warmupFits(root, kind, hops, config, episodes, examples);
  return {
    directory: exported.directory,
    objective,
    variant,
    k: kind.k,
    examples: examples.length,
    episodes: episodes.length,
    embedded,
    sftLoss: losses,
    sftScores: { mse: scoreMse, targetVariance: meanSquaredDeviation(examples.flatMap((example) => example.scores)) },
    ...(pretrainTexts.length === 0
      ? {}
      : { pretrain: { tasks: pretrainTexts.length, tokens: pretrainTokens, ce: pretrainCe } }),
    ...(mu.backbone === undefined
      ? {}
      : { backbone: { file: basename(mu.backbone), parameters: exported.mu.summary.parameters } }),
    fit,
    ms: performance.now() - started,
  };
}

/**
 * The warm-up μ's fit to its targets, frozen as it was exported: on the episodes it trained on,
 * and on `mu.fitTasks` fresh episodes of the same teacher, labelled the same way (memorised, or
 * learnt?). Read with the critic's own criteria and prompt, each step's credit its mean score.
 */
async function warmupFits(
  root: string,
  kind: GymMuWarmupKind,
  hops: number,
  config: ArcoGymConfig,
  episodes: readonly Episode[],
  examples: readonly MuSftExample[],
): Promise<{ train: MuFit; heldOut?: MuFit }> {
  const model = await RubricModel.load(root, { threads: 1 });
  try {
    const critic = await MuCritic.open({ model, ...muReading(kind, config) });
    const train = muFit(episodes, await critic.rate(episodes), examples);
    if (config.mu.fitTasks === 0) return { train };
    const stream = teacherStream(hops, config, "mu-fit");
    const fresh = await teacherEpisodes(hops, stream);
    const heldOut = muFit(fresh, await critic.rate(fresh), await warmupExamples(kind, hops, config, fresh, stream));
    return { train, heldOut };
  } finally {
    await model.close();
  }
}

/** How a μ of a warm-up kind reads a step: its criteria's source, whether it sees the prefix, the prompt. */
function muReading(
  kind: GymMuWarmupKind,
  config: ArcoGymConfig,
): Pick<MuCriticOptions, "criteria" | "prefix" | "maxNewTokens" | "prompt"> {
  return {
    ...(kind.variant === "fixed"
      ? { criteria: { kind: "fixed" as const, criteria: GYM_FIXED_CRITERIA.slice(0, kind.k) } }
      : {}),
    ...(kind.variant === "prm" ? { criteria: { kind: "none" as const } } : {}),
    prefix: kind.variant !== "noPrefix",
    maxNewTokens: config.mu.maxCriteriaTokens,
    prompt: gymMuPrompt(config),
  };
}

/** A critic from a warm-up μ, in a run directory of its own; `close` releases its sessions. */
export interface GymMuCritic {
  readonly critic: MuCritic;
  close(): Promise<void>;
}

/**
 * The warm-up μ as one method's critic: frozen (its export served as it is) or co-evolving (a
 * copy under `dir`, trained by ARCO's decomposition step on every batch and re-exported).
 */
export async function openGymMuCritic(
  client: SidecarClient,
  warm: WarmGymMu,
  dir: string,
  options: { readonly coEvolves: boolean; readonly config: ArcoGymConfig },
): Promise<GymMuCritic> {
  const { mu } = options.config;
  // The export keeps its own directory name (its manifest's exportVersion must match it).
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const start = join(dir, basename(warm.directory));
  await cp(warm.directory, start, { recursive: true });
  const model = await RubricModel.load(dir, { threads: 1 });
  const critic = await MuCritic.open({
    model,
    ...(options.coEvolves
      ? {
          mu: await RemoteMu.load(client, start),
          root: dir,
          update: { learningRate: mu.learningRate, headLearningRate: mu.headLearningRate, beta: mu.beta },
        }
      : {}),
    // A value μ credits each step with its value's change (ours), and so trains by the value loss.
    ...(warm.objective === "value" ? { credit: "value-difference" as const } : {}),
    ...muReading(warm, options.config),
  });
  return {
    critic,
    close: async () => {
      await model.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
