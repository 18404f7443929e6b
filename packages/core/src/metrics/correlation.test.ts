import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { StatisticsInputError } from "./errors.js";
import { kendallTau, pearson, spearman } from "./correlation.js";

/** p-values far below 1e-9 are compared relatively; absolute closeness would say nothing. */
const expectPValue = (actual: number, expected: number) => {
  if (expected === 0) expect(actual).toBe(0);
  else if (expected < 1e-6) expect(Math.abs(actual - expected) / expected).toBeLessThan(1e-9);
  else expect(actual).toBeCloseTo(expected, 9);
};

// The same integer-modular formulas in the Python that produced the references, so the doubles agree.
const X60 = Array.from({ length: 60 }, (_, i) => ((37 * i) % 101) / 7);
const Y60 = X60.map((x, i) => x * 0.3 + ((53 * i) % 97) / 11);
const XT = Array.from({ length: 60 }, (_, i) => (13 * i) % 7); // heavy ties
const YT = XT.map((x, i) => ((11 * i) % 5) + x);
const X40 = Array.from({ length: 40 }, (_, i) => (37 * i) % 101); // distinct
const Y40 = X40.map((x, i) => ((53 * i) % 97) + x / 2); // distinct
const X33 = X40.slice(0, 33);
const Y33 = Y40.slice(0, 33);
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const swapped = (n: number, at: number) => {
  const values = range(n);
  [values[at], values[at + 1]] = [values[at + 1]!, values[at]!];
  return values;
};

describe("pearson", () => {
  it("matches scipy.stats.pearsonr", () => {
    // scipy 1.10.1: scipy.stats.pearsonr([1,2,3,4,5],[2,4,5,4,5]) -> PearsonRResult(statistic=0.7745966692414834, pvalue=0.12402706265755462)
    let result = pearson([1, 2, 3, 4, 5], [2, 4, 5, 4, 5]);
    expect(result.statistic).toBeCloseTo(0.7745966692414834, 10);
    expectPValue(result.pValue, 0.12402706265755462);
    // scipy 1.10.1: scipy.stats.pearsonr([1,2,3],[1,3,2]) -> PearsonRResult(statistic=0.4999999999999999, pvalue=0.6666666666666667)
    result = pearson([1, 2, 3], [1, 3, 2]);
    expect(result.statistic).toBeCloseTo(0.5, 10);
    expectPValue(result.pValue, 0.6666666666666667);
    // scipy 1.10.1: scipy.stats.pearsonr(X60, Y60) -> PearsonRResult(statistic=0.5313412643016732, pvalue=1.2534216949923918e-05)
    result = pearson(X60, Y60);
    expect(result.statistic).toBeCloseTo(0.5313412643016732, 10);
    expectPValue(result.pValue, 1.2534216949923918e-5);
    // scipy 1.10.1: scipy.stats.pearsonr(range(30), [i + ((7*i) % 5)/10 for i in range(30)]) -> PearsonRResult(statistic=0.9998677887068259, pvalue=1.2198756793845686e-51)
    result = pearson(
      range(30),
      range(30).map((i) => i + ((7 * i) % 5) / 10),
    );
    expect(result.statistic).toBeCloseTo(0.9998677887068259, 10);
    expectPValue(result.pValue, 1.2198756793845686e-51);
  });

  it("returns ±1 with p = 1 for two points, as SciPy", () => {
    // scipy 1.10.1: scipy.stats.pearsonr([1,2],[5,3]) -> PearsonRResult(statistic=-1.0, pvalue=1.0)
    expect(pearson([1, 2], [5, 3])).toEqual({ statistic: -1, pValue: 1 });
  });

  it("gives p = 0 for a perfect line", () => {
    expect(pearson([1, 2, 3, 4], [3, 5, 7, 9])).toEqual({ statistic: 1, pValue: 0 });
  });
});

