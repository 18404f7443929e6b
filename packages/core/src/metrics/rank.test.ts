import { describe, expect, it } from "vitest";
import { averageRanks } from "./rank.js";

describe("averageRanks", () => {
  it("matches scipy.stats.rankdata (method='average')", () => {
    // scipy 1.10.1: scipy.stats.rankdata([10, 20, 20, 5, 20, -1]) -> [3. , 5. , 5. , 2. , 5. , 1. ]
    expect(averageRanks([10, 20, 20, 5, 20, -1])).toEqual([3, 5, 5, 2, 5, 1]);
    expect(averageRanks([10, 20, 20, 5])).toEqual([2, 3.5, 3.5, 1]);
    expect(averageRanks([])).toEqual([]);
  });

  it("rejects NaN", () => {
    expect(() => averageRanks([1, Number.NaN])).toThrow(/values\[1\] must be a finite number, got NaN/);
  });
});
