import { describe, expect, it } from "vitest";
import { createRng } from "../random/index.js";
import { PolicyInputError } from "./errors.js";
import { logSoftmax, sampleCategorical } from "./softmax.js";

describe("logSoftmax", () => {
  it("gives log-probabilities that sum to 1 and keep the logits' differences", () => {
    const logps = logSoftmax([1, 2, 3]);
    expect(Array.from(logps, Math.exp).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 14);
    expect(logps[2]! - logps[0]!).toBeCloseTo(2, 14);
    expect(logps[0]).toBeCloseTo(1 - Math.log(Math.E + Math.E ** 2 + Math.E ** 3), 14);
  });

  it("is stable for large logits and keeps masked choices at −∞", () => {
    const logps = logSoftmax([1000, Number.NEGATIVE_INFINITY, 1000]);
    expect(logps[0]).toBeCloseTo(-Math.LN2, 10);
    expect(logps[2]).toBeCloseTo(-Math.LN2, 10);
    expect(logps[1]).toBe(Number.NEGATIVE_INFINITY);
  });

  it("refuses a distribution with no possible choice", () => {
    expect(() => logSoftmax([Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY])).toThrow(PolicyInputError);
    expect(() => logSoftmax([])).toThrow(PolicyInputError);
  });
});

describe("sampleCategorical", () => {
  const logps = logSoftmax([Math.log(0.2), Number.NEGATIVE_INFINITY, Math.log(0.5), Math.log(0.3)]);

  it("draws each choice about as often as its probability, never a masked one", () => {
    const rng = createRng(7);
    const counts = [0, 0, 0, 0];
    const n = 20_000;
    for (let i = 0; i < n; i++) counts[sampleCategorical(logps, rng)]! += 1;
    expect(counts[1]).toBe(0);
    expect(counts[0]! / n).toBeCloseTo(0.2, 1);
    expect(counts[2]! / n).toBeCloseTo(0.5, 1);
    expect(counts[3]! / n).toBeCloseTo(0.3, 1);
  });

  it("is reproducible for a seed, and a low temperature picks the likeliest choice", () => {
    const draws = (seed: number, temperature?: number) =>
      Array.from(
        { length: 50 },
        (
          (rng) => () =>
            sampleCategorical(logps, rng, temperature)
        )(createRng(seed)),
      );
    expect(draws(3)).toEqual(draws(3));
    expect(new Set(draws(3, 0.01))).toEqual(new Set([2]));
    expect(() => sampleCategorical(logps, createRng(1), 0)).toThrow(PolicyInputError);
  });
});
