import { describe, expect, it } from "vitest";
import { ARCANE_LLM_METHODS, pairedMeans, type ArcaneLlmMethod } from "./table.js";

const task = (values: Partial<Record<ArcaneLlmMethod, (number | null)[]>>) => ({
  returns: Object.fromEntries(ARCANE_LLM_METHODS.map((m) => [m, values[m] ?? [0.5, 0.5]])) as Record<
    ArcaneLlmMethod,
    (number | null)[]
  >,
});

describe("pairedMeans", () => {
  it("averages every method over the tasks where all of them have a return at that N", () => {
    const tasks = [
      // GSPO could not be scored at N=1 here: the task leaves every method's N=1 mean, not just GSPO's.
      task({ noRubric: [0, 0], manager: [0, 0], sft: [0, 0], gspo: [null, 0], oracle: [0, 0] }),
      task({ noRubric: [0.4, 0.5], manager: [0.5, 0.6], sft: [0.4, 0.4], gspo: [0.6, 0.7], oracle: [0.8, 0.9] }),
    ];
    const { meanReturn, pairedTasks } = pairedMeans(tasks, [1, 8], ARCANE_LLM_METHODS);
    expect(pairedTasks).toEqual({ n1: 1, n8: 2 });
    expect(meanReturn.gspo).toEqual({ n1: 0.6, n8: 0.35 });
    expect(meanReturn.noRubric).toEqual({ n1: 0.4, n8: 0.25 });
    expect(meanReturn.oracle.n8).toBeCloseTo(0.45, 12);
  });

  it("leaves methods that did not run out of the pairing and null in the table", () => {
    const tasks = [task({ sft: [null, null], gspo: [null, null], noRubric: [0.2, 0.3] })];
    const { meanReturn, pairedTasks } = pairedMeans(tasks, [1, 8], ["noRubric", "manager", "oracle"]);
    expect(pairedTasks).toEqual({ n1: 1, n8: 1 });
    expect(meanReturn.sft).toEqual({ n1: null, n8: null });
    expect(meanReturn.noRubric).toEqual({ n1: 0.2, n8: 0.3 });
  });

  it("has no mean at an N the run did not evaluate, or when no task is paired", () => {
    const { meanReturn, pairedTasks } = pairedMeans([task({ manager: [null, null] })], [1, 2], ARCANE_LLM_METHODS);
    expect(pairedTasks).toEqual({ n1: 0, n8: 0 });
    expect(meanReturn.oracle).toEqual({ n1: null, n8: null });
  });
});
