import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { RandomInputError } from "./errors.js";
import { createRng, restoreRng, sampleWithReplacement, shuffle } from "./rng.js";

const draws = (seed: number | string, count: number): number[] => {
  const rng = createRng(seed);
  return Array.from({ length: count }, () => rng.next());
};

describe("createRng", () => {
  it("replays the same sequence for the same seed", () => {
    expect(draws(42, 100)).toEqual(draws(42, 100));
    expect(draws("experiment-a", 100)).toEqual(draws("experiment-a", 100));
  });

  it("gives different sequences for different seeds", () => {
    expect(draws(1, 10)).not.toEqual(draws(2, 10));
    expect(draws("a", 10)).not.toEqual(draws("b", 10));
    expect(draws(1, 10)).not.toEqual(draws("1", 10));
  });

  it("seeds the state with SplitMix64 outputs", () => {
    // Reference SplitMix64 with seed 0: 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4 (Vigna's splitmix64.c).
    expect(createRng(0).state().words).toEqual([0x7b1dcdaf, 0xe220a839, 0xa1b965f4, 0x6e789e6a]);
  });

  it("implements xoshiro128** exactly", () => {
    // Reference xoshiro128** 1.0 (Blackman & Vigna, xoshiro128starstar.c) from state {1, 2, 3, 4}.
    const rng = restoreRng({ algorithm: "xoshiro128**", words: [1, 2, 3, 4], key: "0000000000000000" });
    expect(Array.from({ length: 6 }, () => rng.uint32())).toEqual([
      11520, 0, 5927040, 70819200, 2031721883, 1637235492,
    ]);
  });

  it("keeps next() in [0, 1)", () => {
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const rng = createRng(seed);
        for (let i = 0; i < 50; i++) {
          const value = rng.next();
          if (!(value >= 0 && value < 1)) return false;
        }
        return true;
      }),
    );
  });

  it("draws int() uniformly (chi-square over 10 bins, 100k draws)", () => {
    const rng = createRng(2024);
    const counts = new Array<number>(10).fill(0);
    const total = 100_000;
    for (let i = 0; i < total; i++) counts[rng.int(10)]! += 1;
    const expected = total / 10;
    const chiSquare = counts.reduce((sum, count) => sum + (count - expected) ** 2 / expected, 0);
    // 9 degrees of freedom: P(χ² > 40) ≈ 7e-6, generous for a fixed seed yet catches real bias.
    expect(chiSquare).toBeLessThan(40);
  });

  it("keeps int() in range, also above 2^32", () => {
    const rng = createRng(5);
    for (let i = 0; i < 1000; i++) {
      const small = rng.int(7);
      expect(Number.isInteger(small) && small >= 0 && small < 7).toBe(true);
      const large = rng.int(2 ** 40 + 3);
      expect(Number.isInteger(large) && large >= 0 && large < 2 ** 40 + 3).toBe(true);
    }
    expect(rng.int(1)).toBe(0);
  });

  it("draws normal() with mean ≈ 0 and variance ≈ 1", () => {
    const rng = createRng("normal");
    const n = 100_000;
    const values = Array.from({ length: n }, () => rng.normal());
    const mean = values.reduce((a, b) => a + b, 0) / n;
    const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1);
    expect(Math.abs(mean)).toBeLessThan(0.02); // sd of the mean is 0.003
    expect(Math.abs(variance - 1)).toBeLessThan(0.03);
  });

  it("rejects seeds and bounds it cannot honour", () => {
    expect(() => createRng(0.5)).toThrow(RandomInputError);
    expect(() => createRng(Number.NaN)).toThrow(/seed must be a safe integer/);
    const rng = createRng(1);
    expect(() => rng.int(0)).toThrow(/maxExclusive .* got 0/);
    expect(() => rng.int(2.5)).toThrow(RandomInputError);
    expect(() => rng.int(2 ** 53 + 2)).toThrow(RandomInputError);
  });
});

describe("fork", () => {
  it("is deterministic per label and independent of parent draws", () => {
    const a = createRng(7);
    const b = createRng(7);
    b.next();
    b.next();
    const fromA = a.fork("bootstrap");
    const fromB = b.fork("bootstrap");
    expect(Array.from({ length: 20 }, () => fromA.next())).toEqual(Array.from({ length: 20 }, () => fromB.next()));
  });

  it("gives different labels different streams, unlike the parent", () => {
    const parent = createRng(7);
    const first = (rng: { next(): number }) => Array.from({ length: 5 }, () => rng.next());
    const x = first(parent.fork("x"));
    const y = first(parent.fork("y"));
    expect(x).not.toEqual(y);
    expect(x).not.toEqual(first(createRng(7)));
    expect(first(parent.fork("x").fork("y"))).not.toEqual(first(parent.fork("y").fork("x")));
  });

  it("gives streams that are uncorrelated with each other", () => {
    const parent = createRng("corr");
    const x = parent.fork("x");
    const y = parent.fork("y");
    const n = 20_000;
    let sxy = 0;
    for (let i = 0; i < n; i++) sxy += (x.next() - 0.5) * (y.next() - 0.5);
    // Correlation estimate = 12·mean((u-½)(v-½)); its sd is about 1/√n ≈ 0.007.
    expect(Math.abs((12 * sxy) / n)).toBeLessThan(0.04);
  });
});

describe("state / restoreRng", () => {
  it("resumes the same stream and the same forks", () => {
    const original = createRng("resume");
    original.next();
    const copy = restoreRng(JSON.parse(JSON.stringify(original.state())));
    expect(copy.next()).toBe(original.next());
    expect(copy.fork("f").next()).toBe(original.fork("f").next());
  });

  it("rejects malformed snapshots", () => {
    const state = createRng(1).state();
    expect(() => restoreRng({ ...state, words: [0, 0, 0, 0] })).toThrow(RandomInputError);
    expect(() => restoreRng({ ...state, words: [1, 2, 3, -1] })).toThrow(/state.words\[3\]/);
    expect(() => restoreRng({ ...state, key: "xyz" })).toThrow(/state.key/);
  });
});

describe("shuffle", () => {
  it("returns a permutation and leaves the input alone", () => {
    fc.assert(
      fc.property(fc.array(fc.integer()), fc.integer(), (array, seed) => {
        const before = array.slice();
        const shuffled = shuffle(array, createRng(seed));
        expect(array).toEqual(before);
        expect(shuffled.slice().sort((a, b) => a - b)).toEqual(before.slice().sort((a, b) => a - b));
      }),
    );
  });

  it("puts each element in each position about equally often", () => {
    const rng = createRng(99);
    const counts = Array.from({ length: 4 }, () => new Array<number>(4).fill(0));
    const trials = 40_000;
    for (let t = 0; t < trials; t++)
      shuffle([0, 1, 2, 3], rng).forEach((value, position) => (counts[value]![position]! += 1));
    for (const row of counts) for (const count of row) expect(Math.abs(count / trials - 0.25)).toBeLessThan(0.01);
  });
});

describe("sampleWithReplacement", () => {
  it("draws n indices in [0, n) reproducibly", () => {
    const sample = sampleWithReplacement(5, createRng(3));
    expect(sample).toHaveLength(5);
    expect(sample.every((i) => Number.isInteger(i) && i >= 0 && i < 5)).toBe(true);
    expect(sampleWithReplacement(5, createRng(3))).toEqual(sample);
    expect(sampleWithReplacement(5, createRng(3), 12)).toHaveLength(12);
  });

  it("rejects n < 1", () => {
    expect(() => sampleWithReplacement(0, createRng(1))).toThrow(/n must be an integer ≥ 1, got 0/);
  });
});
