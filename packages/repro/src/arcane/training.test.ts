import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gymTask, loadGdpval } from "@rubric/autointeract";
import {
  gymPrompt,
  InProcessBackend,
  QUESTION_REPERTOIRE,
  RubricPolicy,
  sftLoss,
  teacherExamples,
  trainSftStage,
} from "@rubric/gspo";
import { afterAll, describe, expect, it } from "vitest";
import { GDPVAL, SMALL_GYM_CONFIG as config } from "./__fixtures__/gym.js";
import { readArcaneTrainingCurves } from "./training-curves.js";
import { trainArcaneManagers } from "./training.js";

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

describe("trainArcaneManagers", () => {
  it("trains Stage I exactly as @rubric/gspo's teacherExamples + trainSftStage do (so the two cannot drift apart), keeps one checkpoint per stage, and resumes from them", async () => {
    const seed = 3;
    const dir = await mkdtemp(join(tmpdir(), "arcane-experiment-"));
    dirs.push(dir);
    const managers = await trainArcaneManagers(seed, { gdpvalDir: GDPVAL, config, runDir: dir });

    // The same stage through the library's public door, as any user would write it.
    const gdpval = await loadGdpval(GDPVAL);
    const prompts = await Promise.all(
      gdpval.train.slice(0, config.trainTasks).map((e) => gymPrompt(gymTask(e.task), seed, QUESTION_REPERTOIRE)),
    );
    const backend = new InProcessBackend(new RubricPolicy({ seed }), { learningRate: config.learningRate });
    const examples = await teacherExamples(backend.policy, prompts);
    const log = await trainSftStage({
      backend,
      examples,
      epochs: config.sftEpochs,
      seed,
      learningRate: config.sftLearningRate,
    });

    const strip = <T extends { seconds: number }>(entries: readonly T[]) => entries.map(({ seconds, ...rest }) => rest);
    expect(strip(managers.log.filter((e) => e.stage === "sft"))).toEqual(strip(log));
    managers.sft.parameters.forEach((p, b) => expect(Array.from(p)).toEqual(Array.from(backend.policy.parameters[b]!)));
    expect(sftLoss(managers.sft, examples)).toBe(sftLoss(backend.policy, examples));

    // Each stage of the seed kept only its latest checkpoint, and the SFT stage no copy besides.
    expect((await readdir(join(dir, `seed-${seed}`, "sft"))).sort()).toEqual(["checkpoints", "log.jsonl"]);
    expect((await readdir(join(dir, `seed-${seed}`, "sft", "checkpoints"))).sort()).toEqual([
      "latest.json",
      "sft-00002",
    ]);
    expect((await readdir(join(dir, `seed-${seed}`, "gspo", "checkpoints"))).sort()).toEqual([
      "gspo-00001",
      "latest.json",
    ]);

    // The training curves read back from the run directory are the numbers training logged.
    expect(await readArcaneTrainingCurves(dir, [seed])).toEqual({
      seeds: [
        {
          seed,
          sft: managers.log.flatMap((e) => (e.stage === "sft" ? [{ epoch: e.epoch, loss: e.loss }] : [])),
          gspo: managers.log.flatMap((e) =>
            e.stage === "gspo" ? [{ batch: e.batch, meanReward: e.meanReward, kl: e.kl }] : [],
          ),
        },
      ],
    });
    expect(managers.log.filter((e) => e.stage === "sft")).toHaveLength(config.sftEpochs);
    expect(managers.log.filter((e) => e.stage === "gspo")).toHaveLength(config.gspoBatches);

    // Resumed after both stages finished: the SFT policy comes back from its kept checkpoint, and nothing is retrained.
    const resumed = await trainArcaneManagers(seed, { gdpvalDir: GDPVAL, config, runDir: dir, resume: true });
    resumed.sft.parameters.forEach((p, b) => expect(Array.from(p)).toEqual(Array.from(managers.sft.parameters[b]!)));
    resumed.gspo.parameters.forEach((p, b) => expect(Array.from(p)).toEqual(Array.from(managers.gspo.parameters[b]!)));
    expect(resumed.log).toEqual(managers.log);
  });
});