describe("spearman", () => {
  it("matches scipy.stats.spearmanr", () => {
    // scipy 1.10.1: scipy.stats.spearmanr([1,2,3,4,5],[5,6,7,8,7]) -> SignificanceResult(statistic=0.8207826816681233, pvalue=0.08858700531354381)
    let result = spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]);
    expect(result.statistic).toBeCloseTo(0.8207826816681233, 10);
    expectPValue(result.pValue, 0.08858700531354381);
    // scipy 1.10.1: scipy.stats.spearmanr([1,2,2,3,4,4,5],[3,1,2,2,5,4,4]) -> SignificanceResult(statistic=0.6666666666666667, pvalue=0.10193947882985824)
    result = spearman([1, 2, 2, 3, 4, 4, 5], [3, 1, 2, 2, 5, 4, 4]);
    expect(result.statistic).toBeCloseTo(0.6666666666666667, 10);
    expectPValue(result.pValue, 0.10193947882985824);
    // scipy 1.10.1: scipy.stats.spearmanr([1,2,3],[1,3,2]) -> SignificanceResult(statistic=0.5, pvalue=0.6666666666666667)
    result = spearman([1, 2, 3], [1, 3, 2]);
    expect(result.statistic).toBeCloseTo(0.5, 10);
    expectPValue(result.pValue, 0.6666666666666667);
    // scipy 1.10.1: scipy.stats.spearmanr(X60, Y60) -> SignificanceResult(statistic=0.582217282578494, pvalue=1.0626759926053412e-06)
    result = spearman(X60, Y60);
    expect(result.statistic).toBeCloseTo(0.582217282578494, 10);
    expectPValue(result.pValue, 1.0626759926053412e-6);
    // scipy 1.10.1: scipy.stats.spearmanr(XT, YT) -> SignificanceResult(statistic=0.8277859397124392, pvalue=3.4593499568400327e-16)
    result = spearman(XT, YT);
    expect(result.statistic).toBeCloseTo(0.8277859397124392, 10);
    expectPValue(result.pValue, 3.4593499568400327e-16);
  });

  it("is 1 for any strictly increasing transform", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: -100_000, max: 100_000 }), { minLength: 3, maxLength: 40 }), (x) => {
        // Exact in doubles for |v| ≤ 1e5, so strictly increasing after rounding too.
        const y = x.map((v) => v ** 3 + 2 * v);
        const result = spearman(x, y);
        expect(result.statistic).toBeCloseTo(1, 12);
        // ρ may round to 1 − 2⁻⁵³ and, as in SciPy, small n turns that into p ≈ 1e-8 rather than 0.
        expect(result.pValue).toBeLessThan(1e-6);
      }),
    );
  });

  it("needs three pairs (SciPy's p-value is NaN for two)", () => {
    expect(() => spearman([1, 2], [2, 1])).toThrow(/x must hold at least 3 values, got 2/);
  });
});

