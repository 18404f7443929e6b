import { describe, expect, it } from "vitest";
import { decompositionLoss, decompositionWeights } from "./decomposition.js";
import { PolicyInputError } from "./errors.js";

describe("decompositionWeights (ARCO's class balance)", () => {
  it("weighs each class N/(2·n_class), so both classes sum to N/2; one class alone gets ½", () => {
    const weights = decompositionWeights([1, 0, 0, 0]);
    expect(weights[0]).toBe(2);
    expect(weights.slice(1).map((w) => w.toFixed(6))).toEqual(["0.666667", "0.666667", "0.666667"]);
    expect(weights.reduce((a, b) => a + b)).toBeCloseTo(4, 12);
    expect(decompositionWeights([0, 0, 0])).toEqual([0.5, 0.5, 0.5]);
    // R = 0.5 is not a success: the threshold is strict, as the sidecar's.
    expect(decompositionWeights([0.5, 1])).toEqual([1, 1]);
  });
});

describe("decompositionLoss", () => {
  it("is the class-weighted mean squared gap between Σ_t s_t and R, with its gradient per step", () => {
    const { loss, gradients, meanAbsoluteGap } = decompositionLoss([[0.5, 0.5], [0.2]], [1, 0]);
    expect(loss).toBeCloseTo(0.02, 12);
    expect(gradients[0]).toBeCloseTo(0, 12);
    expect(gradients[1]).toBeCloseTo(0.2, 12);
    expect(meanAbsoluteGap).toBeCloseTo(0.1, 12);
  });

  it("has the gradient finite differences give", () => {
    const scores = [[0.1, -0.3, 0.4], [0.2], [0.6, 0.1]];
    const outcomes = [1, 0, 1];
    const { gradients } = decompositionLoss(scores, outcomes);
    const h = 1e-6;
    scores.forEach((steps, i) =>
      steps.forEach((_, t) => {
        const up = scores.map((row, j) => row.map((s, u) => (j === i && u === t ? s + h : s)));
        const down = scores.map((row, j) => row.map((s, u) => (j === i && u === t ? s - h : s)));
        const numeric = (decompositionLoss(up, outcomes).loss - decompositionLoss(down, outcomes).loss) / (2 * h);
        expect(gradients[i]).toBeCloseTo(numeric, 6);
      }),
    );
  });

  it("names the fault: no trajectories, a count mismatch, a score that is not finite", () => {
    expect(() => decompositionLoss([], [])).toThrow(PolicyInputError);
    expect(() => decompositionLoss([[0]], [1, 0])).toThrow(/one outcome per trajectory \(1\), got 2/);
    expect(() => decompositionLoss([[0, Number.NaN]], [1])).toThrow(
      /stepScores\[0\]\[1\]: expected a finite number, got NaN/,
    );
  });
});
