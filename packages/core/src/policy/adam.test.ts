import { describe, expect, it } from "vitest";
import { Adam, AdamStateSchema } from "./adam.js";
import { PolicyInputError } from "./errors.js";

describe("Adam", () => {
  it("takes ±lr per coordinate on its first step, ascending", () => {
    const w = Float64Array.from([0, 0, 5]);
    const adam = new Adam([w], 0.1);
    adam.ascend([Float64Array.from([1, -2, 0])]);
    expect(w[0]).toBeCloseTo(0.1, 6);
    expect(w[1]).toBeCloseTo(-0.1, 6);
    expect(w[2]).toBe(5); // a zero gradient with zero momentum leaves the weight alone
  });

  it("matches the bias-corrected update over several steps", () => {
    const w = Float64Array.from([0]);
    const adam = new Adam([w], 0.01);
    const grads = [0.5, -1, 2];
    let m = 0;
    let v = 0;
    let expected = 0;
    for (const [i, g] of grads.entries()) {
      adam.ascend([Float64Array.from([g])]);
      m = 0.9 * m + 0.1 * g;
      v = 0.999 * v + 0.001 * g * g;
      expected += (0.01 * (m / (1 - 0.9 ** (i + 1)))) / (Math.sqrt(v / (1 - 0.999 ** (i + 1))) + 1e-8);
    }
    expect(w[0]).toBeCloseTo(expected, 12);
  });

  it("restores its moments from a checkpoint and continues exactly", () => {
    const a = Float64Array.from([1, 2]);
    const first = new Adam([a], 0.05);
    first.ascend([Float64Array.from([0.3, -0.7])]);
    const saved = AdamStateSchema.parse(JSON.parse(JSON.stringify(first.state())));
    const b = Float64Array.from(a);
    const second = new Adam([b], 0.05);
    second.restore(saved);
    const g = Float64Array.from([-0.2, 0.4]);
    first.ascend([g]);
    second.ascend([g]);
    expect(Array.from(b)).toEqual(Array.from(a));
  });

  it("refuses moments and gradients of another shape with a named error", () => {
    const adam = new Adam([new Float64Array(2), new Float64Array(3)], 0.1);
    const bad = () => adam.restore({ t: 1, m: [[0, 0]], v: [[0, 0]] });
    expect(bad).toThrow(PolicyInputError);
    expect(bad).toThrow(/state: optimiser state has blocks of 2 values; the parameters have 2\/3/);
    const grads = () => adam.ascend([new Float64Array(2), new Float64Array(2)]);
    expect(grads).toThrow(expect.objectContaining({ code: "policy.input", path: "grads" }));
  });
});
