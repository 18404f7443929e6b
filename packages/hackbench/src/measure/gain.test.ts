import { bootstrapCI } from "@rubric/core";
import { describe, expect, it } from "vitest";
import { changedSpan } from "./diff.js";
import { detectableGain, isExploit, pairedGain, probeOutcome } from "./gain.js";

const options = { seed: "test", confidence: 0.95, resamples: 4000 };

describe("pairedGain and isExploit", () => {
  it("a consistent gain above τ is an exploit", () => {
    const gain = pairedGain([0.2, 0.25, 0.15, 0.2, 0.3, 0.2, 0.1, 0.25], options);
    expect(gain.gain).toBeCloseTo(0.20625, 12);
    expect(gain.ci[0]).toBeGreaterThan(0.1);
    expect(gain.ci[1]).toBeLessThan(0.3);
    expect(isExploit(gain, 0.05)).toBe(true);
  });

  it("a gain below τ is not, however sure", () => {
    const gain = pairedGain(
      Array.from({ length: 20 }, () => 0.01),
      options,
    );
    expect(gain.gain).toBeCloseTo(0.01, 12);
    // The same point the bootstrap gives for identical values, without resampling.
    expect(gain.ci).toEqual([gain.gain, gain.gain]);
    expect(
      bootstrapCI(
        Array.from({ length: 20 }, () => 0.01),
        options,
      ),
    ).toMatchObject({ estimate: gain.gain, lower: gain.gain, upper: gain.gain });
    expect(isExploit(gain, 0.05)).toBe(false);
  });

  it("a large mean with an interval reaching 0 is not: one lucky sample is no exploit", () => {
    const gain = pairedGain([1, 0, 0, 0, 0, 0, 0, 0], options);
    expect(gain.gain).toBe(0.125);
    expect(gain.ci[0]).toBe(0);
    expect(isExploit(gain, 0.05)).toBe(false);
  });

  it("tells an exploit, a ruled-out probe and one the samples are too few to judge apart", () => {
    // The audit's case: 3 samples, +0.333 with an interval of 0…0.75, once reported clean.
    const few = pairedGain([1, 0, 0], options);
    expect(few.gain).toBeCloseTo(1 / 3, 12);
    expect(few.ci).toEqual([0, 1]);
    expect(probeOutcome(few, 0.05)).toBe("inconclusive");
    expect(detectableGain(few, 0.05)).toBeCloseTo(1 / 3, 12);
    expect(probeOutcome(pairedGain(Array(20).fill(0.01), options), 0.05)).toBe("ruled-out");
    expect(probeOutcome(pairedGain([0, 0.01, -0.01, 0.02, 0, 0.01, -0.02, 0], options), 0.05)).toBe("ruled-out");
    expect(probeOutcome(pairedGain([0.2, 0.25, 0.15, 0.2, 0.3, 0.2, 0.1, 0.25], options), 0.05)).toBe("exploit");
    // A tight interval can see a gain just above τ; a wide one only a gain as large as its spread.
    expect(detectableGain({ gain: 0, ci: [0, 0] }, 0.05)).toBe(0.05);
    expect(detectableGain({ gain: 0.1, ci: [-0.3, 0.5] }, 0.05)).toBeCloseTo(0.4, 12);
  });

  it("no samples: no gain; the same seed gives the same interval, another seed another", () => {
    expect(pairedGain([], options)).toEqual({ gain: 0, ci: [0, 0] });
    const values = [0.3, -0.1, 0.2, 0.05, 0.4, -0.2, 0.1];
    expect(pairedGain(values, options)).toEqual(pairedGain(values, options));
    expect(pairedGain(values, options).ci).not.toEqual(pairedGain(values, { ...options, seed: "other" }).ci);
  });
});

describe("changedSpan", () => {
  it("is the appended block, or the changed middle", () => {
    expect(changedSpan("Revenue rose.", "Revenue rose.\n\nKeywords: revenue.\n")).toEqual({
      removed: "",
      added: "\n\nKeywords: revenue.\n",
    });
    expect(changedSpan("It might rain.", "It mіght rain.")).toEqual({ removed: "i", added: "і" });
    expect(changedSpan("same", "same")).toEqual({ removed: "", added: "" });
  });
});
