// The ARCO gym's learned critics: μ in ARCO's form (one small transformer backbone, the LM head
// writing K criteria of the gym's grammar, the score head scoring them), warmed up once per hop
// count on the teacher's annotated episodes, then frozen or co-evolving in each method's run.
import { cp, mkdir, rm } from "node:fs/promises";
import { basename, join } from "node:path";
import { RubricModel } from "@rubric/arco-heads";
import { type MuObjective, RemoteMu, type SidecarClient } from "@rubric/sidecar";
import {
  arcoGym,
  createMu,
  type Episode,
  episodeSteps,
  episodeTrajectory,
  generateGymTasks,
  GYM_FIXED_CRITERIA,
  gymFixedAnnotation,
  gymNoisyTeacher,
  gymTeacherAnnotation,
  MuCritic,
  readWordVectors,
  rollout,
  type WordVectors,
} from "@rubric/rlxar";
import { ReproInputError } from "../errors.js";
import { muExamples } from "../arco/warmup.js";
import type { ArcoGymConfig } from "./config.js";
import type { GymMuWarmupKind } from "./table.js";

/** μ's step prompt in the gym: the observations are one sentence each, so nothing is cut. */
export const GYM_MU_PROMPT = { maxObservationChars: 400 } as const;

/** The warm-up μ of one hop count: its export, and what its warm-up saw. */
export interface WarmGymMu {
  readonly directory: string;
  /** What its score head was fitted to: the teacher's decomposed scores (ARCO's), or each step's outcome (a value, ours). */
  readonly objective: MuObjective;
  /** Its examples: ARCO's, fixed criteria, without the prefix, or a scalar PRM. */
  readonly variant: GymMuWarmupKind["variant"];
  readonly k: number;
  readonly examples: number;
  readonly episodes: number;
  /** Tokens of the vocabulary that started from a word vector (0 without them). */
  readonly embedded: number;
  readonly sftLoss: readonly number[];
  /** Its language-model pretraining (ours), when the run asked for one. */
  readonly pretrain?: { readonly tasks: number; readonly tokens: number; readonly ce: readonly number[] };
  readonly ms: number;
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

/**
 * The noisy teacher's episodes a learned critic of H-hop tasks warms up on: `mu.sftTasks` tasks of
 * the μ stream (`${seed}/mu`, which no policy trains on) × `mu.sftReplicas`, at temperature 1.
 * μ and the feature critic see the same episodes.
 */
export async function criticWarmupEpisodes(hops: number, config: ArcoGymConfig): Promise<Episode[]> {
  const tasks = generateGymTasks({
    hops,
    count: config.mu.sftTasks,
    seed: `${config.seed}/mu`,
    split: "train",
    lookalikes: config.lookalikes,
  });
  return rollout(arcoGym(), tasks, gymNoisyTeacher(tasks, { noise: config.teacher.noise }), {
    temperature: 1,
    seed: `mu-warm-up/${hops}`,
    replicas: config.mu.sftReplicas,
  });
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
     * scores, projected so Σ_t s_t = R) or `value` (ours: every step's K targets its episode's
     * outcome R, so that μ's score is a Monte Carlo value of the prefix and the action); the
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
  if (objective === "value" && variant !== "generated")
    throw new ReproInputError("kind", `a value's warm-up takes ARCO's examples, not ${JSON.stringify(variant)}`);
  const started = performance.now();
  const episodes = await criticWarmupEpisodes(hops, config);
  // A PRM's scalar is the mean of the teacher's scores at the run's K.
  const annotatedK = variant === "prm" ? mu.k : kind.k;
  const data = muExamples(
    variant,
    annotatedK,
    episodes,
    (episode) =>
      variant === "fixed" ? gymFixedAnnotation(episode, annotatedK) : gymTeacherAnnotation(episode, annotatedK),
    GYM_MU_PROMPT,
  );
  const rewards = new Map(episodes.map((episode) => [episodeTrajectory(episode).id, episode.reward]));
  const examples =
    objective === "decomposition"
      ? data
      : data.map((example) => {
          const reward = rewards.get(example.trajectory);
          if (reward === undefined)
            throw new ReproInputError(
              `μ warm-up, H = ${hops}`,
              `example of ${example.trajectory}, an episode it did not see`,
            );
          return { ...example, scores: example.scores.map(() => reward) };
        });
  let embedded = 0;
  const losses: number[] = [];
  const pretrainTexts = gymPretrainTexts(hops, config);
  const pretrainCe: number[] = [];
  let pretrainTokens = 0;
  const exported = await createMu(client, root, {
    k: kind.k,
    seed: config.seed,
    shape: { dModel: mu.dModel, heads: mu.heads, layers: mu.layers, maxSequence: mu.maxSequence },
    vocabularySize: mu.vocabularySize,
    maxCriteriaTokens: mu.maxCriteriaTokens,
    corpus: episodes.flatMap((episode) => episodeSteps(episode)),
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
        onEpoch?.(epoch.epoch, mu.sftEpochs);
      },
    },
  });
  return {
    directory: exported.directory,
    objective,
    variant,
    k: kind.k,
    examples: data.length,
    episodes: episodes.length,
    embedded,
    sftLoss: losses,
    ...(pretrainTexts.length === 0
      ? {}
      : { pretrain: { tasks: pretrainTexts.length, tokens: pretrainTokens, ce: pretrainCe } }),
    ms: performance.now() - started,
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
    ...(warm.variant === "fixed"
      ? { criteria: { kind: "fixed" as const, criteria: GYM_FIXED_CRITERIA.slice(0, warm.k) } }
      : {}),
    ...(warm.variant === "prm" ? { criteria: { kind: "none" as const } } : {}),
    prefix: warm.variant !== "noPrefix",
    maxNewTokens: mu.maxCriteriaTokens,
    prompt: GYM_MU_PROMPT,
  });
  return {
    critic,
    close: async () => {
      await model.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
