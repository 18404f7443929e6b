import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createRng, type LanguageModel, shuffle } from "@rubric/core";
import type { SidecarClient } from "@rubric/sidecar";
import {
  goldTeacher,
  type HotpotQuestion,
  hotpotQa,
  isTrainable,
  loadHotpotQa,
  type Policy,
  rollout,
  selectHotpotQuestions,
  teacherAnnotation,
  type TrainerEvent,
  warmupData,
} from "@rubric/rlxar";
import { checkArcoConfig, checkArcoSidecar, type MethodRun, readMethodRun } from "./method-run.js";
import type { ArcoMethod, ArcoTable } from "./table.js";
import { type ArcoConfig, SELECTION_SEEDS, SETUPS, splitTrainingQuestions } from "./config.js";
import { runMethod } from "./method.js";
import { arcoPolicyMaker } from "./policy.js";
import { rowsOf, tableOf, writeArcoOutputs } from "./summary.js";
import { sidecarRecord } from "../sidecar/record.js";
import { sftPolicy, type WarmMu, type WarmMuKind, warmUpMu } from "./warmup.js";

/** A line of progress, for the CLI. */
export type ArcoProgress =
  | { readonly type: "stage"; readonly seed: number; readonly stage: string }
  | { readonly type: "trainer"; readonly seed: number; readonly method: string; readonly event: TrainerEvent };

export interface ArcoRunOptions {
  readonly out: string;
  /** The sidecar (torch) that trains μ. */
  readonly client: SidecarClient;
  /**
   * π for a seed, for a π the configuration cannot build (an LLM provider's, `config.policy.kind`
   * "llm"); otherwise built from `config.policy`. A policy that is not trainable is rolled out only.
   */
  readonly policy?: (seed: number) => Policy | Promise<Policy>;
  /**
   * For a served π (`config.policy.kind` "served"): the server's completions under an adapter
   * name. The adapters the run publishes are written under `<out>/pi-adapters/`.
   */
  readonly modelFor?: (adapter: string) => LanguageModel;
  readonly onProgress?: (progress: ArcoProgress) => void;
  /**
   * Continue the run in `out` (the same configuration, refused otherwise): a method that finished
   * is kept as it was, one that was stopped goes on from its latest checkpoint (π and μ), and one
   * that never started starts.
   */
  readonly resume?: boolean;
}

/**
 * A run's questions: the training file's 400 (or a seeded sample), and the evaluation questions
 * with the file they come from: `evalPath`'s, or with `evalSplit: "tune"` the training file's 69
 * held-out questions, which nothing trains on (each a seeded sample where the config says).
 */
export function arcoQuestions(config: ArcoConfig): {
  readonly train: HotpotQuestion[];
  readonly evaluation: HotpotQuestion[];
  readonly evalPath: string;
} {
  const { train: pool, tune } = splitTrainingQuestions(loadHotpotQa(config.trainPath));
  const train =
    config.trainQuestions === undefined
      ? pool
      : selectHotpotQuestions(pool, { sample: { size: config.trainQuestions, seed: SELECTION_SEEDS.train } });
  const sample =
    config.evalQuestions === undefined ? {} : { sample: { size: config.evalQuestions, seed: SELECTION_SEEDS.eval } };
  if (config.evalSplit === "tune")
    return { train, evaluation: selectHotpotQuestions(tune, sample), evalPath: config.trainPath };
  return { train, evaluation: loadHotpotQa(config.evalPath, sample), evalPath: config.evalPath };
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
  const { train, evaluation, evalPath } = arcoQuestions(config);
  await mkdir(options.out, { recursive: true });
  await checkArcoConfig(options.out, config, options.resume === true);
  // Recorded, since μ's weights depend on torch's thread count (its sums' order): a resume must
  // train on as many threads as the run began on.
  const sidecar = await sidecarRecord(options.client);
  await checkArcoSidecar(options.out, sidecar, options.resume === true);
  await writeFile(join(options.out, "eval-questions.jsonl"), rowsOf(evalPath, evaluation));
  const diagnosed =
    config.diagnosticQuestions === undefined || config.diagnosticQuestions >= evaluation.length
      ? evaluation
      : shuffle(evaluation, createRng("arco/diagnostics")).slice(0, config.diagnosticQuestions);
  const environment = hotpotQa({ indexTitles: config.indexTitles });
  const makePolicy =
    options.policy ??
    arcoPolicyMaker(config.policy, {
      client: options.client,
      environment,
      train,
      ...(options.modelFor === undefined
        ? {}
        : { served: { modelFor: options.modelFor, adapterRoot: join(options.out, "pi-adapters") } }),
    });
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
      const base = await makePolicy(seed);
      const piDir = join(seedDir, "pi-sft");
      const piSft = isTrainable(base) ? await sftPolicy(base, warm.policy, config, seed, piDir) : undefined;
      // Every method loads this checkpoint into a policy of its own: a served one frees its adapter.
      await base.close?.();
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
        const policy = await makePolicy(seed);
        const run = await runMethod(plan.name, setup, warmMu, {
          config,
          seed,
          environment,
          train,
          evaluation,
          diagnosed,
          policy,
          piDir: isTrainable(base) ? piDir : undefined,
          client: options.client,
          dir,
          resume: options.resume === true,
          promptOptions,
          onEvent: (event) => options.onProgress?.({ type: "trainer", seed, method: plan.name, event }),
        }).finally(() => policy.close?.());
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
        tableOf(config, runs, warmups, performance.now() - started, train.length, evaluation, sidecar),
      );
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  const table = tableOf(config, runs, warmups, performance.now() - started, train.length, evaluation, sidecar);
  await writeArcoOutputs(options.out, table);
  return table;
}
