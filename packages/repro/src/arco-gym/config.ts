// The ARCO gym run (a simulation), its configuration: which worlds, how the warm-up is made, and
// the one rollout budget every method trains for.
import { MU_POOLINGS, type MuPooling, PROMPT_LAYOUTS, type PromptLayout } from "@rubric/arco-heads";
import { CARELESS_NOISE, GYM_LOOKALIKES, GYM_MAX_HOPS } from "@rubric/rlxar";
import type { SmallMuSettings } from "../arco/config.js";
import { ReproInputError } from "../errors.js";
import { ARCO_GYM_DEFAULT_METHODS, ARCO_GYM_METHODS, type ArcoGymMethod } from "./table.js";

/** Everything an ARCO gym run is configured by; `arcoGymConfig` fills the defaults. */
export interface ArcoGymConfig {
  readonly quick: boolean;
  /** Hop counts H, each run on its own: training and evaluation tasks of exactly H hops. */
  readonly hops: readonly number[];
  /** Training seeds 1..n: each draws its own training tasks, warm-up and rollouts. */
  readonly seeds: readonly number[];
  /**
   * The generator's seed: evaluation tasks are its `eval` stream (the same for every training
   * seed, so results pair by question); seed s trains on the `train` stream of `${seed}/${s}`,
   * which never holds an evaluation task.
   */
  readonly seed: number;
  /**
   * Where the evaluation tasks come from: `eval`, the generator's evaluation stream (every
   * reported run), or `train`, held-out tasks of its training stream (`${seed}`, which no seed
   * trains on): what `tools/arco-gym-budget.ts` fixes the budget on, so no setting is chosen on
   * evaluation tasks.
   */
  readonly evaluationSplit: "eval" | "train";
  readonly methods: readonly ArcoGymMethod[];
  readonly trainTasks: number;
  readonly evalTasks: number;
  readonly lookalikes: number;
  /** The warm-up: the noisy teacher's rollouts (`replicas` a task, temperature 1), imitated. */
  readonly teacher: { readonly noise: number; readonly replicas: number };
  readonly sft: { readonly epochs: number; readonly learningRate: number };
  /**
   * RL from the warm-up, the same for every method: `budget` training rollouts in updates of
   * `rolloutsPerBatch` (outcome: groups of `groupSize`), Adam at `learningRate`, no KL.
   */
  readonly rl: {
    readonly budget: number;
    readonly rolloutsPerBatch: number;
    readonly groupSize: number;
    readonly temperature: number;
    readonly learningRate: number;
  };
  /** The true-advantage control's Monte-Carlo continuations per Q and per V estimate. */
  readonly trueAdvantage: { readonly rollouts: number };
  /** Evaluation tasks (the first n) whose warm-up rollouts measure each critic's credit. */
  readonly creditProbeTasks: number;
  /**
   * The probe's Monte-Carlo continuations per Q and per V estimate, for its true advantage and for
   * the reference (the same estimate drawn again, scored as a critic: the ceiling any critic's
   * credit is read against). Most steps' advantage is near 0 (80–94 % within ±0.02 at H = 2–4),
   * so a rank correlation over them is mostly noise in the estimate: at 16 continuations (before
   * this setting) a 512-continuation estimate of the true advantage itself scored Spearman 0.48–0.64
   * against the probe; at 64 it scores 0.62–0.81 (one-off measurement at H = 2–4 on seeds 1–2's
   * warm-ups and probes; no critic was run).
   */
  readonly creditProbeRollouts: number;
  /** The learned critics' μ (methods `frozenMu` and `arco`): its shape, warm-up and co-evolution. */
  readonly mu: GymMuSettings;
  /**
   * The feature critic (`featureMu`, `featureArco`): fitted on μ's warm-up episodes (the same
   * `mu.sftTasks` × `mu.sftReplicas` teacher episodes, their outcomes only) for `epochs` passes
   * in mini-batches of 32, Adam at `learningRate`; co-evolving, one step per batch with the pull
   * `beta` to the fitted weights.
   */
  readonly feature: { readonly epochs: number; readonly learningRate: number; readonly beta: number };
}

/**
 * μ in ARCO's form, sized for a CPU: a causal transformer backbone shared by the LM head (K
 * criteria) and the score head (H→512→128→K, tanh, mean-pooled), warmed up once per hop count
 * on the noisy teacher's annotated episodes (`sftTasks` tasks × `sftReplicas`), then ARCO's
 * decomposition step with KL(μ_ref‖μ) on every batch when it co-evolves.
 */
