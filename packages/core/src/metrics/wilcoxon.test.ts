import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { StatisticsInputError } from "./errors.js";
import { wilcoxonSignedRank } from "./wilcoxon.js";

// The same formulas in the Python that produced the references, so the doubles agree.
const W60x = Array.from({ length: 60 }, (_, i) => ((37 * i) % 101) / 4);
const W60y = Array.from({ length: 60 }, (_, i) => ((53 * i) % 97) / 4); // one zero difference, tied |d|
const E50x = Array.from({ length: 50 }, (_, k) => k + 1 + 0.001 * (k + 1) * (k + 1));
const E50y = Array.from({ length: 50 }, (_, k) => ((37 * (k + 1)) % 50) + 0.5); // 50 distinct, non-zero |d|

describe("wilcoxonSignedRank", () => {
  const cases: {
    label: string;
    x: number[];
    y: number[];
    statistic: number;
    p: number;
    method: "exact" | "approx";
    n: number;
  }[] = [
    // scipy 1.10.1: scipy.stats.wilcoxon([1.83,0.50,1.62,2.48,1.68,1.88,1.55,3.06,1.30],[0.878,0.647,0.598,2.05,1.06,1.29,1.06,3.14,1.29]) -> WilcoxonResult(statistic=5.0, pvalue=0.0390625)
    {
      label: "exact, no ties, no zeros",
      x: [1.83, 0.5, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.3],
      y: [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29],
      statistic: 5,
      p: 0.0390625,
      method: "exact",
      n: 9,
    },
    // scipy 1.10.1: scipy.stats.wilcoxon([125,115,130,140,140,115,140,125,140,135],[110,122,125,120,140,124,123,137,135,145]) -> WilcoxonResult(statistic=18.0, pvalue=0.5936305914425295)
    {
      label: "a zero difference switches to the approximation",
      x: [125, 115, 130, 140, 140, 115, 140, 125, 140, 135],
      y: [110, 122, 125, 120, 140, 124, 123, 137, 135, 145],
      statistic: 18,
      p: 0.5936305914425295,
      method: "approx",
      n: 9,
    },
    // scipy 1.10.1: scipy.stats.wilcoxon([1,2,3,4,5,6,7,8],[2,4,1,6,3,8,5,10], method="approx") -> WilcoxonResult(statistic=15.0, pvalue=0.6510766340778344)
    // (SciPy 1.10's default method="auto" would use the exact table here despite the ties: pvalue=0.7421875.)
    {
      label: "tied |d| with n ≤ 50 uses the tie-corrected approximation",
      x: [1, 2, 3, 4, 5, 6, 7, 8],
      y: [2, 4, 1, 6, 3, 8, 5, 10],
      statistic: 15,
      p: 0.6510766340778344,
      method: "approx",
      n: 8,
    },
    // scipy 1.10.1: scipy.stats.wilcoxon(W60x, W60y) -> WilcoxonResult(statistic=781.0, pvalue=0.43244333496176646)
    {
      label: "n > 50 with ties and a zero",
      x: W60x,
      y: W60y,
      statistic: 781,
      p: 0.43244333496176646,
      method: "approx",
      n: 59,
    },
    // scipy 1.10.1: scipy.stats.wilcoxon(E50x, E50y) -> WilcoxonResult(statistic=598.0, pvalue=0.7089524432753507)
    { label: "exact at n = 50", x: E50x, y: E50y, statistic: 598, p: 0.7089524432753507, method: "exact", n: 50 },
    // scipy 1.10.1: scipy.stats.wilcoxon([1,-2,-3,4,5,-6,-7,8],[0]*8) -> WilcoxonResult(statistic=18.0, pvalue=1.0)
    {
      label: "centre of the null",
      x: [1, -2, -3, 4, 5, -6, -7, 8],
      y: [0, 0, 0, 0, 0, 0, 0, 0],
      statistic: 18,
      p: 1,
      method: "exact",
      n: 8,
    },
    // scipy 1.10.1: scipy.stats.wilcoxon([1,2,3,4,5],[0,0,0,0,0]) -> WilcoxonResult(statistic=0.0, pvalue=0.0625)
    { label: "all positive", x: [1, 2, 3, 4, 5], y: [0, 0, 0, 0, 0], statistic: 0, p: 0.0625, method: "exact", n: 5 },
    // scipy 1.10.1: scipy.stats.wilcoxon([1,2,3],[1,2,3.5]) -> WilcoxonResult(statistic=0.0, pvalue=0.31731050786291415)
    {
      label: "one non-zero difference",
      x: [1, 2, 3],
      y: [1, 2, 3.5],
      statistic: 0,
      p: 0.31731050786291415,
      method: "approx",
      n: 1,
    },
    // scipy 1.10.1: scipy.stats.wilcoxon([2],[1]) -> WilcoxonResult(statistic=0.0, pvalue=1.0)
    { label: "a single pair", x: [2], y: [1], statistic: 0, p: 1, method: "exact", n: 1 },
  ];

  for (const { label, x, y, statistic, p, method, n } of cases)
    it(`matches scipy.stats.wilcoxon: ${label}`, () => {
      const result = wilcoxonSignedRank(x, y);
      expect(result.statistic).toBeCloseTo(statistic, 10);
      expect(result.pValue).toBeCloseTo(p, 9);
      expect(result.method).toBe(method);
      expect(result.n).toBe(n);
    });

  it("gives the same statistic and p-value with x and y swapped", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: -20, max: 20 }), fc.integer({ min: -20, max: 20 })), {
          minLength: 1,
          maxLength: 70,
        }),
        (pairs) => {
          const x = pairs.map(([a]) => a);
          const y = pairs.map(([, b]) => b);
          fc.pre(x.some((value, i) => value !== y[i]));
          const forward = wilcoxonSignedRank(x, y);
          const backward = wilcoxonSignedRank(y, x);
          expect(backward.statistic).toBe(forward.statistic);
          expect(backward.pValue).toBeCloseTo(forward.pValue, 12);
          expect(forward.pValue).toBeGreaterThanOrEqual(0);
          expect(forward.pValue).toBeLessThanOrEqual(1);
        },
      ),
    );
  });

  it("rejects all-zero differences, length mismatch, empty input and NaN", () => {
    expect(() => wilcoxonSignedRank([1, 2, 3], [1, 2, 3])).toThrow(
      /at least one non-zero difference, got all 3 equal to 0/,
    );
    expect(() => wilcoxonSignedRank([1, 2], [1])).toThrow(/x and y must have the same length, got 2 and 1/);
    expect(() => wilcoxonSignedRank([], [])).toThrow(StatisticsInputError);
    expect(() => wilcoxonSignedRank([1, 2], [1, Number.NaN])).toThrow(/y\[1\] must be a finite number, got NaN/);
  });
});
