import { describe, expect, it } from "vitest";
import { StatisticsInputError } from "./errors.js";
import { erfc, logGamma, normalCdf, normalSurvival, regularizedIncompleteBeta } from "./special.js";

const expectRelative = (actual: number, expected: number, tolerance: number) =>
  expect(Math.abs(actual - expected) / Math.abs(expected)).toBeLessThan(tolerance);

describe("erfc", () => {
  // CPython 3 math.erfc (C library, correctly rounded to < 1 ulp) at each x.
  const reference: [number, number][] = [
    [-3, 1.9999779095030015],
    [-0.5, 1.5204998778130465],
    [0, 1.0],
    [1e-10, 0.999999999887162],
    [0.5, 0.4795001221869535],
    [0.74, 0.2953219221452542],
    [0.76, 0.28246324719440913],
    [1, 0.15729920705028513],
    [1.05, 0.13756389390990328],
    [2, 0.004677734981047265],
    [5, 1.5374597944280351e-12],
    [10, 2.088487583762545e-45],
    [20, 5.3958656116079005e-176],
    [26, 5.663192408856143e-296],
  ];

  it("matches math.erfc to ~1e-15 relative, also deep in the tail", () => {
    for (const [x, expected] of reference) expectRelative(erfc(x), expected, 2e-15);
  });

  it("underflows to 0 and saturates at 2", () => {
    expect(erfc(30)).toBe(0);
    expect(erfc(-30)).toBe(2);
  });

  it("gives the standard normal tails", () => {
    // scipy 1.10.1: scipy.stats.norm.cdf(1.959963984540054) -> 0.975; norm.sf(8) -> 6.22096057427174e-16
    expect(normalCdf(1.959963984540054)).toBeCloseTo(0.975, 15);
    expectRelative(normalSurvival(8), 6.22096057427174e-16, 1e-13);
    expectRelative(normalCdf(-8), 6.22096057427174e-16, 1e-13);
    expect(normalSurvival(0)).toBe(0.5);
  });

  it("rejects NaN", () => {
    expect(() => erfc(Number.NaN)).toThrow(StatisticsInputError);
  });
});

describe("logGamma", () => {
  it("matches ln Γ", () => {
    // CPython 3 math.lgamma at each x.
    const reference: [number, number][] = [
      [0.5, 0.5723649429247004],
      [1, 0.0],
      [2, 0.0],
      [5, 3.178053830347945],
      [10.5, 13.940625219403763],
      [100, 359.1342053695754],
      [1e6, 12815504.569147611],
    ];
    for (const [x, expected] of reference) expect(logGamma(x)).toBeCloseTo(expected, x > 1000 ? 6 : 13);
    expectRelative(logGamma(1e6), 12815504.569147611, 1e-15);
  });

  it("rejects x ≤ 0", () => {
    expect(() => logGamma(0)).toThrow(/x must be finite and > 0, got 0/);
  });
});

describe("regularizedIncompleteBeta", () => {
  it("matches scipy.special.betainc", () => {
    // scipy 1.10.1: scipy.special.betainc(a, b, x) for each [x, a, b].
    const reference: [number, number, number, number][] = [
      [0.5, 2, 3, 0.6875],
      [0.1, 0.5, 0.5, 0.2048327646991335],
      [0.9, 0.5, 0.5, 0.7951672353008662],
      [0.3, 14.5, 0.5, 4.538212160419274e-9],
      [0.99, 14.5, 0.5, 0.5924832830158484],
      [0.2, 29, 29, 2.0245811558553727e-7],
      [0.45, 200, 200, 0.02254705356853623],
      [0.001, 1.5, 7, 0.00046202119368444155],
    ];
    for (const [x, a, b, expected] of reference) expectRelative(regularizedIncompleteBeta(x, a, b), expected, 1e-12);
  });

  it("handles the end points and rejects bad arguments", () => {
    expect(regularizedIncompleteBeta(0, 2, 3)).toBe(0);
    expect(regularizedIncompleteBeta(1, 2, 3)).toBe(1);
    expect(() => regularizedIncompleteBeta(1.5, 2, 3)).toThrow(/x must be in \[0, 1\], got 1.5/);
    expect(() => regularizedIncompleteBeta(0.5, 0, 3)).toThrow(/a must be finite and > 0, got 0/);
  });
});
