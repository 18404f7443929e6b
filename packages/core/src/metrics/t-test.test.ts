import { describe, expect, it } from "vitest";
import { StatisticsInputError } from "./errors.js";
import { pairedTTest } from "./t-test.js";

describe("pairedTTest", () => {
  it("matches scipy.stats.ttest_rel", () => {
    // scipy 1.x: TtestResult(statistic=-2.057983021710106, pvalue=0.1087009513249236, df=4)
    const small = pairedTTest([1, 2, 3, 4, 5], [2, 2, 5, 4, 8]);
    expect(small.statistic).toBeCloseTo(-2.057983021710106, 12);
    expect(small.pValue).toBeCloseTo(0.1087009513249236, 10);
    expect(small).toMatchObject({ df: 4, meanDifference: -1.2 });
    // statistic=16.635748545701535, pvalue=7.648773351729404e-05
    const large = pairedTTest([0.9, 1.0, 0.95, 1.0, 0.8], [0.1, 0.05, 0.2, 0.1, 0.12]);
    expect(large.statistic).toBeCloseTo(16.635748545701535, 10);
    expect(large.pValue / 7.648773351729404e-5).toBeCloseTo(1, 8);
    // The test is symmetric: swapping the samples flips t and keeps p.
    expect(pairedTTest([2, 2, 5, 4, 8], [1, 2, 3, 4, 5]).pValue).toBeCloseTo(small.pValue, 14);
  });

  it("gives p = 0 when every pair differs by the same amount, and refuses what it cannot test", () => {
    expect(pairedTTest([1, 1, 1], [0, 0, 0])).toMatchObject({ statistic: Infinity, pValue: 0, df: 2 });
    expect(() => pairedTTest([1, 2], [1, 2])).toThrow(StatisticsInputError);
    expect(() => pairedTTest([1], [0])).toThrow(StatisticsInputError);
    expect(() => pairedTTest([1, 2], [0])).toThrow(StatisticsInputError);
    expect(() => pairedTTest([1, Number.NaN], [0, 0])).toThrow(StatisticsInputError);
  });
});
