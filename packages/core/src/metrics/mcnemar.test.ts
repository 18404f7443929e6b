import { describe, expect, it } from "vitest";
import { StatisticsInputError } from "./errors.js";
import { mcnemarExact } from "./mcnemar.js";

describe("mcnemarExact", () => {
  it("counts discordant pairs and gives the two-sided binomial p-value", () => {
    // b = 4, c = 1: 2·P(X ≤ 1), X ~ Bin(5, ½) = 2·(1 + 5)/32 = 0.375.
    const result = mcnemarExact([1, 1, 1, 0, 1, 1, 0, 1], [0, 0, 1, 0, 0, 0, 1, 1]);
    expect(result).toMatchObject({ b: 4, c: 1 });
    expect(result.pValue).toBeCloseTo(0.375, 12);
    // Symmetric in which side wins.
    expect(mcnemarExact([0, 0, 1, 0, 0, 0, 1, 1], [1, 1, 1, 0, 1, 1, 0, 1]).pValue).toBeCloseTo(0.375, 12);
    // b = c: p = 1 (capped); b = 10, c = 0: 2 / 1024.
    expect(mcnemarExact([1, 0], [0, 1]).pValue).toBe(1);
    expect(mcnemarExact(Array(10).fill(1), Array(10).fill(0)).pValue).toBeCloseTo(2 / 1024, 15);
  });

  it("matches the exact binomial tail on a large table", () => {
    // 2·Σ_{k≤35} C(95, k) / 2^95 = 0.0133787030 (exact integers in Python: math.comb).
    const first = [...Array(60).fill(1), ...Array(35).fill(0), ...Array(300).fill(1)];
    const second = [...Array(60).fill(0), ...Array(35).fill(1), ...Array(300).fill(1)];
    const result = mcnemarExact(first, second);
    expect(result).toMatchObject({ b: 60, c: 35 });
    expect(result.pValue).toBeCloseTo(0.013378703026, 10);
  });

  it("is 1 when no pair differs, and refuses unpaired or non-binary outcomes", () => {
    expect(mcnemarExact([1, 0, 1], [1, 0, 1])).toEqual({ b: 0, c: 0, pValue: 1 });
    expect(() => mcnemarExact([1, 0], [1])).toThrow(StatisticsInputError);
    expect(() => mcnemarExact([0.5], [1])).toThrow(/index 0/);
  });
});
