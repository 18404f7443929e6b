import { describe, expect, it } from "vitest";
import { ArcoFileError, ArcoInputError } from "../errors.js";
import { stepPrompt } from "../step/prompt.js";
import { stepsOf, type Trajectory } from "../step/step.js";
import type { TrajectoryAnnotation } from "./annotator.js";
import { muSftExamples, muSftJsonLines, readMuSftExamples } from "./sft.js";
import { museumTrajectory } from "../__fixtures__/museum-trajectory.js";

const trajectory = museumTrajectory;

const annotated = (scores: number[][], criteria?: string[][]): TrajectoryAnnotation => ({
  trajectory: "q7",
  outcome: 1,
  shift: 0,
  steps: scores.map((row, t) => ({ criteria: criteria?.[t] ?? ["a", "b"], raw: row, scores: row })),
});

// Means 0.5 + 0.25 + 0.25 = R = 1.
const decomposing = annotated([
  [0.5, 0.5],
  [0.25, 0.25],
  [0.25, 0.25],
]);

describe("muSftExamples", () => {
  it("writes one example per step: the RL step prompt, the criteria target and the scores", () => {
    const { examples, skipped } = muSftExamples(trajectory, decomposing);
    expect(skipped).toBeUndefined();
    expect(examples.map((e) => e.id)).toEqual(["q7#0", "q7#1", "q7#2"]);
    expect(examples[1]).toEqual({
      id: "q7#1",
      trajectory: "q7",
      step: 1,
      messages: stepPrompt(stepsOf(trajectory)[1]!, { k: 2 }),
      target: '{"criteria":["a","b"]}',
      criteria: ["a", "b"],
      scores: [0.25, 0.25],
      outcome: 1,
    });
  });

  it("skips what ARCO skips: a single step, scores that do not decompose R, steps without criteria", () => {
    const one: Trajectory = { ...trajectory, turns: trajectory.turns.slice(0, 1) };
    expect(muSftExamples(one, annotated([[1, 1]]))).toEqual({ examples: [], skipped: "single-step" });
    expect(
      muSftExamples(
        trajectory,
        annotated([
          [0.5, 0.5],
          [0.5, 0.5],
          [0.5, 0.5],
        ]),
      ),
    ).toEqual({
      examples: [],
      skipped: "decomposition",
    });
    const { examples } = muSftExamples(
      trajectory,
      annotated(
        [
          [0.5, 0.5],
          [0.25, 0.25],
          [0.25, 0.25],
        ],
        [
          ["a", "b"],
          ["", " "],
          ["c", "d"],
        ],
      ),
    );
    expect(examples.map((e) => e.step)).toEqual([0, 2]);
  });

  it("refuses an annotation of another trajectory or of another length by name", () => {
    expect(() => muSftExamples(trajectory, { ...annotated([[1, 1]]), trajectory: "q8" })).toThrow(
      /annotation.trajectory: expected "q7", got "q8"/,
    );
    expect(() => muSftExamples(trajectory, annotated([[1, 1]]))).toThrow(ArcoInputError);
  });
});

describe("μ-SFT JSON lines", () => {
  it("round-trip, and a bad line is named with its number and field", () => {
    const { examples } = muSftExamples(trajectory, decomposing);
    const text = muSftJsonLines(examples);
    expect(text.split("\n")).toHaveLength(4);
    expect(readMuSftExamples(text, "mu-sft.jsonl")).toEqual(examples);

    const broken = text.replace('"scores":[0.25,0.25]', '"scores":[1.25,0.25]');
    const error = (() => {
      try {
        readMuSftExamples(broken + text.split("\n")[0]!, "mu-sft.jsonl");
      } catch (e) {
        return e;
      }
    })() as ArcoFileError;
    expect(error).toBeInstanceOf(ArcoFileError);
    expect(error.problems).toEqual([
      expect.stringMatching(/^line 2: scores\[0\]: /),
      'line 4: id: duplicate id "q7#0" (first on line 1)',
    ]);
    expect(error.message).toMatch(/^mu-sft.jsonl: 2 problems:/);
  });

  it("the writer refuses an example its reader would refuse", () => {
    const { examples } = muSftExamples(trajectory, decomposing);
    expect(() => muSftJsonLines([{ ...examples[0]!, scores: [2, 0] }])).toThrow();
  });
});
