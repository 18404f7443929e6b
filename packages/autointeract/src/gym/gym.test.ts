import { compileRulePattern, createVerifierRegistry, prepareCriteria } from "@rubric/verifiers";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { GDPVAL_DIR, asTask } from "../__fixtures__/gdpval.js";
import { loadGdpval, type GdpvalDataset } from "../gdpval/dataset.js";
import { CRITERIA_BANK, briefTerms } from "./bank.js";
import { bestOfN } from "./best-of-n.js";
import { simulatedStakeholder } from "../roles/stakeholder/simulated-stakeholder.js";
import { simulatedWorker } from "../roles/worker/simulated-worker.js";

let gdpval: GdpvalDataset;
beforeAll(async () => {
  gdpval = await loadGdpval(GDPVAL_DIR);
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

  it("finds a last Next Steps section as the lookahead it replaced did (RE2 runs no lookahead)", () => {
    const { pattern } = CRITERIA_BANK.find((c) => c.id === "next-steps-last")!.verifier;
    const re2 = compileRulePattern(String(pattern), "");
    const lookahead = /## Next Steps\n(?![\s\S]*\n## )/;
    const piece = fc.constantFrom("## Next Steps\n", "\n## ", "\n##", "\n#", "## ", "#", " ", "\n", "a", "\n\n## x");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join("");
        expect(re2.count(text) > 0).toBe(lookahead.test(text));
      }),
      { seed: 20261203, numRuns: 2000 },
    );
  });

  it("draws brief terms from the prompt", () => {
    expect(briefTerms("Prepare the quarterly forecast. The forecast covers revenue and staffing revenue.", 2)).toEqual([
      "forecast",
      "revenue",
    ]);
  });
});

describe("best-of-N", () => {
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