export interface GymMuSettings extends SmallMuSettings {
  readonly k: number;
  /** Pretrained word vectors for the token embeddings (a GloVe directory), or null for random ones. */
  readonly wordVectors: string | null;
  /**
   * A pretrained llama as μ's backbone (ours: the language model's bias ARCO's μ has, in a form a
   * CPU runs): a GGUF file of F32/F16 tensors, whose shape and SentencePiece vocabulary replace
   * the small transformer's (`dModel`, `heads`, `layers`, `vocabularySize` and `wordVectors` then
   * do not apply; `maxSequence` caps its context). Absent: the small μ from scratch.
   */
  readonly backbone?: string;
  /**
   * What the score head reads (`MU_POOLINGS`): ARCO's mean over prompt + criteria (the default),
   * or, ours, the last position alone (a reward model's reading: the one position of a causal
   * backbone that has attended to the whole step, where a mean over a prompt of hundreds of
   * tokens dilutes the few that differ between a careful search and a careless one).
   */
  readonly pooling: MuPooling;
  /**
   * Where the action stands in μ's step prompt (`PROMPT_LAYOUTS`): ARCO's order (the default), or,
   * ours, the action last, so that with `pooling: "last"` the score head reads the state at the
   * action's own tokens, which in a causal backbone have attended to the names in the history.
   */
  readonly promptLayout: PromptLayout;
  readonly sftTasks: number;
  readonly sftReplicas: number;
  /**
   * Tasks of fresh teacher episodes (their own stream, `${seed}/mu-fit`) on which a warm-up μ's
   * fit to its targets is measured beside its fit on its own warm-up episodes: memorised or
   * learnt (`muWarmup[].fit`). 0: only the warm-up episodes.
   */
  readonly fitTasks: number;
  /**
   * Language-model pretraining before the warm-up (ours, not ARCO's: its μ starts from a
   * pretrained LM): the text of `pretrainTasks` tasks of their own stream (`${seed}/mu-corpus`,
   * which nothing else reads) — each question and its pool's paragraphs — for `pretrainEpochs`
   * passes of next-token CE at `pretrainLearningRate`. 0 tasks (the default): none.
   */
  readonly pretrainTasks: number;
  readonly pretrainEpochs: number;
  readonly pretrainLearningRate: number;
}

/** Where the shared GloVe subset lives, from the repository root (as `repro arco`'s data). */
export const GYM_WORD_VECTORS = "../shared/models/glove-6b-100d";

/** What a caller may set; the rest comes from the defaults. */
export interface ArcoGymConfigOptions {
  readonly quick?: boolean;
  readonly hops?: readonly number[];
  readonly seeds?: number;
  readonly seed?: number;
  readonly evaluationSplit?: "eval" | "train";
  readonly methods?: readonly ArcoGymMethod[];
  readonly trainTasks?: number;
  readonly evalTasks?: number;
  readonly budget?: number;
  readonly learningRate?: number;
  readonly trueAdvantageRollouts?: number;
  readonly creditProbeRollouts?: number;
  readonly mu?: Partial<GymMuSettings>;
}

/**
 * Defaults of a gym run. The warm-up imitates the noisy teacher (`CARELESS_NOISE`) on 32 training
 * tasks; RL then runs ARCO's rollout settings (temperature 0.7, groups of 4, 32 rollouts an
 * update) with π's learning rate of `repro arco` (0.1) for 512 rollouts (16 updates). The
 * budget was fixed by a rule on outcome-only RL alone, on training-stream tasks, before any
 * evaluation task was run: the rollouts it needs for a mean greedy success ≥ 90 % on 2-hop tasks
 * (`tools/arco-gym-budget.ts`, 5 seeds: 512), so the baseline has what it needs on the easy
 * chains. 16 seeds, because a seed's policy either has learnt the careful search by the budget
 * or has not, and the paired test over seeds needs enough of them. The quick run keeps every
 * setting but runs H = 2 and 4 with 6 seeds and 100 evaluation tasks.
 */
export function arcoGymConfig(options: ArcoGymConfigOptions = {}): ArcoGymConfig {
  const quick = options.quick ?? false;
  const count = options.seeds ?? (quick ? 6 : 16);
  const config: ArcoGymConfig = {
    quick,
    hops: options.hops ?? (quick ? [2, 4] : [2, 3, 4]),
    seeds: Array.from({ length: count }, (_, i) => i + 1),
    seed: options.seed ?? 1,
    evaluationSplit: options.evaluationSplit ?? "eval",
    methods: options.methods ?? ARCO_GYM_DEFAULT_METHODS,
    trainTasks: options.trainTasks ?? 32,
    evalTasks: options.evalTasks ?? (quick ? 100 : 200),
    lookalikes: GYM_LOOKALIKES,
    teacher: { noise: CARELESS_NOISE, replicas: 2 },
    sft: { epochs: 30, learningRate: 0.05 },
    rl: {
      budget: options.budget ?? 512,
      rolloutsPerBatch: 32,
      groupSize: 4,
      temperature: 0.7,
      learningRate: options.learningRate ?? 0.1,
    },
    trueAdvantage: { rollouts: options.trueAdvantageRollouts ?? 8 },
    creditProbeTasks: Math.min(options.evalTasks ?? Number.POSITIVE_INFINITY, quick ? 20 : 40),
    creditProbeRollouts: options.creditProbeRollouts ?? 64,
    mu: {
      k: 3,
      dModel: 64,
      heads: 4,
      layers: 2,
      // A llama backbone's vocabulary (stories260K's 512 pieces) spends 1.5 characters a token on
      // the gym's made-up names where the small μ's BPE, learned on the warm-up's steps, spends
      // 14: its prompts run to 1,070 tokens at H = 2 and 1,374 at H = 4 (measured on 64 tasks).
      maxSequence: options.mu?.backbone === undefined ? 768 : 1536,
      vocabularySize: 1024,
      maxCriteriaTokens: 96,
      wordVectors: GYM_WORD_VECTORS,
      pooling: "prompt+criteria",
      promptLayout: "arco",
      // Many tasks once each rather than few tasks many times: with 48 tasks × 4 the made-up
      // names repeat and μ memorises them (its scores tracked the teacher's on its own tasks,
      // ρ 0.55, and not on new ones, ρ 0.11); 192 × 1 gave ρ 0.26 on new tasks (one-off probes).
      sftTasks: 192,
      sftReplicas: 1,
      fitTasks: 48,
      sftEpochs: quick ? 3 : 6,
      pretrainTasks: 0,
      pretrainEpochs: 1,
      pretrainLearningRate: 3e-3,
      sftLearningRate: 3e-3,
      sftHeadLearningRate: 1e-3,
      learningRate: 1e-3,
      headLearningRate: 1e-3,
      beta: 0.05,
      ...options.mu,
    },
    // Set once, before any run, at ARCO's β and a step size that moves tanh units in tens of
    // steps; not tuned on any task.
    feature: { epochs: 50, learningRate: 0.05, beta: 0.05 },
  };
  checkConfig(config);
  return config;
}

