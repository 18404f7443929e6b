import { describe, expect, it } from "vitest";
import type { StepKind } from "../environment/environment.js";
import type { Episode } from "../rollout/rollout.js";
import { RlxarInputError } from "../errors.js";
import type { StepRating } from "../critic/step-critic.js";
import { bucketScores, evidenceAuc, sampleCriteria } from "./step-scores.js";

function episode(taskId: string, steps: readonly [StepKind, boolean?][]): Episode {
  return {
    taskId,
    replica: 0,
    task: "q",
    reward: 0,
    steps: steps.map(([kind, supporting], t) => ({
      view: { taskId, task: "q", history: [], budgetLeft: 3 - t, mustFinish: false },
      decision: { text: `a${t}` },
      transition: {
        action: undefined,
        actionText: `${kind}:${t}`,
        kind,
        observation: "",
        done: t === steps.length - 1,
        reward: 0,
        info: supporting === undefined ? {} : { supporting },
      },
    })),
  };
}
const rating = (s: number, criteria = ["c1", "c2", "c3"]): StepRating => ({ criteria, scores: [s, s, s], s });

const episodes = [
  episode("a", [["tool", true], ["tool", false], ["finish"]]),
  episode("b", [["tool", false], ["invalid"], ["finish"]]),
  episode("c", [["tool", true], ["finish"]]),
];
const ratings = [
  [rating(0.8), rating(-0.2), rating(0.5)],
  [rating(0.1), rating(-0.9), rating(-0.4)],
  [rating(0.6), rating(0.3)],
];

describe("evidenceAuc", () => {
  it("is the AUC of s over searches labelled by whether they found a supporting paragraph", () => {
    // positives 0.8, 0.6; negatives −0.2, 0.1: every positive outscores every negative
    expect(evidenceAuc(episodes, ratings)).toEqual({
      auc: 1,
      positives: 2,
      negatives: 2,
      meanPositive: expect.closeTo(0.7, 12),
      meanNegative: expect.closeTo(-0.05, 12),
    });
    const flipped = ratings.map((row) => row.map((r) => rating(-r.s)));
    expect(evidenceAuc(episodes, flipped).auc).toBe(0);
  });

  it("leaves the AUC out when one class is missing, and checks alignment", () => {
    const onlyGood = [episodes[2]!];
    expect(evidenceAuc(onlyGood, [ratings[2]!])).toEqual({ positives: 1, negatives: 0, meanPositive: 0.6 });
    expect(() => evidenceAuc(episodes, ratings.slice(1))).toThrow(RlxarInputError);
  });
});

describe("bucketScores", () => {
  it("groups s by ARCO's action buckets", () => {
    const result = bucketScores(episodes, ratings);
    expect(Object.keys(result)).toEqual(["search_1", "search_2", "terminal"]);
    // search_1: 0.8, 0.1, 0.6; search_2: −0.2; terminal: 0.5, −0.9 (the invalid step), −0.4, 0.3
    expect(result.search_1!.count).toBe(3);
    expect(result.search_1!.mean).toBeCloseTo(0.5, 12);
    expect(result.search_1!.median).toBeCloseTo(0.6, 12);
    expect(result.search_2).toMatchObject({ count: 1, mean: -0.2 });
    expect(result.terminal!.count).toBe(4);
    expect(result.terminal!.mean).toBeCloseTo(-0.125, 12);
  });
});

describe("sampleCriteria", () => {
  it("draws up to n steps per bucket, reproducibly", () => {
    const samples = sampleCriteria(episodes, ratings, 2, 7);
    expect(samples.map((s) => s.bucket)).toEqual(["search_1", "search_1", "search_2", "terminal", "terminal"]);
    expect(sampleCriteria(episodes, ratings, 2, 7)).toEqual(samples);
    const terminal = samples.filter((s) => s.bucket === "terminal");
    for (const sample of terminal) expect(["finish:2", "invalid:1", "finish:1"]).toContain(sample.action);
  });
});
