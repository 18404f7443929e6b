import { performance } from "node:perf_hooks";
import { type Adam, createRng, shuffle } from "@rubric/core";
import { TrainingInputError } from "../errors.js";
import type { PolicyPrompt } from "../policy/prompt.js";
import type { TrainerBackend } from "./backend.js";
import type { TokenPolicy } from "./token-policy.js";
import type { RunDirectory } from "@rubric/core/runs";
import { openStage, TrainingAbortedError, type TrainingLogEntry } from "./train.js";

/**
 * Stage I, in one place: the example type, the loss, the in-process gradient step and the loop.
 * Every SFT in the repository — `InProcessBackend.sftStep`, the gym environment's teacher examples,
 * the ARCANE reproduction — goes through these, so that a loss logged by the stage and a loss
 * measured afterwards are the same quantity.
 */

/** One supervised example: what the policy sees, and the sequence to imitate (e.g. questions asked, then the reference rubric). */
export interface SftItem<Prompt = PolicyPrompt> {
  readonly prompt: Prompt;
  readonly tokens: readonly number[];
}

export type SftEpochEntry = Extract<TrainingLogEntry, { stage: "sft" }>;

/** Mean negative log-likelihood per token of the items under the policy (Stage I's loss). */
export function sftLoss<Prompt>(policy: TokenPolicy<Prompt>, items: readonly SftItem<Prompt>[]): number {
  let nll = 0;
  let tokens = 0;
  for (const { prompt, tokens: seq } of items) {
    const lps = policy.tokenLogProbs(prompt, seq);
    nll -= lps.reduce((a, b) => a + b, 0);
    tokens += lps.length;
  }
  return nll / tokens;
}

/**
 * One Stage I step on a minibatch, in process: ascend the mean per-token log-likelihood. Returns the
 * batch's mean NLL per token before the step. `InProcessBackend.sftStep` is this.
 */
export function sftStep<Prompt>(
  policy: TokenPolicy<Prompt>,
  adam: Adam,
  batch: readonly SftItem<Prompt>[],
  learningRate?: number,
): number {
  const grads = policy.parameters.map((p) => new Float64Array(p.length));
  const perItem = batch.map((d) => policy.tokenLogProbs(d.prompt, d.tokens));
  const tokens = perItem.reduce((n, lps) => n + lps.length, 0);
  batch.forEach((d, i) =>
    policy.accumulateGradient(d.prompt, d.tokens, new Array<number>(perItem[i]!.length).fill(1 / tokens), grads),
  );
  adam.ascend(grads, learningRate);
  return -perItem.flat().reduce((a, b) => a + b, 0) / tokens;
}

export interface SftTrainingOptions<Prompt> {
  readonly backend: TrainerBackend<Prompt>;
  readonly examples: readonly SftItem<Prompt>[];
  readonly epochs: number;
  readonly seed: number;
  /** Default 16. */
  readonly batchSize?: number;
  /** Default 0.05. */
  readonly learningRate?: number;
  readonly run?: RunDirectory;
  readonly onLog?: (entry: TrainingLogEntry) => void;
  readonly signal?: AbortSignal;
}

/**
 * Stage I through a backend: per-token cross-entropy on reference sequences, minibatches in a
 * seeded order per epoch (keyed by seed and epoch, so a resumed run shuffles as an uninterrupted
 * one), one `backend.sftStep` each; logged and checkpointed per epoch like Stage II. An epoch's
 * `loss` is its mean NLL per token, each batch measured before its step — the quantity
 * {@link sftLoss} measures, taken along the way. Returns the whole log of the stage.
 *
 * @example
 * const backend = new InProcessBackend(new RubricPolicy({ seed: 1 }));
 * const log = await trainSftStage({ backend, examples: await teacherExamples(backend.policy, prompts), epochs: 6, seed: 1 });
 */
export async function trainSftStage<Prompt>(options: SftTrainingOptions<Prompt>): Promise<SftEpochEntry[]> {
  if (options.examples.length === 0)
    throw new TrainingInputError("trainSftStage: options.examples must hold at least one example, got []");
  const batchSize = options.batchSize ?? 16;
  const learningRate = options.learningRate ?? 0.05;
  const state = await openStage(options, "sft", { seed: options.seed, batchSize, learningRate });
  for (let epoch = state.start; epoch < options.epochs; epoch++) {
    if (options.signal?.aborted) throw new TrainingAbortedError(`stopped before epoch ${epoch} of ${options.epochs}`);
    const started = performance.now();
    const order = shuffle(options.examples, createRng(options.seed).fork(`sft-epoch:${epoch}`));
    let nll = 0;
    let tokens = 0;
    for (let i = 0; i < order.length; i += batchSize) {
      const batch = order.slice(i, i + batchSize);
      // A backend reports a batch's mean per token; weighting by tokens makes the epoch's a per-token mean too.
      const batchTokens = batch.reduce((n, e) => n + e.tokens.length, 0);
      nll += (await options.backend.sftStep(batch, { learningRate })) * batchTokens;
      tokens += batchTokens;
    }
    await state.record(
      { stage: "sft", epoch, loss: nll / tokens, seconds: (performance.now() - started) / 1000 },
      epoch === options.epochs - 1,
    );
  }
  return state.log.filter((e): e is SftEpochEntry => e.stage === "sft");
}
