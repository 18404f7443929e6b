// ARCO on HotpotQA, the warm-up: π SFT on the teacher's trajectories, and one warm-up μ per kind.
import { ReproInputError } from "../errors.js";
import { join } from "node:path";
import {
  type MuSftExample,
  readModel,
  type Step,
  stepPrompt,
  type StepPromptOptions,
  type TrajectoryAnnotation,
} from "@rubric/arco-heads";
import { createRng, definedFields, mean, shuffle } from "@rubric/core";
import { RemoteMu, type SidecarClient } from "@rubric/sidecar";
import {
  createMu,
  type Episode,
  SidecarMuModel,
  episodeSteps,
  type PolicySftExample,
  teacherAnnotation,
  type TrainablePolicy,
  warmupData,
} from "@rubric/rlxar";
import { type ArcoConfig, FIXED_CRITERIA, type MethodSetup } from "./config.js";
import { TINY_MU_MODEL } from "./mu-model.js";

/**
 * The warm-up μ of one kind: the export every run of that kind starts from (an ONNX export, or a
 * sidecar-served μ's version directory when the configuration has `mu.model`).
 */
export interface WarmMu {
  readonly directory: string;
  readonly k: number;
}

export async function sftPolicy(
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

/** Which warm-up μ a method starts from: ARCO's, fixed criteria, without the prefix, or a scalar PRM. */
export const MU_EXAMPLE_KINDS = ["generated", "fixed", "noPrefix", "prm"] as const;
export type MuExampleKind = (typeof MU_EXAMPLE_KINDS)[number];

/**
 * μ-SFT examples of one kind from the teacher's episodes and an annotator of K criteria per step
 * (`annotate(episode)`: HotpotQA's teacher, or the gym's checkers): as annotated (ARCO, and
 * `fixed`, whose annotator writes the fixed list), without the prefix (the same targets, the
 * prompt of the question and the action alone), or ARCO's scalar process reward `prm` ("w/o
 * rubric", `--rubric_mode direct`: K = 1 and no criteria text, the score head regressed on the
 * mean of the annotator's K projected scores, under the K = 1 prompt a K = 1 export scores with).
 */
export function muExamples(
  kind: MuExampleKind,
  k: number,
  teacherEpisodes: readonly Episode[],
  annotate: (episode: Episode) => TrajectoryAnnotation,
  promptOptions: StepPromptOptions,
): MuSftExample[] {
  const warm = warmupData(teacherEpisodes, teacherEpisodes.map(annotate), promptOptions);
  if (kind === "generated" || kind === "fixed") return warm.mu;
  const byId = new Map(teacherEpisodes.map((episode) => [`${episode.taskId}#${episode.replica}`, episode]));
  const stepOf = (example: MuSftExample) => episodeSteps(byId.get(example.trajectory)!)[example.step]!;
  if (kind === "prm")
    return warm.mu.map((example) => ({
      ...example,
      messages: stepPrompt(stepOf(example), { ...promptOptions, k: 1 }),
      criteria: [],
      target: "",
      scores: [mean(example.scores)],
    }));
  return warm.mu.map((example) => ({
    ...example,
    messages: stepPrompt({ ...stepOf(example), history: [] }, { ...promptOptions, k }),
  }));
}

/** HotpotQA's teacher at K; `fixed` keeps its scores on the fixed criteria's text, as ARCO's ablation does. */
function hotpotAnnotator(kind: MuExampleKind, k: number): (episode: Episode) => TrajectoryAnnotation {
  return (episode) => {
    const annotation = teacherAnnotation(episode, k);
    if (kind !== "fixed") return annotation;
    return { ...annotation, steps: annotation.steps.map((step) => ({ ...step, criteria: [...FIXED_CRITERIA] })) };
  };
}

export type WarmMuKind = Exclude<MethodSetup["mu"], "none" | "teacher">;

export async function warmUpMu(
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
  const annotatedK = kind === "prm" ? config.k : k;
  const examples = muExamples(kind, annotatedK, teacherEpisodes, hotpotAnnotator(kind, annotatedK), promptOptions);
  if (config.mu.model !== undefined && config.mu.model.name !== TINY_MU_MODEL) {
    // ARCO's μ: a transformers model with LoRA, its own tokenizer and chat template, in the sidecar.
    const { model: setting } = config.mu;
    const mu = await RemoteMu.init(client, {
      model: { kind: "transformers", name: setting.name },
      k,
      seed,
      ...definedFields({ pooling: config.mu.pooling }),
      dtype: setting.dtype,
      device: config.mu.device ?? "auto",
      ...(setting.lora === undefined
        ? {}
        : { lora: { ...setting.lora, targetModules: [...setting.lora.targetModules] } }),
    });
    const served = await SidecarMuModel.create(mu, join(root, "served"), {
      maxSequence: config.mu.maxSequence,
      maxCriteriaTokens: config.mu.maxCriteriaTokens,
      sft: { examples: sample(examples), ...sftOptions },
    });
    return { directory: served.directory, k };
  }
  const exported = await createMu(client, root, {
    k,
    seed,
    ...definedFields({ pooling: config.mu.pooling }),
    shape,
    vocabularySize: config.mu.vocabularySize,
    maxCriteriaTokens: config.mu.maxCriteriaTokens,
    corpus: sample(corpus),
    sft: { examples: sample(examples), ...sftOptions },
    ...(config.mu.device === undefined ? {} : { device: config.mu.device }),
  });
  if (config.mu.model === undefined) return { directory: exported.directory, k };
  // The same small μ, served by the sidecar: its criteria written by torch, not onnxruntime-node.
  const { tokenizer } = await readModel(exported.directory);
  // createMu's small μ: the byte-level BPE it trained (a llama backbone is not an option here).
  if (tokenizer.kind !== "byte-bpe")
    throw new ReproInputError(
      "mu.model",
      `the small μ came with a ${tokenizer.kind} tokenizer, not its byte-level BPE`,
    );
  const served = await SidecarMuModel.create(exported.mu, join(root, "served"), {
    tokenizer,
    maxSequence: config.mu.maxSequence,
    maxCriteriaTokens: config.mu.maxCriteriaTokens,
  });
  return { directory: served.directory, k };
}
