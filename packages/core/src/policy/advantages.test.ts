import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { groupAdvantages, stepAdvantages } from "./advantages.js";
import { PolicyInputError } from "./errors.js";

const close = (x: number) => expect.closeTo(x, 12);

describe("groupAdvantages", () => {
  it("standardises by the population std plus eps", () => {
    // r = [1, 2, 3, 6]: mean 3, deviations [−2, −1, 0, 3], population var (4 + 1 + 0 + 9)/4 = 3.5
    // A = d/(√3.5 + 1e-4) = d/1.870928…
    const denominator = Math.sqrt(3.5) + 1e-4;
    expect(groupAdvantages([1, 2, 3, 6])).toEqual([-2, -1, 0, 3].map((d) => close(d / denominator)));
  });

  it("uses the sample std with ddof = 1 and a custom eps", () => {
    // same r: sample var 14/3 → A = d/(√(14/3) + 0.5)
    const denominator = Math.sqrt(14 / 3) + 0.5;
    expect(groupAdvantages([1, 2, 3, 6], { ddof: 1, eps: 0.5 })).toEqual(
      [-2, -1, 0, 3].map((d) => close(d / denominator)),
    );
  });

  it("only centres with normalize: none (Dr.GRPO)", () => {
    // mean (0 + 1 + 1 + 0.5)/4 = 0.625
    expect(groupAdvantages([0, 1, 1, 0.5], { normalize: "none" })).toEqual([-0.625, 0.375, 0.375, -0.125]);
  });

  it("gives all-zero advantages to a group of identical rewards, even with eps = 0", () => {
    expect(groupAdvantages([0.1, 0.1, 0.1], { eps: 0 })).toEqual([0, 0, 0]);
    expect(groupAdvantages([7])).toEqual([0]);
    expect(groupAdvantages([0.3, 0.3], { normalize: "none" })).toEqual([0, 0]);
  });

  it("rejects bad input, naming the argument", () => {
    expect(() => groupAdvantages([])).toThrow(
      new PolicyInputError("rewards", "expected a non-empty array of rewards, got an empty array"),
    );
    expect(() => groupAdvantages([1, Number.NaN])).toThrow(
      new PolicyInputError("rewards[1]", "expected a finite number, got NaN"),
    );
    expect(() => groupAdvantages([1, 2], { eps: -1 })).toThrow(
      new PolicyInputError("eps", "expected a finite number ≥ 0, got -1"),
    );
    expect(() => groupAdvantages([1], { ddof: 1 })).toThrow(
      new PolicyInputError("ddof", "expected an integer in [0, 0], got 1"),
    );
    expect(() => groupAdvantages([1, 2], { normalize: "max" as "std" })).toThrow(PolicyInputError);
  });

  it("property: with normalize std the advantages have mean 0", () => {
    const rewards = fc.array(fc.double({ min: -1e3, max: 1e3, noNaN: true }), { minLength: 1, maxLength: 32 });
    fc.assert(
      fc.property(rewards, fc.constantFrom(0, 1), (r, ddof) => {
        fc.pre(ddof < r.length);
        const advantages = groupAdvantages(r, { ddof });
        const mean = advantages.reduce((a, b) => a + b, 0) / advantages.length;
        expect(Math.abs(mean)).toBeLessThan(1e-9);
        // and each |A| stays below √n, the largest a standardised value can be
        for (const a of advantages) expect(Math.abs(a)).toBeLessThanOrEqual(Math.sqrt(r.length) + 1e-9);
      }),
    );
  });
});

describe("stepAdvantages", () => {
  it("subtracts the position-bucket mean of the reward-to-go and scales by 0.5", () => {
    // episode 0: scores [0.5, 0.5, 1] → G = [2, 1.5, 1], buckets search_1, search_2, terminal
    // episode 1: scores [1, −1]      → G = [0, −1],     buckets search_1, terminal
    // episode 2: scores [0]          → G = [0],         bucket terminal
    // search_1 {2, 0} → 1; search_2 {1.5} singleton → batch mean (2 + 1.5 + 1 + 0 − 1 + 0)/6 = 0.583333…
    // terminal {1, −1, 0} → 0
    // A = 0.5·(G − b): [0.5, 0.5·(1.5 − 3.5/6), 0.5], [−0.5, −0.5], [0]
    const result = stepAdvantages([{ stepScores: [0.5, 0.5, 1] }, { stepScores: [1, -1] }, { stepScores: [0] }]);
    expect(result).toEqual([[0.5, close(0.5 * (1.5 - 3.5 / 6)), 0.5], [-0.5, -0.5], [0]]);
  });

  it("discounts with gamma and applies a custom scale", () => {
    // γ = 0.5: G = [1 + 0.5·2, 2] = [2, 2] and [4, 0]; search_1 {2, 4} → 3; terminal {2, 0} → 1
    // A = 1·(G − b) = [−1, 1] and [1, −1]
    expect(stepAdvantages([{ stepScores: [1, 2] }, { stepScores: [4, 0] }], { gamma: 0.5, scale: 1 })).toEqual([
      [-1, 1],
      [1, -1],
    ]);
  });

  it("takes the episodes' own bucket labels, as ARCO's code labels by action", () => {
    // episode 0: search, invalid, finish: G = [3, 2, 1]; labels search_1, terminal, terminal
    // episode 1: search, finish: G = [1, 0]; labels search_1, terminal
    // search_1 {3, 1} → 2; terminal {2, 1, 0} → 1; positions would have put 2 in search_2 (a singleton → batch mean 1.4)
    const labelled = stepAdvantages(
      [
        { stepScores: [1, 1, 1], buckets: ["search_1", "terminal", "terminal"] },
        { stepScores: [1, 0], buckets: ["search_1", "terminal"] },
      ],
      { scale: 1 },
    );
    expect(labelled).toEqual([
      [1, 1, 0],
      [-1, -1],
    ]);
    const positional = stepAdvantages([{ stepScores: [1, 1, 1] }, { stepScores: [1, 0] }], { scale: 1 });
    expect(positional[0]![1]).toBeCloseTo(2 - 7 / 5, 12);
    expect(() => stepAdvantages([{ stepScores: [1, 2], buckets: ["terminal"] }])).toThrow(
      new PolicyInputError("episodes[0].buckets", "expected 2 labels (one per step), got an array of 1"),
    );
  });

  it("rejects empty batches and episodes", () => {
    expect(() => stepAdvantages([])).toThrow(
      new PolicyInputError("episodes", "expected at least one episode, got none"),
    );
    expect(() => stepAdvantages([{ stepScores: [1] }, { stepScores: [] }])).toThrow(
      new PolicyInputError("episodes[1].stepScores", "expected a non-empty array of step scores, got an empty array"),
    );
    expect(() => stepAdvantages([{ stepScores: [1] }], { scale: -1 })).toThrow(PolicyInputError);
  });
});