describe("kendallTau", () => {
  const cases: { label: string; x: number[]; y: number[]; tau: number; p: number; method: "exact" | "approx" }[] = [
    // scipy 1.10.1: scipy.stats.kendalltau([1,2,3,4,5,6,7],[2,1,4,3,7,5,6]) -> SignificanceResult(statistic=0.6190476190476191, pvalue=0.06904761904761905)
    {
      label: "no ties, exact",
      x: [1, 2, 3, 4, 5, 6, 7],
      y: [2, 1, 4, 3, 7, 5, 6],
      tau: 0.6190476190476191,
      p: 0.06904761904761905,
      method: "exact",
    },
    // scipy 1.10.1: scipy.stats.kendalltau([12,2,1,12,2],[1,4,7,1,0]) -> SignificanceResult(statistic=-0.4714045207910316, pvalue=0.28274545993277467)
    {
      label: "ties, approx",
      x: [12, 2, 1, 12, 2],
      y: [1, 4, 7, 1, 0],
      tau: -0.4714045207910316,
      p: 0.28274545993277467,
      method: "approx",
    },
    // scipy 1.10.1: scipy.stats.kendalltau(X40, Y40) -> SignificanceResult(statistic=0.48461538461538467, pvalue=1.0622831726984801e-05)
    {
      label: "no ties, n = 40, approx",
      x: X40,
      y: Y40,
      tau: 0.48461538461538467,
      p: 1.0622831726984801e-5,
      method: "approx",
    },
    // scipy 1.10.1: scipy.stats.kendalltau(X33, Y33) -> SignificanceResult(statistic=0.4659090909090909, pvalue=8.431057491538773e-05)
    {
      label: "no ties, n = 33, exact",
      x: X33,
      y: Y33,
      tau: 0.4659090909090909,
      p: 8.431057491538773e-5,
      method: "exact",
    },
    // scipy 1.10.1: scipy.stats.kendalltau(range(40), range(40) with [10], [11] swapped) -> SignificanceResult(statistic=0.9974358974358974, pvalue=9.804939513027087e-47)
    {
      label: "one swap, n = 40, exact",
      x: range(40),
      y: swapped(40, 10),
      tau: 0.9974358974358974,
      p: 9.804939513027087e-47,
      method: "exact",
    },
    // scipy 1.10.1: scipy.stats.kendalltau(range(200), range(200) with [0], [1] swapped) -> SignificanceResult(statistic=0.9998994974874371, pvalue=0.0)
    {
      label: "one swap, n = 200, exact",
      x: range(200),
      y: swapped(200, 0),
      tau: 0.9998994974874371,
      p: 0,
      method: "exact",
    },
    // scipy 1.10.1: scipy.stats.kendalltau(XT, YT) -> SignificanceResult(statistic=0.6890864033094912, pvalue=2.1293494922067943e-12)
    { label: "heavy ties, n = 60", x: XT, y: YT, tau: 0.6890864033094912, p: 2.1293494922067943e-12, method: "approx" },
    // scipy 1.10.1: scipy.stats.kendalltau([1,2,3,4],[1,2,4,3]) -> SignificanceResult(statistic=0.6666666666666669, pvalue=0.3333333333333333)
    {
      label: "c = 1",
      x: [1, 2, 3, 4],
      y: [1, 2, 4, 3],
      tau: 0.6666666666666669,
      p: 0.3333333333333333,
      method: "exact",
    },
    // scipy 1.10.1: scipy.stats.kendalltau([1,2,3,4],[4,3,2,1]) -> SignificanceResult(statistic=-1.0, pvalue=0.08333333333333333)
    { label: "c = 0", x: [1, 2, 3, 4], y: [4, 3, 2, 1], tau: -1, p: 0.08333333333333333, method: "exact" },
    // scipy 1.10.1: scipy.stats.kendalltau([1,2],[2,1]) -> SignificanceResult(statistic=-1.0, pvalue=1.0)
    { label: "n = 2", x: [1, 2], y: [2, 1], tau: -1, p: 1, method: "exact" },
    // scipy 1.10.1: scipy.stats.kendalltau([1,2,3,4,5],[3,4,1,5,2]) -> SignificanceResult(statistic=0.0, pvalue=1.0)
    { label: "centre of the null", x: [1, 2, 3, 4, 5], y: [3, 4, 1, 5, 2], tau: 0, p: 1, method: "exact" },
  ];

  for (const { label, x, y, tau, p, method } of cases)
    it(`matches scipy.stats.kendalltau: ${label}`, () => {
      const result = kendallTau(x, y);
      expect(result.statistic).toBeCloseTo(tau, 10);
      expectPValue(result.pValue, p);
      expect(result.method).toBe(method);
    });

  it("agrees with the O(n²) definition of tau-b", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 6 }), fc.integer({ min: 0, max: 6 })), {
          minLength: 2,
          maxLength: 30,
        }),
        (pairs) => {
          const x = pairs.map(([a]) => a);
          const y = pairs.map(([, b]) => b);
          fc.pre(new Set(x).size > 1 && new Set(y).size > 1);
          let concordantMinusDiscordant = 0;
          let untiedX = 0;
          let untiedY = 0;
          for (let i = 0; i < x.length; i++)
            for (let j = i + 1; j < x.length; j++) {
              const sx = Math.sign(x[i]! - x[j]!);
              const sy = Math.sign(y[i]! - y[j]!);
              concordantMinusDiscordant += sx * sy;
              untiedX += sx === 0 ? 0 : 1;
              untiedY += sy === 0 ? 0 : 1;
            }
          expect(kendallTau(x, y).statistic).toBeCloseTo(concordantMinusDiscordant / Math.sqrt(untiedX * untiedY), 12);
        },
      ),
    );
  });
});

describe("input checks", () => {
  it("rejects constant input, length mismatch, NaN and too few pairs", () => {
    for (const correlate of [pearson, spearman, kendallTau]) {
      expect(() => correlate([3, 3, 3], [1, 2, 3])).toThrow(StatisticsInputError);
      expect(() => correlate([1, 2, 3], [4, 4, 4])).toThrow(/y is constant \(every value is 4\)/);
      expect(() => correlate([1, 2, 3], [1, 2])).toThrow(/same length, got 3 and 2/);
      expect(() => correlate([1, Number.NaN, 3], [1, 2, 3])).toThrow(/x\[1\] must be a finite number, got NaN/);
      expect(() => correlate([1], [2])).toThrow(StatisticsInputError);
    }
  });
});
