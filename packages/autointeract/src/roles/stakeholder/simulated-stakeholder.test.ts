import { beforeAll, describe, expect, it } from "vitest";
import { GDPVAL_DIR, asTask } from "../../__fixtures__/gdpval.js";
import { loadGdpval, type GdpvalDataset } from "../../gdpval/dataset.js";
import { simulatedStakeholder } from "./simulated-stakeholder.js";

let gdpval: GdpvalDataset;
beforeAll(async () => {
  gdpval = await loadGdpval(GDPVAL_DIR);
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
