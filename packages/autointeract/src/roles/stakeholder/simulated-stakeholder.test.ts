import { beforeAll, describe, expect, it } from "vitest";
import { GDPVAL_DIR, asTask } from "../../__fixtures__/gdpval.js";
import { loadGdpval, type GdpvalDataset } from "../../gdpval/dataset.js";
import { CRITERIA_BANK, briefCriterion, briefTerms } from "../../gym/bank.js";
import { simulatedStakeholder } from "./simulated-stakeholder.js";

let gdpval: GdpvalDataset;
beforeAll(async () => {
  gdpval = await loadGdpval(GDPVAL_DIR);
});

describe("simulated stakeholders", () => {
  it("are identical for a seed, differ across seeds, and keep 6–14 criteria with at most one per exclusive group", () => {
    const tasks = gdpval.eval.map(asTask);
    const a = tasks.map((t) => simulatedStakeholder(t, 7));
    const b = tasks.map((t) => simulatedStakeholder(t, 7));
    expect(a.map((s) => [s.persona, s.utility])).toEqual(b.map((s) => [s.persona, s.utility]));
    expect(tasks.map((t) => simulatedStakeholder(t, 8).utility)).not.toEqual(a.map((s) => s.utility));
    for (const s of a) {
      expect(s.utility.criteria.length).toBeGreaterThanOrEqual(6);
      expect(s.utility.criteria.length).toBeLessThanOrEqual(14);
      const groups = s.utility.criteria.flatMap((c) => CRITERIA_BANK.find((b) => b.id === c.id)?.group ?? []);
      expect(new Set(groups).size).toBe(groups.length);
    }
  });

  it("hold private preferences: not from the sector, not from the brief's top terms, both sides of every conflict", () => {
    const tasks = [...gdpval.train, ...gdpval.eval].map(asTask);
    const task = tasks[0]!;
    // The sector is never read: another sector, the same stakeholder.
    expect(simulatedStakeholder({ ...task, sector: "Elsewhere" }, 3).utility).toEqual(
      simulatedStakeholder(task, 3).utility,
    );
    // The brief criteria come from the six terms the worker knows, and not always the top two.
    const pool = briefTerms(task.prompt, 6).map((t) => briefCriterion(t).id);
    const briefIds = [1, 2, 3, 4, 5, 6, 7, 8].map((seed) =>
      simulatedStakeholder(task, seed)
        .utility.criteria.filter((c) => c.id.startsWith("brief-"))
        .map((c) => c.id)
        .sort()
        .join(),
    );
    for (const ids of briefIds) for (const id of ids.split(",")) expect(pool).toContain(id);
    expect(new Set(briefIds).size).toBeGreaterThan(2);
    // Over the population each side of an exclusive group is held about equally often: a rubric
    // written without asking cannot know which one a stakeholder wants.
    const held = (id: string) =>
      tasks.filter((t) => simulatedStakeholder(t, 1).utility.criteria.some((c) => c.id === id)).length;
    for (const [x, y] of [
      ["no-bullets", "bullets-5"],
      ["words-max-250", "words-min-600"],
      ["plain-language", "professional-register"],
    ] as const) {
      expect(held(x)).toBeGreaterThan(15);
      expect(Math.abs(held(x) - held(y))).toBeLessThan(0.5 * Math.max(held(x), held(y)));
    }
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

  it("reveal one criterion, the heaviest, to a broad question, and a family's criteria to a specific one", async () => {
    const stakeholders = gdpval.train.map(asTask).map((t) => simulatedStakeholder(t, 5));
    const excellent = stakeholders.filter((s) => s.persona === "excellent");
    expect(excellent.length).toBeGreaterThan(5);
    const told = (answer: string, s: (typeof stakeholders)[number]) =>
      s.utility.criteria.filter((c) => answer.includes(c.text[0]!.toLowerCase() + c.text.slice(1)));
    for (const s of excellent) {
      const broad = told(
        (await s.answer({ text: "What matters most to you in this document?" }, undefined as never)).text,
        s,
      );
      expect(broad).toHaveLength(1);
      expect(broad[0]!.weight).toBe(Math.max(...s.utility.criteria.map((c) => c.weight)));
      const format = told(
        (await s.answer({ text: "Any preferences on lists or tables?" }, undefined as never)).text,
        s,
      );
      const formatIds = s.utility.criteria
        .filter((c) => CRITERIA_BANK.find((b) => b.id === c.id)?.family === "format")
        .map((c) => c.id);
      expect(format.map((c) => c.id).sort()).toEqual(formatIds.sort());
    }
  });
});
