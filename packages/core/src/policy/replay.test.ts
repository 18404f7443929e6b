import { describe, expect, it } from "vitest";
import { PolicyInputError } from "./errors.js";
import { prioritizedReplay } from "./replay.js";

const episodes = (returns: number[]) => returns.map((r, id) => ({ id, return: r }));
const ids = (selected: readonly { id: number }[]) => selected.map((e) => e.id);

describe("prioritizedReplay", () => {
  it("keeps the episodes at or below numpy's linear percentile, in their original order", () => {
    // returns [0.9, 0.1, 0.5, 0.3, 0.7], sorted [0.1, 0.3, 0.5, 0.7, 0.9]
    // p = 25: position 0.25·4 = 1 → 0.3 → ids 1 (0.1), 3 (0.3)
    // p = 30: position 1.2 → 0.3 + 0.2·(0.5 − 0.3) = 0.34 → ids 1, 3
    // p = 50: position 2 → 0.5 → ids 1, 2, 3
    const batch = episodes([0.9, 0.1, 0.5, 0.3, 0.7]);
    expect(ids(prioritizedReplay(batch, 25))).toEqual([1, 3]);
    expect(ids(prioritizedReplay(batch, 30))).toEqual([1, 3]);
    expect(ids(prioritizedReplay(batch, 50))).toEqual([1, 2, 3]);
    expect(ids(prioritizedReplay(batch, 100))).toEqual([0, 1, 2, 3, 4]);
    // the smallest p still keeps the minimum
    expect(ids(prioritizedReplay(batch, 1e-9))).toEqual([1]);
  });

  it("interpolates like numpy.percentile (values checked against numpy 2.4)", () => {
    // np.percentile([3, 1, 4, 1, 5, 9, 2, 6], 37.5) = 2.625 → returns ≤ 2.625: 1, 1, 2
    const batch = episodes([3, 1, 4, 1, 5, 9, 2, 6]);
    expect(ids(prioritizedReplay(batch, 37.5))).toEqual([1, 3, 6]);
    // np.percentile(..., 40) = 2.8 → still [1, 3, 6]; np.percentile(..., 45) = 3.15 → adds the 3 (id 0)
    expect(ids(prioritizedReplay(batch, 40))).toEqual([1, 3, 6]);
    expect(ids(prioritizedReplay(batch, 45))).toEqual([0, 1, 3, 6]);
  });

  it("keeps ties at the threshold", () => {
    expect(ids(prioritizedReplay(episodes([2, 1, 1, 3]), 10))).toEqual([1, 2]);
  });

  it("reads the return through returnOf", () => {
    const items = [
      { name: "a", score: 5 },
      { name: "b", score: -1 },
    ];
    expect(prioritizedReplay(items, 50, (e) => e.score).map((e) => e.name)).toEqual(["b"]);
  });

  it("rejects bad input, naming the argument", () => {
    expect(() => prioritizedReplay([], 50)).toThrow(
      new PolicyInputError("episodes", "expected at least one episode, got none"),
    );
    expect(() => prioritizedReplay(episodes([1]), 0)).toThrow(
      new PolicyInputError("percentile", "expected a number in (0, 100], got 0"),
    );
    expect(() => prioritizedReplay(episodes([1]), 101)).toThrow(PolicyInputError);
    expect(() => prioritizedReplay(episodes([1, Number.NaN]), 50)).toThrow(
      new PolicyInputError("episodes[1].return", "expected a finite number, got NaN"),
    );
    expect(() => prioritizedReplay([{ score: 1 }], 50, () => Number.NaN)).toThrow(
      new PolicyInputError("returnOf(episodes[0])", "expected a finite number, got NaN"),
    );
  });
});
