import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { klK3 } from "./kl.js";
import { expectGradientMatches, randomMatrix, randomMask, seededRandom } from "./test-support.js";

const close = (x: number) => expect.closeTo(x, 12);

describe("klK3: hand-computed cases", () => {
  it("computes k3 per token, the per-sequence masked mean averaged over sequences, and its gradient", () => {
    // seq 0: ref − θ = [ln 2, −ln 2, 3 (masked)]
    //   k3 = [2 − ln 2 − 1, 0.5 + ln 2 − 1, e^3 − 3 − 1] = [0.306853, 0.193147, 16.085537]
    //   masked mean = (0.306853 + 0.193147)/2 = 0.25 exactly (the ln 2 terms cancel)
    // seq 1: ref − θ = [0] → k3 = 0, mean 0
    // mean = (0.25 + 0)/2 = 0.125
    // ∂mean/∂θ = m·(1 − e^{ref−θ})/(K·|m|): seq 0 → [(1 − 2)/4, (1 − 0.5)/4, 0] = [−0.25, 0.125, 0]; seq 1 → [0]
    const result = klK3({
      logp: [[-2, -1, -4], [-0.3]],
      logpRef: [[-2 + Math.LN2, -1 - Math.LN2, -1], [-0.3]],
      mask: [[1, 1, 0], [1]],
    });
    expect(result.perToken).toEqual([[close(1 - Math.LN2), close(Math.LN2 - 0.5), close(Math.exp(3) - 4)], [0]]);
    expect(result.mean).toEqual(close(0.125));
    expect(result.gradLogp).toEqual([[close(-0.25), close(0.125), 0], [0]]);
  });

  it("is zero, with zero gradient, when the policies agree", () => {
    const logp = [[-1, -2], [-3]];
    expect(klK3({ logp, logpRef: logp })).toEqual({ perToken: [[0, 0], [0]], mean: 0, gradLogp: [[0, 0], [0]] });
  });
});

describe("klK3: gradient against central finite differences", () => {
  for (const seed of [5, 6, 7]) {
    it(`random inputs with a random mask (seed ${seed})`, () => {
      const random = seededRandom(seed);
      const lengths = [4, 1, 7, 3];
      const logp = randomMatrix(random, lengths, -5, -0.01);
      const logpRef = randomMatrix(random, lengths, -5, -0.01);
      const mask = randomMask(random, lengths);
      const result = klK3({ logp, logpRef, mask });
      expectGradientMatches((x) => klK3({ logp: x, logpRef, mask }).mean, logp, result.gradLogp);
    });
  }
});

describe("klK3: properties", () => {
  it("k3 is never negative, and the mean lies between the smallest and largest per-token value", () => {
    const logps = fc.array(fc.double({ min: -10, max: 0, noNaN: true }), { minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(logps, logps, (a, b) => {
        const n = Math.min(a.length, b.length);
        const result = klK3({ logp: [a.slice(0, n)], logpRef: [b.slice(0, n)] });
        const values = result.perToken[0]!;
        expect(values.every((v) => v >= 0)).toBe(true);
        expect(result.mean).toBeGreaterThanOrEqual(Math.min(...values) - 1e-12);
        expect(result.mean).toBeLessThanOrEqual(Math.max(...values) + 1e-12);
      }),
    );
  });
});
