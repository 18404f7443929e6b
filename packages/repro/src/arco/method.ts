// ARCO on HotpotQA, one method's run on one seed: μ and π from the warm-up, co-evolution, the
// final greedy evaluation and μ's diagnostics.
import { cp, readdir, rm, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { performance } from "node:perf_hooks";
import { RubricModel, stepTrace, traceJsonLines } from "@rubric/arco-heads";
import { createRng, rocAuc } from "@rubric/core";
import { RemoteMu, type SidecarClient } from "@rubric/sidecar";
import {
  bucketScores,
  contrastScores,
  type Episode,
  evidenceAuc,
  type HotpotQuestion,
  type hotpotQa,
  isTrainable,
  MuCritic,
  type Policy,
  SidecarMuModel,
  rollout,
  sampleCriteria,
  type StepContrast,
  type StepCritic,
  type StepRating,
  teacherCritic,
  type TrainerEvent,
  trainCoEvolution,
} from "@rubric/rlxar";
import { type MethodRun, writeMethodRun } from "./method-run.js";
import { type ArcoConfig, FIXED_CRITERIA, type MethodSetup } from "./config.js";
import type { WarmMu } from "./warmup.js";

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

export interface MethodContext {
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

export async function runMethod(
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
    // μ served by the sidecar (`--mu-model`) rates on the weights it trains; otherwise the ONNX
    // export in onnxruntime-node rates and each update exports and hot-reloads the next version.
    const served = config.mu.model === undefined ? undefined : await SidecarMuModel.open(client, start);
    const remote = served?.mu ?? (await RemoteMu.load(client, start));
    if (served === undefined) model = await RubricModel.load(root, { threads: 1 });
    mu = await MuCritic.open({
      model: served ?? model!,
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
