import { fileURLToPath } from "node:url";
import { createVerifierRegistry, prepareCriteria } from "@rubric/verifiers";
import { beforeAll, describe, expect, it } from "vitest";
import { loadGdpval, type GdpvalDataset } from "../gdpval/dataset.js";
import { CRITERIA_BANK, briefTerms } from "./bank.js";
import { bestOfN } from "./best-of-n.js";
import { gymTask, type GymTask, simulatedStakeholder } from "./stakeholder.js";
import { simulatedWorker } from "./worker.js";

const GDPVAL = `${process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../shared/", import.meta.url))}/data/gdpval`;
let gdpval: GdpvalDataset;
const asTask = (e: { task: { task_id: string; prompt: string; sector: string; occupation: string } }): GymTask =>
  gymTask(e.task);
beforeAll(async () => {
  gdpval = await loadGdpval(GDPVAL);
});

describe("the criteria bank", () => {
  it("holds at least 40 criteria, each with a valid rule verifier", () => {
    expect(CRITERIA_BANK.length).toBeGreaterThanOrEqual(40);
    expect(new Set(CRITERIA_BANK.map((c) => c.id)).size).toBe(CRITERIA_BANK.length);
    const rubric = {
      id: "bank",
      criteria: CRITERIA_BANK.map((c) => ({
        id: c.id,
        text: c.text,
        weight: 1,
        polarity: "reward" as const,
        verifier: c.verifier,
      })),
    };
    expect(() => prepareCriteria(rubric, createVerifierRegistry({ python: false, js: false }))).not.toThrow();
  });

  it("draws brief terms from the prompt", () => {
    expect(briefTerms("Prepare the quarterly forecast. The forecast covers revenue and staffing revenue.", 2)).toEqual([
      "forecast",
      "revenue",
    ]);
  });
});

describe("simulated stakeholders", () => {
  it("are identical for a seed, differ across seeds, and follow their sector's tendencies", () => {
    const tasks = gdpval.eval.map(asTask);
    const a = tasks.map((t) => simulatedStakeholder(t, 7));
    const b = tasks.map((t) => simulatedStakeholder(t, 7));
    expect(a.map((s) => [s.persona, s.utility])).toEqual(b.map((s) => [s.persona, s.utility]));
    expect(tasks.map((t) => simulatedStakeholder(t, 8).utility)).not.toEqual(a.map((s) => s.utility));
    for (const s of a)
      expect(s.utility.criteria.length).toBeGreaterThanOrEqual(6),
        expect(s.utility.criteria.length).toBeLessThanOrEqual(14);
    // Same sector, same favourite families.
    const bySector = new Map<string, string>();
    tasks.forEach((t, i) => {
      const key = a[i]!.sectorFamilies.join();
      expect(bySector.get(t.sector) ?? key).toBe(key);
      bySector.set(t.sector, key);
    });
  });

  it("have personas in about the stated shares over all 219 tasks", () => {
    const personas = [...gdpval.train, ...gdpval.eval].map((e) => simulatedStakeholder(asTask(e), 1).persona);
    const share = (p: string) => personas.filter((x) => x === p).length / personas.length;
    expect(share("excellent")).toBeGreaterThan(0.1);
    expect(share("excellent")).toBeLessThan(0.3);
    expect(share("average")).toBeGreaterThan(0.38);
    expect(share("average")).toBeLessThan(0.62);
    expect(share("terse")).toBeLessThan(0.2);
  });

  it("answer in natural language from their utility, by persona, the same way every time", async () => {
    const stakeholders = gdpval.train.map(asTask).map((t) => simulatedStakeholder(t, 3));
    const excellent = stakeholders.find((s) => s.persona === "excellent")!;
    const answer = (
      await excellent.answer({ text: "What should it cover and how should it be organised?" }, undefined as never)
    ).text;
    const mentioned = excellent.utility.criteria.filter((c) =>
      answer.includes(c.text[0]!.toLowerCase() + c.text.slice(1)),
    );
    expect(mentioned.length).toBeGreaterThan(0);
    expect(
      (await excellent.answer({ text: "What should it cover and how should it be organised?" }, undefined as never))
        .text,
    ).toBe(answer);
    const terse = stakeholders.find((s) => s.persona === "terse")!;
    const short = (await terse.answer({ text: "Anything that matters to you?" }, undefined as never)).text;
    expect(terse.utility.criteria.map((c) => `${c.text}.`)).toContain(short);
  });
});

describe("the simulated worker and best-of-N", () => {
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

  it("an oracle rubric beats random selection at best-of-8 on the 44 eval tasks", async () => {
    const worker = simulatedWorker();
    const oracle: number[] = [];
    const random: number[] = [];
    for (const example of gdpval.eval) {
      const task = asTask(example);
      const utility = simulatedStakeholder(task, 2026).utility;
      oracle.push((await bestOfN(task, { seed: 2026, n: 8, worker, selector: utility })).utility);
      random.push((await bestOfN(task, { seed: 2026, n: 8, worker })).utility);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(oracle).toHaveLength(44);
    expect(mean(oracle)).toBeGreaterThan(mean(random) + 0.05);
    // Selection never hurts here: on every task the oracle's pick is the best candidate.
    expect(oracle.every((u, i) => u >= random[i]! - 1e-12)).toBe(true);
  });
});
