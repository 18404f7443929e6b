import { describe, expect, it } from "vitest";
import { arcaneConfig } from "./config.js";

describe("arcaneConfig", () => {
  it("takes an option given as undefined (a flag not passed) as its default", () => {
    const quick = arcaneConfig({ quick: true });
    expect(
      arcaneConfig({ quick: true, gspoBatches: undefined, epsLow: undefined, epsHigh: undefined, seeds: undefined }),
    ).toEqual(quick);
    expect(quick).toMatchObject({ gspoBatches: 12, epsLow: 3e-4, epsHigh: 4e-4, seeds: [1, 2] });
    expect(arcaneConfig({ quick: true, gspoBatches: 3 }).gspoBatches).toBe(3);
    // The run's own band is not swept again.
    expect(arcaneConfig({ quick: true, epsLow: 0.2, epsHigh: 0.28 }).epsSweep).toEqual([[3e-3, 4e-3]]);
    expect(quick.epsSweep).toEqual([
      [3e-3, 4e-3],
      [0.2, 0.28],
    ]);
  });
});
