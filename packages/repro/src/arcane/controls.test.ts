import { briefTerms, CRITERIA_BANK, gymTask, loadGdpval, simulatedWorker } from "@rubric/autointeract";
import { type GymPrompt, gymPrompt, QUESTION_REPERTOIRE } from "@rubric/gspo";
import { beforeAll, describe, expect, it } from "vitest";
import {
  bestOfNReturn,
  chooseFixedRubric,
  describeFixedCriterion,
  type FixedCriterion,
  fixedRubric,
  UNINFORMATIVE_REPLY,
  uninformativePrompt,
} from "./controls.js";
import { GDPVAL } from "./__fixtures__/gym.js";

let prompts: GymPrompt[];
const worker = simulatedWorker();

beforeAll(async () => {
  const gdpval = await loadGdpval(GDPVAL);
  prompts = await Promise.all(gdpval.train.slice(-5).map((e) => gymPrompt(gymTask(e.task), 2, QUESTION_REPERTOIRE)));
});

const bank = (id: string): FixedCriterion => ({ kind: "bank", criterion: CRITERIA_BANK.find((c) => c.id === id)! });

describe("the controls' rubrics", () => {
  it("an uninformative prompt keeps the task and the number of replies, and says nothing", () => {
    const quiet = uninformativePrompt(prompts[0]!);
    expect(quiet.task).toBe(prompts[0]!.task);
    expect(quiet.replies).toEqual(prompts[0]!.replies.map(() => UNINFORMATIVE_REPLY));
    expect(prompts[0]!.replies.some((r) => r !== UNINFORMATIVE_REPLY)).toBe(true);
  });

  it("a fixed rubric spells bank criteria and the task's own top brief terms, every weight 1", () => {
    const choice: FixedCriterion[] = [bank("no-bullets"), { kind: "brief", rank: 1 }, { kind: "brief", rank: 0 }];
    for (const prompt of prompts) {
      const rubric = fixedRubric(choice, prompt);
      const [first, second] = briefTerms(prompt.task.prompt, 2);
      expect(rubric.criteria.map((c) => c.text)).toEqual([
        "Is written in prose, without bullet lists",
        `Addresses "${second}" from the brief`,
        `Addresses "${first}" from the brief`,
      ]);
      expect(rubric.criteria.every((c) => c.weight === 1)).toBe(true);
    }
    expect(choice.map(describeFixedCriterion)).toEqual([
      "Is written in prose, without bullet lists",
      "Addresses the brief's second most frequent term",
      "Addresses the brief's most frequent term",
    ]);
  });
});

describe("chooseFixedRubric", () => {
  it("adds, step by step, the criterion that raises the training return most, one per exclusive group, until none helps", async () => {
    const steps: number[] = [];
    const choice = await chooseFixedRubric(prompts, worker, {
      n: 4,
      seed: 3,
      maxCriteria: 3,
      onStep: (done) => steps.push(done),
    });
    expect(choice.criteria.length).toBeGreaterThan(0);
    expect(choice.trainReturns).toHaveLength(choice.criteria.length);
    for (let i = 1; i < choice.trainReturns.length; i++)
      expect(choice.trainReturns[i]!).toBeGreaterThan(choice.trainReturns[i - 1]!);
    const groups = choice.criteria.flatMap((c) => (c.kind === "bank" && c.criterion.group ? [c.criterion.group] : []));
    expect(new Set(groups).size).toBe(groups.length);
    expect(steps.at(-1)).toBe(3);

    // The first pick is the best single criterion, measured the same way on the same outputs.
    const seed = choice.outputSeed;
    const single = async (c: FixedCriterion) => bestOfNReturn(prompts, (p) => fixedRubric([c], p), worker, 4, seed);
    const candidates: FixedCriterion[] = [
      ...CRITERIA_BANK.map((criterion) => ({ kind: "bank" as const, criterion })),
      { kind: "brief", rank: 0 },
      { kind: "brief", rank: 1 },
    ];
    const values = await Promise.all(candidates.map(single));
    expect(choice.trainReturns[0]).toBe(Math.max(...values));
    expect(await single(choice.criteria[0]!)).toBe(Math.max(...values));
    // And the whole rubric's return is the last step's.
    expect(await bestOfNReturn(prompts, (p) => fixedRubric(choice.criteria, p), worker, 4, seed)).toBe(
      choice.trainReturns.at(-1),
    );
  }, 120_000);
});