/** Refuses a configuration the run cannot honour, naming the setting. */
function checkConfig(config: ArcoGymConfig): void {
  const { rl, trainTasks } = config;
  if (config.hops.length === 0) throw new ReproInputError("hops", "expected at least one hop count");
  for (const [i, h] of config.hops.entries())
    if (!Number.isInteger(h) || h < 1 || h > GYM_MAX_HOPS)
      throw new ReproInputError(`hops[${i}]`, `expected an integer in [1, ${GYM_MAX_HOPS}], got ${h}`);
  if (new Set(config.hops).size !== config.hops.length)
    throw new ReproInputError("hops", `lists a hop count twice: ${config.hops.join(",")}`);
  if (config.methods.length === 0) throw new ReproInputError("methods", "expected at least one method");
  for (const [i, m] of config.methods.entries())
    if (!(ARCO_GYM_METHODS as readonly string[]).includes(m))
      throw new ReproInputError(
        `methods[${i}]`,
        `unknown method ${JSON.stringify(m)}; known: ${ARCO_GYM_METHODS.join(", ")}`,
      );
  if (config.seeds.length < 1) throw new ReproInputError("seeds", "expected at least one seed");
  for (const [name, value] of [
    ["trainTasks", trainTasks],
    ["evalTasks", config.evalTasks],
    ["budget", rl.budget],
    ["trueAdvantage.rollouts", config.trueAdvantage.rollouts],
    ["creditProbeRollouts", config.creditProbeRollouts],
    ["mu.sftTasks", config.mu.sftTasks],
    ["mu.sftEpochs", config.mu.sftEpochs],
    ["mu.pretrainEpochs", config.mu.pretrainEpochs],
  ] as const)
    if (!Number.isInteger(value) || value < 1) throw new ReproInputError(name, `expected an integer ≥ 1, got ${value}`);
  for (const [name, value] of [
    ["mu.pretrainTasks", config.mu.pretrainTasks],
    ["mu.fitTasks", config.mu.fitTasks],
  ] as const)
    if (!Number.isInteger(value) || value < 0) throw new ReproInputError(name, `expected an integer ≥ 0, got ${value}`);
  if (config.mu.backbone !== undefined && config.mu.wordVectors !== null)
    throw new ReproInputError(
      "mu.wordVectors",
      "a llama backbone has its own token embeddings: leave the word vectors out (null) with mu.backbone",
    );
  if (!(MU_POOLINGS as readonly string[]).includes(config.mu.pooling))
    throw new ReproInputError(
      "mu.pooling",
      `unknown pooling ${JSON.stringify(config.mu.pooling)}; known: ${MU_POOLINGS.join(", ")}`,
    );
  if (!(PROMPT_LAYOUTS as readonly string[]).includes(config.mu.promptLayout))
    throw new ReproInputError(
      "mu.promptLayout",
      `unknown layout ${JSON.stringify(config.mu.promptLayout)}; known: ${PROMPT_LAYOUTS.join(", ")}`,
    );
  if (!(rl.learningRate > 0))
    throw new ReproInputError("learningRate", `expected a number > 0, got ${rl.learningRate}`);
  // Both methods take whole epochs: outcome RL's of trainTasks · groupSize rollouts, the dense
  // phase's of trainTasks; a budget of whole outcome epochs is whole dense ones too.
  const epoch = trainTasks * rl.groupSize;
  if (rl.budget % epoch !== 0)
    throw new ReproInputError(
      "budget",
      `expected a multiple of ${epoch} rollouts (one outcome epoch: ${trainTasks} tasks × groups of ${rl.groupSize}), got ${rl.budget}`,
    );
}
