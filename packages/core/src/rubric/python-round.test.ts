import { describe, expect, it } from "vitest";
import { pythonRound } from "./python-round.js";

describe("pythonRound", () => {
  // CPython 3.11: round(x, n) for each pair, printed by `python3 -c "print(round(x, n))"`.
  const cases: [number, number, number][] = [
    [0.25, 1, 0.2],
    [0.35, 1, 0.3],
    [0.15, 1, 0.1],
    [2.675, 2, 2.67],
    [2.5, 0, 2.0],
    [3.5, 0, 4.0],
    [1.05, 1, 1.1],
    [7.45, 1, 7.5],
    [0.45, 1, 0.5],
    [-0.25, 1, -0.2],
    [12.3456, 1, 12.3],
    [6.666666666666667, 1, 6.7],
  ];
  it.each(cases)("round(%s, %s) = %s as in Python", (x, n, expected) => {
    expect(pythonRound(x, n)).toBe(expected);
  });

  it("differs from toFixed on exact ties, which is why it exists", () => {
    expect(Number((0.25).toFixed(1))).toBe(0.3);
    expect(pythonRound(0.25, 1)).toBe(0.2);
  });
});
