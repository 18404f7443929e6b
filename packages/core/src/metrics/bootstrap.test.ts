import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { createRng } from "../random/rng.js";
import { bootstrapCI, quantile } from "./bootstrap.js";
import { StatisticsInputError } from "./errors.js";
import { mean } from "./summary.js";

describe("quantile", () => {
  it("matches numpy.quantile (linear)", () => {
    const sorted = [1, 1, 2, 3.5, 4, 5, 6, 9];
    // numpy 1.24.2: np.quantile(sorted([3.5,1,4,1,5,9,2,6]), q) for q in [0, 0.025, 0.25, 0.5, 0.9, 0.975, 1]
    // -> 1.0, 1.0, 1.75, 3.75, 6.8999999999999995, 8.475000000000001, 9.0
    const reference: [number, number][] = [
      [0, 1],
      [0.025, 1],
      [0.25, 1.75],
      [0.5, 3.75],
      [0.9, 6.8999999999999995],
      [0.975, 8.475000000000001],
      [1, 9],
    ];
    for (const [q, expected] of reference) expect(quantile(sorted, q)).toBeCloseTo(expected, 12);
    expect(quantile([7], 0.3)).toBe(7);
  });

  it("rejects unsorted input and q outside [0, 1]", () => {
    expect(() => quantile([1, 3, 2], 0.5)).toThrow(/sorted\[2\] = 2 < sorted\[1\] = 3/);
    expect(() => quantile([1, 2], 1.5)).toThrow(/q must be in \[0, 1\], got 1.5/);
    expect(() => quantile([], 0.5)).toThrow(StatisticsInputError);
  });
});

describe("bootstrapCI", () => {
  const values = Array.from({ length: 40 }, (_, i) => ((37 * i) % 101) / 10);

  it("is reproducible for a seed and changes with the seed", () => {
    const a = bootstrapCI(values, { seed: 1, resamples: 2000 });
    expect(bootstrapCI(values, { seed: 1, resamples: 2000 })).toEqual(a);
    expect(bootstrapCI(values, { seed: 2, resamples: 2000 })).not.toEqual(a);
    expect(a.estimate).toBe(mean(values));
    expect(a).toMatchObject({ confidence: 0.95, resamples: 2000 });
  });

  it("approaches the normal-theory interval for the mean", () => {
    // For a sample this size the percentile interval of the mean ≈ mean ± 1.96·s/√n.
    const rng = createRng("normal-sample");
    const sample = Array.from({ length: 400 }, () => 5 + 2 * rng.normal());
    const m = mean(sample);
    const s = Math.sqrt(sample.reduce((acc, v) => acc + (v - m) ** 2, 0) / (sample.length - 1));
    const halfWidth = (1.959963984540054 * s) / Math.sqrt(sample.length);
    const { lower, upper } = bootstrapCI(sample, { seed: 3 });
    expect(Math.abs(lower - (m - halfWidth)) / halfWidth).toBeLessThan(0.1);
    expect(Math.abs(upper - (m + halfWidth)) / halfWidth).toBeLessThan(0.1);
  });

  it("brackets the estimate and narrows as confidence drops", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -100, max: 100, noNaN: true }), { minLength: 2, maxLength: 30 }),
        fc.integer(),
        (sample, seed) => {
          const wide = bootstrapCI(sample, { seed, resamples: 300, confidence: 0.99 });
          const narrow = bootstrapCI(sample, { seed, resamples: 300, confidence: 0.5 });
          expect(wide.lower).toBeLessThanOrEqual(narrow.lower);
          expect(narrow.upper).toBeLessThanOrEqual(wide.upper);
          expect(wide.lower).toBeLessThanOrEqual(Math.max(...sample));
          expect(wide.upper).toBeGreaterThanOrEqual(Math.min(...sample));
        },
      ),
      { numRuns: 50 },
    );
  });

  it("accepts any statistic", () => {
    const median = (sample: readonly number[]) =>
      quantile(
        [...sample].sort((a, b) => a - b),
        0.5,
      );
    const result = bootstrapCI(values, { seed: "median", statistic: median, resamples: 1000 });
    expect(result.estimate).toBe(median(values));
    expect(result.lower).toBeLessThanOrEqual(result.estimate);
    expect(result.upper).toBeGreaterThanOrEqual(result.estimate);
    expect(bootstrapCI([4, 4, 4], { seed: 0 })).toMatchObject({ estimate: 4, lower: 4, upper: 4 });
  });

  it("rejects invalid options", () => {
    expect(() => bootstrapCI([], { seed: 1 })).toThrow(/values must hold at least 1 value, got 0/);
    expect(() => bootstrapCI([1, 2], {} as { seed: number })).toThrow(/options.seed is required/);
    expect(() => bootstrapCI([1, 2], { seed: 1, resamples: 0 })).toThrow(
      /options.resamples must be an integer ≥ 1, got 0/,
    );
    expect(() => bootstrapCI([1, 2], { seed: 1, confidence: 1 })).toThrow(
      /options.confidence must be in \(0, 1\), got 1/,
    );
    expect(() => bootstrapCI([1, 2], { seed: 1, statistic: () => Number.NaN })).toThrow(
      /options.statistic must return a finite number/,
    );
  });
});
