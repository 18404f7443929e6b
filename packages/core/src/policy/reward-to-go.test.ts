import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PolicyInputError } from "./errors.js";
import { rewardToGo } from "./reward-to-go.js";

describe("rewardToGo", () => {
  it("sums the rewards from each step on", () => {
    // [1 + 2 + 3, 2 + 3, 3]
    expect(rewardToGo([1, 2, 3])).toEqual([6, 5, 3]);
  });

  it("discounts later rewards by γ per step", () => {
    // γ = 0.5: G_2 = 4, G_1 = −2 + 0.5·4 = 0, G_0 = 1 + 0.5·0 = 1
    expect(rewardToGo([1, -2, 4], 0.5)).toEqual([1, 0, 4]);
    // γ = 0: G_t = s_t
    expect(rewardToGo([1, -2, 4], 0)).toEqual([1, -2, 4]);
  });

  it("returns an empty array for an empty episode", () => {
    expect(rewardToGo([])).toEqual([]);
  });

  it("rejects a discount outside [0, 1] and non-finite rewards", () => {
    expect(() => rewardToGo([1], 1.5)).toThrow(new PolicyInputError("gamma", "expected a number in [0, 1], got 1.5"));
    expect(() => rewardToGo([1, Number.NaN])).toThrow(
      new PolicyInputError("steps[1]", "expected a finite number, got NaN"),
    );
  });

  it("property: with γ = 1 a constant vector c of length n gives G_t = (n − t)·c", () => {
    fc.assert(
      fc.property(fc.double({ min: -100, max: 100, noNaN: true }), fc.integer({ min: 0, max: 50 }), (c, n) => {
        const returns = rewardToGo(new Array<number>(n).fill(c));
        expect(returns).toHaveLength(n);
        returns.forEach((g, t) =>
          expect(Math.abs(g - (n - t) * c)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(n * c))),
        );
      }),
    );
  });
});
