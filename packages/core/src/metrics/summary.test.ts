import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StatisticsInputError } from "./errors.js";
import { mean, median, populationStd, sampleStd, summarizeSeeds } from "./summary.js";

const finite = fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true });

describe("mean", () => {
  it("averages and rejects empty or non-finite input, naming the index", () => {
    expect(mean([1, 2, 3, 4])).toBe(2.5);
    expect(() => mean([])).toThrow(/values must hold at least 1 value, got 0/);
    expect(() => mean([1, Number.NaN])).toThrow(new StatisticsInputError("values[1] must be a finite number, got NaN"));
  });

  it("of a constant array is the constant, and lies between the extremes", () => {
    fc.assert(
      fc.property(finite, fc.integer({ min: 1, max: 50 }), (value, n) => {
        expect(mean(Array.from({ length: n }, () => value))).toBeCloseTo(value, 6);
      }),
    );
    fc.assert(
      fc.property(fc.array(finite, { minLength: 1, maxLength: 50 }), (values) => {
        const m = mean(values);
        expect(m).toBeGreaterThanOrEqual(Math.min(...values) - 1e-6);
        expect(m).toBeLessThanOrEqual(Math.max(...values) + 1e-6);
      }),
    );
  });
});

describe("median", () => {
  it("takes the middle value, or the mean of the two middle ones, of unsorted input", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
    expect(() => median([])).toThrow(StatisticsInputError);
  });

  it("does not reorder its argument and has as many values at or above as at or below", () => {
    fc.assert(
      fc.property(fc.array(finite, { minLength: 1, maxLength: 50 }), (values) => {
        const copy = [...values];
        const m = median(values);
        expect(values).toEqual(copy);
        const below = values.filter((v) => v <= m).length;
        const above = values.filter((v) => v >= m).length;
        expect(below).toBeGreaterThanOrEqual(values.length / 2);
        expect(above).toBeGreaterThanOrEqual(values.length / 2);
      }),
    );
  });
});

describe("standard deviations", () => {
  it("match numpy: np.std(x, ddof=1) and np.std(x)", () => {
    // numpy 1.24: np.std([2,4,4,4,5,5,7,9], ddof=1) -> 2.138089935299395; np.std(...) -> 2.0
    expect(sampleStd([2, 4, 4, 4, 5, 5, 7, 9])).toBeCloseTo(2.138089935299395, 12);
    expect(populationStd([2, 4, 4, 4, 5, 5, 7, 9])).toBe(2);
    expect(populationStd([3])).toBe(0);
  });

  it("the sample one needs two values; the population one needs one", () => {
    expect(() => sampleStd([1])).toThrow(/values must hold at least 2 values, got 1/);
    expect(() => populationStd([])).toThrow(/values must hold at least 1 value, got 0/);
  });

  it("are ≥ 0, zero for a constant array, and the sample one is the larger by √(n / (n − 1))", () => {
    fc.assert(
      fc.property(fc.array(finite, { minLength: 2, maxLength: 50 }), (values) => {
        const population = populationStd(values);
        const sample = sampleStd(values);
        expect(population).toBeGreaterThanOrEqual(0);
        expect(sample).toBeCloseTo(population * Math.sqrt(values.length / (values.length - 1)), 6);
      }),
    );
    fc.assert(
      fc.property(finite, fc.integer({ min: 2, max: 50 }), (value, n) => {
        expect(sampleStd(Array.from({ length: n }, () => value))).toBeCloseTo(0, 6);
      }),
    );
  });
});

describe("summarizeSeeds", () => {
  it("gives the mean, the sample std and the count; one value has std 0", () => {
    const s = summarizeSeeds([2, 4, 4, 4, 5, 5, 7, 9]);
    expect(s.mean).toBe(5);
    expect(s.std).toBeCloseTo(2.138089935299395, 12);
    expect(s.n).toBe(8);
    expect(summarizeSeeds([0.25])).toEqual({ mean: 0.25, std: 0, n: 1 });
    expect(() => summarizeSeeds([])).toThrow(/values/);
    expect(() => summarizeSeeds([1, Number.NaN])).toThrow(/values/);
  });
});
