import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
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
import type { FixedCriterion } from "./controls.js";
import { arcaneConfig, evalRubrics, managerRubrics, trainArcaneManagers } from "./experiment.js";

const GDPVAL = `${process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../shared/", import.meta.url))}/data/gdpval`;
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

// A few tasks, two SFT epochs and one small GSPO batch: Stage I is what is compared here.
const config = arcaneConfig({
  quick: true,
  seeds: 1,
  trainTasks: 10,
  sftEpochs: 2,
  gspoBatches: 1,
  promptsPerBatch: 2,
  groupSize: 2,
  stepsPerBatch: 1,
});

describe("arcaneConfig", () => {
  it("takes an option given as undefined (a flag not passed) as its default", () => {
    const quick = arcaneConfig({ quick: true });
    expect(
      arcaneConfig({ quick: true, gspoBatches: undefined, epsLow: undefined, epsHigh: undefined, seeds: undefined }),
    ).toEqual(quick);
    expect(quick).toMatchObject({ gspoBatches: 12, epsLow: 3e-4, epsHigh: 4e-4, seeds: [1, 2] });
    expect(arcaneConfig({ quick: true, gspoBatches: 3 }).gspoBatches).toBe(3);
    // The run's own band is not swept again.
    expect(arcaneConfig({ quick: true, epsLow: 0.2, epsHigh: 0.28 }).epsSweep).toEqual([[3e-3, 4e-3]]);
    expect(quick.epsSweep).toEqual([
      [3e-3, 4e-3],
      [0.2, 0.28],
    ]);
  });
});

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
    expect((await readdir(join(dir, `seed-${seed}`, "sft"))).sort()).toEqual(["checkpoints", "training.jsonl"]);
    expect((await readdir(join(dir, `seed-${seed}`, "sft", "checkpoints"))).sort()).toEqual([
      "latest.json",
      "sft-00001",
    ]);
    expect((await readdir(join(dir, `seed-${seed}`, "gspo", "checkpoints"))).sort()).toEqual([
      "gspo-00000",
      "latest.json",
    ]);

    // Resumed after both stages finished: the SFT policy comes back from its kept checkpoint, and nothing is retrained.
    const resumed = await trainArcaneManagers(seed, { gdpvalDir: GDPVAL, config, runDir: dir, resume: true });
    resumed.sft.parameters.forEach((p, b) => expect(Array.from(p)).toEqual(Array.from(managers.sft.parameters[b]!)));
    resumed.gspo.parameters.forEach((p, b) => expect(Array.from(p)).toEqual(Array.from(managers.gspo.parameters[b]!)));
    expect(resumed.log).toEqual(managers.log);
  });
});

describe("evalRubrics", () => {
  it("the controls that claim not to hear the stakeholder do not: their rubrics stay the same whatever the replies", async () => {
    const managers = await trainArcaneManagers(5, { gdpvalDir: GDPVAL, config });
    const gdpval = await loadGdpval(GDPVAL);
    const fixed: FixedCriterion[] = [{ kind: "brief", rank: 0 }];
    let gspoHeard = 0;
    for (const entry of gdpval.eval.slice(0, 8)) {
      const task = gymTask(entry.task);
      const heard = await gymPrompt(task, 5, QUESTION_REPERTOIRE);
      // The same task and stakeholder seed, other replies (another stakeholder's).
      const other = { ...heard, replies: (await gymPrompt(task, 77, QUESTION_REPERTOIRE)).replies };
      expect(other.replies).not.toEqual(heard.replies);
      const a = evalRubrics(managers, heard, fixed, { judgeNoise: 0.3 });
      const b = evalRubrics(managers, other, fixed, { judgeNoise: 0.3 });
      for (const row of ["gspoNoQuestions", "gspoUninformative", "fixedRubric", "oracle"] as const)
        expect(b.rows[row].guide).toEqual(a.rows[row].guide);
      expect(b.noDialogue).toEqual(a.noDialogue);
      if (JSON.stringify(a.rows.gspo.guide) !== JSON.stringify(b.rows.gspo.guide)) gspoHeard++;
      // The trained rows are the managers' own; the noisy oracle guides with the oracle and judges with noise.
      expect(a.rows.gspo.guide).toEqual(managerRubrics(managers, heard).gspo.rubric);
      expect(a.rows.oracleNoisy.guide).toEqual(a.rows.oracle.guide);
      expect(a.rows.oracleNoisy.judge?.noise).toBe(0.3);
      expect(a.rows.oracle.judge).toBeUndefined();
      expect(a.rows.fixedRubric.guide.criteria).toHaveLength(1);
    }
    // The trained manager itself does read the replies, so the invariance above is not vacuous.
    expect(gspoHeard).toBeGreaterThan(0);
  });
});
