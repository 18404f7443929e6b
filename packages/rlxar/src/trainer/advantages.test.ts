import { describe, expect, it } from "vitest";
import type { StepKind } from "../environment/environment.js";
import type { Episode } from "../rollout/rollout.js";
import { RlxarInputError } from "../errors.js";
import { actionBuckets, denseAdvantages, sparseAdvantages } from "./advantages.js";

/** An episode of the given step kinds: what the advantage functions read of one. */
function episode(taskId: string, reward: number, kinds: readonly StepKind[], replica = 0): Episode {
  return {
    taskId,
    replica,
    task: `question ${taskId}`,
    reward,
    steps: kinds.map((kind, t) => ({
      view: { taskId, task: `question ${taskId}`, history: [], budgetLeft: 3 - t, mustFinish: false },
      decision: { text: kind === "finish" ? "Finish[x]" : "Search[y]" },
      transition: {
        action: kind === "invalid" ? undefined : { name: kind === "finish" ? "Finish" : "Search", argument: "x" },
        actionText: kind === "finish" ? "Finish[x]" : "Search[y]",
        kind,
        observation: "",
        done: t === kinds.length - 1,
        reward: t === kinds.length - 1 ? reward : 0,
        info: {},
      },
    })),
  };
}

describe("sparseAdvantages", () => {
  it("gives every step R − the mean R of its task's group, with no std", () => {
    const batch = [
      episode("q1", 1, ["tool", "finish"], 0),
      episode("q1", 0, ["finish"], 1),
      episode("q1", 0, ["tool", "tool", "finish"], 2),
      episode("q2", 1, ["finish"], 0),
      episode("q2", 1, ["tool", "finish"], 1),
    ];
    // q1: mean 1/3 → +2/3, −1/3, −1/3; q2: all equal → 0
    const result = sparseAdvantages(batch);
    expect(result[0]).toEqual([2 / 3, 2 / 3].map((x) => expect.closeTo(x, 12)));
    expect(result[1]).toEqual([expect.closeTo(-1 / 3, 12)]);
    expect(result[2]).toEqual([-1 / 3, -1 / 3, -1 / 3].map((x) => expect.closeTo(x, 12)));
    expect(result[3]).toEqual([0]);
    expect(result[4]).toEqual([0, 0]);
  });

  it("uses the rewards given instead of the episodes' own (a judge's trajectory score)", () => {
    const batch = [episode("q1", 0, ["finish"]), episode("q1", 0, ["finish"], 1)];
    expect(sparseAdvantages(batch, [0.8, 0.2]).map((row) => row[0])).toEqual([
      expect.closeTo(0.3, 12),
      expect.closeTo(-0.3, 12),
    ]);
    expect(() => sparseAdvantages(batch, [1])).toThrow(RlxarInputError);
  });

  it("gives a task alone in its group nothing to learn from", () => {
    expect(sparseAdvantages([episode("q1", 1, ["tool", "finish"])])).toEqual([[0, 0]]);
  });
});

describe("actionBuckets", () => {
  it("labels by action: the i-th search, and invalid or last steps as terminal", () => {
    expect(actionBuckets(episode("q", 0, ["tool", "invalid", "tool", "finish"]))).toEqual([
      "search_1",
      "terminal",
      "search_2",
      "terminal",
    ]);
    // a search after the forced-finish prompt ends the episode: last, so terminal
    expect(actionBuckets(episode("q", 0, ["tool", "tool", "tool", "violation"]))).toEqual([
      "search_1",
      "search_2",
      "search_3",
      "terminal",
    ]);
  });
});

