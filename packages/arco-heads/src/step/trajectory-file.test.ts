import { describe, expect, it } from "vitest";
import { ArcoFileError, ArcoInputError } from "../errors.js";
import { annotationOf, inferredBudget, readTrajectories, trajectoryOf } from "./trajectory-file.js";

const line = (value: unknown) => JSON.stringify(value);
const run = {
  id: "run-1",
  task: "Make the failing test pass",
  steps: [
    { action: "run_tests()", observation: "test_parse failed: expected 3, got 2" },
    { action: "edit(parse.py)", observation: "edited" },
    { action: "run_tests()", observation: "all passed" },
  ],
  outcome: 1,
};

describe("readTrajectories", () => {
  it("reads one run per line", () => {
    const records = readTrajectories(
      `${line(run)}\n${line({ ...run, id: "run-2", outcome: 0, budget: 8 })}\n`,
      "runs.jsonl",
    );
    expect(records.map((r) => [r.id, r.outcome, r.budget])).toEqual([
      ["run-1", 1, undefined],
      ["run-2", 0, 8],
    ]);
  });

  it("lists every bad line with its field: an outcome outside [0, 1], criteria without scores, a half-annotated run, a repeated id", () => {
    const text = [
      line({ ...run, outcome: 2 }),
      line({ ...run, id: "b", steps: [{ action: "a", observation: "o", criteria: ["x"] }] }),
      line({
        ...run,
        id: "c",
        steps: [
          { action: "a", observation: "o", criteria: ["x"], scores: [0.5] },
          { action: "b", observation: "o" },
        ],
      }),
      line({ ...run, id: "d", steps: [{ action: "a", observation: "o", criteria: ["x", "y"], scores: [1] }] }),
      line({ ...run, id: "ok" }),
      line({ ...run, id: "ok" }),
    ].join("\n");
    let error: unknown;
    try {
      readTrajectories(text, "runs.jsonl");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ArcoFileError);
    const message = (error as Error).message;
    expect(message).toContain("runs.jsonl");
    expect(message).toMatch(/line 1.*outcome/);
    expect(message).toMatch(/line 2.*steps\[0\]\.scores.*come together/);
    expect(message).toMatch(/line 3.*1 of 2 steps carry criteria/);
    expect(message).toMatch(/line 4.*expected one score per criterion \(2\), got 1/);
    expect(message).toMatch(/line 6.*"ok"/);
  });
});

describe("trajectoryOf", () => {
  it("counts the budget down from the run's budget, else the one given, and keeps a logged budgetLeft", () => {
    expect(trajectoryOf(run, 5).turns.map((t) => t.budgetLeft)).toEqual([5, 4, 3]);
    expect(trajectoryOf({ ...run, budget: 2 }, 5).turns.map((t) => t.budgetLeft)).toEqual([2, 1, 0]);
    const logged = { ...run, steps: run.steps.map((s, t) => ({ ...s, budgetLeft: 10 * (t + 1) })) };
    expect(trajectoryOf(logged).turns.map((t) => t.budgetLeft)).toEqual([10, 20, 30]);
  });

  it("refuses a step with no budget to count from, naming it", () => {
    expect(() => trajectoryOf(run)).toThrow(ArcoInputError);
    expect(() => trajectoryOf(run)).toThrow(/run-1\.steps\[0\]\.budgetLeft/);
  });

  it("infers the budget as the longest run's length", () => {
    expect(inferredBudget([run, { ...run, steps: run.steps.slice(0, 1) }])).toBe(3);
  });
});

describe("annotationOf", () => {
  const annotated = {
    ...run,
    steps: run.steps.map((step, t) => ({ ...step, criteria: [`c${t}a`, `c${t}b`], scores: [0.9, 0.9] })),
  };

  it("projects the teacher's scores onto the outcome (Σ_t mean_k = R) and keeps what was written", () => {
    const annotation = annotationOf(annotated, 2)!;
    const sum = annotation.steps.reduce((a, step) => a + (step.scores[0]! + step.scores[1]!) / 2, 0);
    expect(sum).toBeCloseTo(1, 9);
    expect(annotation.steps[0]!.raw).toEqual([0.9, 0.9]);
    expect(annotation.steps[2]!.criteria).toEqual(["c2a", "c2b"]);
    expect(annotationOf(run, 2)).toBeUndefined();
  });

  it("refuses criteria of another K, naming the step", () => {
    expect(() => annotationOf(annotated, 3)).toThrow(/run-1\.steps\[0\]\.criteria: expected 3 criteria/);
  });
});
