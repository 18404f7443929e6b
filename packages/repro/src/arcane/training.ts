import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { mean } from "@rubric/core";
import { gymTask, loadGdpval, simulatedWorker } from "@rubric/autointeract";
import {
  gymPrompt,
  gymReward,
  InProcessBackend,
  QUESTION_REPERTOIRE,
  RubricPolicy,
  teacherExamples,
  trainGspo,
  trainSftStage,
  type GymPrompt,
  type TrainingLogEntry,
} from "@rubric/gspo";
import type { ArcaneConfig, ArcaneProgress, ArcaneRunOptions } from "./config.js";

/** A manager trained under another clipping band, and the mean share of its sequences clipped at a batch's last step. */
export interface EpsSweepPolicy {
  readonly epsLow: number;
  readonly epsHigh: number;
  readonly policy: RubricPolicy;
  readonly clippedFraction: number;
}

/** The two managers of one seed, trained in the gym, and how training went. */
export interface TrainedManagers {
  readonly seed: number;
  readonly config: ArcaneConfig;
  /** After Stage I (SFT on the teacher's sequences). */
  readonly sft: RubricPolicy;
  /** After Stage II (GSPO, or the configured objective, from the SFT policy). */
  readonly gspo: RubricPolicy;
  /** Stage II again from the SFT policy under each band of `config.epsSweep`. */
  readonly epsSweep: readonly EpsSweepPolicy[];
  /** A control: Stage I on the stakeholders' own utilities (after the teacher's questions) instead of the teacher's reconstructions. */
  readonly sftOracle: RubricPolicy;
  readonly log: readonly TrainingLogEntry[];
  readonly trainingSeconds: number;
  /** Worker and verifier time spent inside GSPO rewards. */
  readonly rewardMs: { readonly worker: number; readonly verifiers: number };
}

/**
 * Stage I then Stage II of one seed on the gym's training tasks (ARCHITECTURE §4): SFT on the
 * teacher's reconstructions, then GSPO on the stakeholder's true utility with k3 KL to the SFT
 * policy. With a `runDir`, the seed's log and checkpoints go to `<runDir>/seed-<n>/` and
 * `resume` continues from them.
 */
export async function trainArcaneManagers(
  seed: number,
  options: Omit<ArcaneRunOptions, "onProgress"> & {
    readonly gdpval?: Awaited<ReturnType<typeof loadGdpval>>;
    readonly onProgress?: (event: ArcaneProgress) => void;
  },
): Promise<TrainedManagers> {
  const { config } = options;
  const gdpval = options.gdpval ?? (await loadGdpval(options.gdpvalDir));
  options.onProgress?.({ phase: "prepare", seed });
  const train = await Promise.all(
    gdpval.train.slice(0, config.trainTasks).map((e) => gymPrompt(gymTask(e.task), seed, QUESTION_REPERTOIRE)),
  );
  const worker = simulatedWorker();
  const seedDir = options.runDir === undefined ? undefined : join(options.runDir, `seed-${seed}`);
  const run = (stage: string) =>
    seedDir === undefined
      ? undefined
      : {
          dir: join(seedDir, stage),
          resume: options.resume ?? false,
          keepCheckpoints: options.keepCheckpoints ?? ("latest" as const),
        };
  const started = performance.now();

  // Stage I: SFT on the teacher's sequences. Resuming a finished stage loads its last checkpoint
  // and trains nothing, so the SFT policy needs no copy of its own on disk.
  const backend = new InProcessBackend(new RubricPolicy({ seed }), { learningRate: config.learningRate });
  const sftRun = run("sft");
  const log: TrainingLogEntry[] = await trainSftStage({
    backend,
    examples: await teacherExamples(backend.policy, train),
    epochs: config.sftEpochs,
    seed,
    learningRate: config.sftLearningRate,
    run: sftRun,
    onLog: (entry) =>
      options.onProgress?.({
        phase: "sft",
        seed,
        done: (entry.stage === "sft" ? entry.epoch : 0) + 1,
        total: config.sftEpochs,
        entry,
      }),
    signal: options.signal,
  });
  const sftPolicy = backend.policy.clone();

  // The control "SFT on oracle rubrics": the same Stage I from the same initialisation, on U*.
  const oracleBackend = new InProcessBackend(new RubricPolicy({ seed }), { learningRate: config.learningRate });
  await trainSftStage({
    backend: oracleBackend,
    examples: await teacherExamples(oracleBackend.policy, train, { reference: "utility" }),
    epochs: config.sftEpochs,
    seed,
    learningRate: config.sftLearningRate,
    run: run("sft-oracle"),
    onLog: (entry) =>
      options.onProgress?.({
        phase: "sft-oracle",
        seed,
        done: (entry.stage === "sft" ? entry.epoch : 0) + 1,
        total: config.sftEpochs,
        entry,
      }),
    signal: options.signal,
  });

  // Stage II: GSPO from the SFT policy, with k3 KL to it.
  const timings = { worker: 0, verifiers: 0 };
  const stageTwo = async (
    on: InProcessBackend<GymPrompt, RubricPolicy>,
    band: { epsLow: number; epsHigh: number },
    stage: string,
    phase: "gspo" | "eps-sweep",
    spent: { worker: number; verifiers: number },
  ) => {
    await on.setReference();
    await on.resetOptimizer();
    return trainGspo({
      backend: on,
      prompts: train,
      reward: gymReward({
        policy: on.policy,
        worker,
        clarifyCostPerToken: config.clarifyCostPerToken,
        computeCostPerToken: config.computeCostPerToken,
        timings: spent,
      }),
      seed,
      batches: config.gspoBatches,
      promptsPerBatch: config.promptsPerBatch,
      groupSize: config.groupSize,
      stepsPerBatch: config.stepsPerBatch,
      objective: config.objective,
      ...band,
      learningRate: config.learningRate,
      klCoef: config.klCoef,
      run: run(stage),
      onLog: (entry) =>
        options.onProgress?.({
          phase,
          seed,
          done: (entry.stage === "gspo" ? entry.batch : 0) + 1,
          total: config.gspoBatches,
          entry,
        }),
      signal: options.signal,
    });
  };
  const gspoLog = await stageTwo(backend, { epsLow: config.epsLow, epsHigh: config.epsHigh }, "gspo", "gspo", timings);
  // The clipping band's sensitivity: the same Stage II from the same SFT policy under other bands.
  const epsSweep: EpsSweepPolicy[] = [];
  for (const [epsLow, epsHigh] of config.epsSweep) {
    const other = new InProcessBackend(sftPolicy.clone(), { learningRate: config.learningRate });
    // Its reward time stays out of `timings`, which the table sets against the main run's rollouts.
    const sweepLog = await stageTwo(other, { epsLow, epsHigh }, `gspo-eps-${epsLow}-${epsHigh}`, "eps-sweep", {
      worker: 0,
      verifiers: 0,
    });
    epsSweep.push({
      epsLow,
      epsHigh,
      policy: other.policy,
      clippedFraction: mean(sweepLog.map((e) => e.clippedFraction)),
    });
  }
  log.push(...gspoLog);
  return {
    seed,
    config,
    sft: sftPolicy,
    gspo: backend.policy,
    sftOracle: oracleBackend.policy,
    epsSweep,
    log,
    trainingSeconds: (performance.now() - started) / 1000,
    rewardMs: timings,
  };
}