describe("denseAdvantages", () => {
  it("per-step terminal buckets (ours): an immediate wrong Finish is no longer scored above the baseline (issue 30 item 1)", () => {
    const batch = [
      episode("q1", 0, ["finish"]), // a wrong Finish at step 0
      episode("q2", 1, ["tool", "finish"]), // credited search, then the right answer
      episode("q3", 0, ["tool", "finish"]), // a search, then a wrong answer
    ];
    const scores = [[0], [0.8, 0.2], [0.3, -0.3]];
    expect(actionBuckets(batch[1]!, "per-step")).toEqual(["search_1", "terminal@1"]);
    expect(actionBuckets(batch[0]!)).toEqual(["terminal"]);
    // ARCO's shared terminal bucket: G = 0, 0.2, −0.3 → mean −1/30, so the wrong Finish gains.
    const shared = denseAdvantages(batch, scores, { scale: 1 });
    expect(shared[0]![0]).toBeCloseTo(1 / 30, 12);
    // Per step: the step-0 Finish is alone in its bucket and falls back to the batch mean of G
    // (0, 1, 0.2, 0, −0.3 → 0.18), which it falls below.
    const perStep = denseAdvantages(batch, scores, { scale: 1, terminalBuckets: "per-step" });
    expect(perStep[0]![0]).toBeCloseTo(-0.18, 12);
    // The later Finishes share `terminal@1`: G 0.2 and −0.3, mean −0.05.
    expect(perStep[1]![1]).toBeCloseTo(0.25, 12);
    expect(perStep[2]![1]).toBeCloseTo(-0.25, 12);
  });

  it("γ = 0 (ours) gives each step its own score as the return: immediate step rewards", () => {
    const batch = [episode("q1", 1, ["tool", "tool", "finish"]), episode("q2", 0, ["tool", "tool", "finish"])];
    const scores = [
      [0.5, 0.25, 0.25],
      [-0.25, 0.5, -0.25],
    ];
    // Buckets search_1, search_2, terminal hold one step of each episode: A = s − the bucket's mean.
    const immediate = denseAdvantages(batch, scores, { scale: 1, gamma: 0 });
    expect(immediate[0]).toEqual([0.375, -0.125, 0.25]);
    expect(immediate[1]).toEqual([-0.375, 0.125, -0.25]);
  });

  const batch = [
    episode("a", 1, ["tool", "tool", "finish"]),
    episode("b", 0, ["tool", "invalid", "finish"]),
    episode("c", 0, ["finish"]),
  ];
  const scores = [[0.2, 0.3, 0.5], [0.1, -0.4, -0.2], [-0.3]];
  // G: a [1, 0.8, 0.5]; b [−0.5, −0.6, −0.2]; c [−0.3]
  // buckets: a search_1 search_2 terminal; b search_1 terminal terminal; c terminal
  // search_1 {1, −0.5} → 0.25; search_2 {0.8} singleton → batch mean (1 + 0.8 + 0.5 − 0.5 − 0.6 − 0.2 − 0.3)/7 = 0.1
  // terminal {0.5, −0.6, −0.2, −0.3} → −0.15
  it("is 0.5·(reward-to-go − its action bucket's mean), singletons on the batch mean", () => {
    const result = denseAdvantages(batch, scores);
    const expected = [
      [0.5 * (1 - 0.25), 0.5 * (0.8 - 0.1), 0.5 * (0.5 + 0.15)],
      [0.5 * (-0.5 - 0.25), 0.5 * (-0.6 + 0.15), 0.5 * (-0.2 + 0.15)],
      [0.5 * (-0.3 + 0.15)],
    ];
    result.forEach((row, e) => row.forEach((a, t) => expect(a).toBeCloseTo(expected[e]![t]!, 12)));
  });

  it("never reads the true reward unless asked to add it at the terminal step", () => {
    const flipped = batch.map((e) => ({ ...e, reward: 1 - e.reward }));
    expect(denseAdvantages(flipped, scores)).toEqual(denseAdvantages(batch, scores));
    // ours: + (R − mean R) at the last step only; mean R = 1/3
    const withOutcome = denseAdvantages(batch, scores, { outcomeAtTerminal: true });
    const plain = denseAdvantages(batch, scores);
    expect(withOutcome[0]![2]! - plain[0]![2]!).toBeCloseTo(2 / 3, 12);
    expect(withOutcome[1]![2]! - plain[1]![2]!).toBeCloseTo(-1 / 3, 12);
    expect(withOutcome[0]!.slice(0, 2)).toEqual(plain[0]!.slice(0, 2));
  });

  it("says which episode's scores do not match its steps", () => {
    expect(() => denseAdvantages(batch, [[0.1], [0, 0, 0], [0]])).toThrow(
      new RlxarInputError("stepScores[0]", 'expected 3 scores (one per step of task "a"), got 1'),
    );
  });
});
