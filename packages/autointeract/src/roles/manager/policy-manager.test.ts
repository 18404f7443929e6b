import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runEpisode } from "../../dialogue/episode.js";
import { loadGdpval } from "../../gdpval/dataset.js";
import { bestOfN } from "../../gym/best-of-n.js";
import { gymTask } from "../../gym/task.js";
import { simulatedStakeholder } from "../stakeholder/simulated-stakeholder.js";
import { simulatedWorker } from "../worker/simulated-worker.js";
import { ManagerPolicyFileError } from "../../dialogue/errors.js";
import { DEFAULT_POLICY, policyManager, readManagerPolicy } from "./policy-manager.js";

const GDPVAL = `${process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../../shared/", import.meta.url))}/data/gdpval`;

describe("policyManager in the gym", () => {
  it("elicits rubrics whose selection beats random at best-of-8, identically for a seed", async () => {
    const gdpval = await loadGdpval(GDPVAL);
    const elicited: number[] = [];
    const random: number[] = [];
    const transcripts: unknown[] = [];
    for (const e of gdpval.eval) {
      const task = gymTask(e.task);
      const episode = await runEpisode({
        task,
        manager: policyManager(),
        stakeholder: simulatedStakeholder(task, 99),
        questionBudget: 5,
      });
      expect(episode.error).toBeUndefined();
      transcripts.push(episode.transcript);
      elicited.push(
        (await bestOfN(task, { seed: 99, n: 8, worker: simulatedWorker(), selector: episode.rubric! })).utility,
      );
      random.push((await bestOfN(task, { seed: 99, n: 8, worker: simulatedWorker() })).utility);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(mean(elicited)).toBeGreaterThan(mean(random));
    // Same seed, same dialogues.
    const e0 = gdpval.eval[0]!;
    const task0 = gymTask(e0.task);
    const again = await runEpisode({
      task: task0,
      manager: policyManager(),
      stakeholder: simulatedStakeholder(task0, 99),
      questionBudget: 5,
    });
    expect(again.transcript).toEqual(transcripts[0]);
  });

  it("reads policy files with precise errors", () => {
    const dir = mkdtempSync(join(tmpdir(), "policy-"));
    writeFileSync(join(dir, "ok.json"), JSON.stringify({ questions: ["What matters?"] }));
    expect(readManagerPolicy(join(dir, "ok.json"))).toMatchObject({
      name: "policy",
      questions: ["What matters?"],
      maxCriteria: 14,
    });
    writeFileSync(join(dir, "bad.json"), JSON.stringify({ questions: [] }));
    expect(() => readManagerPolicy(join(dir, "bad.json"))).toThrow(/bad.json: questions: /);
    expect(() => readManagerPolicy(join(dir, "bad.json"))).toThrow(
      expect.objectContaining({ code: "dialogue.policy-file" }),
    );
    expect(() => readManagerPolicy(join(dir, "bad.json"))).toThrow(ManagerPolicyFileError);
    // A file that cannot be read is core's input-file fault, named by its own code.
    expect(() => readManagerPolicy(join(dir, "none.json"))).toThrow(
      expect.objectContaining({ code: "file.unreadable" }),
    );
    expect(DEFAULT_POLICY.questions).toHaveLength(5);
  });
});
