import { beforeAll, describe, expect, it } from "vitest";
import { GDPVAL_DIR, asTask } from "../../__fixtures__/gdpval.js";
import { loadGdpval, type GdpvalDataset } from "../../gdpval/dataset.js";
import { bestOfN } from "../../gym/best-of-n.js";
import { simulatedStakeholder } from "../stakeholder/simulated-stakeholder.js";
import { simulatedWorker } from "./simulated-worker.js";

let gdpval: GdpvalDataset;
beforeAll(async () => {
  gdpval = await loadGdpval(GDPVAL_DIR);
});

describe("the simulated worker", () => {
  it("writes the same documents for the same seed", async () => {
    const task = asTask(gdpval.eval[0]!);
    const worker = simulatedWorker();
    const first = await worker.produce(task, undefined, 3, { seed: 11 });
    expect(await worker.produce(task, undefined, 3, { seed: 11 })).toEqual(first);
    expect(new Set(first.map((o) => o.text)).size).toBe(3);
    expect(first[0]!.text).toMatch(/^# /);
  });

  it("follows a rubric imperfectly but usefully: guided outputs have higher true utility", async () => {
    const worker = simulatedWorker({ follow: 0.7 });
    const tasks = gdpval.eval.slice(0, 20).map(asTask);
    let guided = 0;
    let unguided = 0;
    for (const task of tasks) {
      const utility = simulatedStakeholder(task, 5).utility;
      guided += (await bestOfN(task, { seed: 5, n: 1, worker, guide: utility })).utility;
      unguided += (await bestOfN(task, { seed: 5, n: 1, worker })).utility;
    }
    expect(guided / tasks.length).toBeGreaterThan(unguided / tasks.length + 0.1);
  });
});
