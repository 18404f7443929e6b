import { describe, expect, it } from "vitest";
import { decompositionLoss, decompositionWeights, valueDifferences, valueLoss } from "./decomposition.js";
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

describe("valueLoss (ours: every step's value regressed on its trajectory's outcome)", () => {
  it("is the class-weighted mean over trajectories of each one's mean squared error, with its gradient per step", () => {
    const { loss, gradients, meanAbsoluteGap } = valueLoss([[0.5, 1], [0.2]], [1, 0]);
    expect(loss).toBeCloseTo(0.0825, 12);
    expect(gradients[0]![0]).toBeCloseTo(-0.25, 12);
    expect(gradients[0]![1]).toBeCloseTo(0, 12);
    expect(gradients[1]![0]).toBeCloseTo(0.2, 12);
    expect(meanAbsoluteGap).toBeCloseTo((0.5 + 0 + 0.2) / 3, 12);
  });

  it("has the gradient finite differences give", () => {
    const values = [[0.1, -0.3, 0.4], [0.2], [0.6, 0.1]];
    const outcomes = [1, 0, 1];
    const { gradients } = valueLoss(values, outcomes);
    const h = 1e-6;
    values.forEach((row, i) =>
      row.forEach((_, t) => {
        const at = (d: number) =>
          valueLoss(
            values.map((r, j) => r.map((v, u) => (j === i && u === t ? v + d : v))),
            outcomes,
          ).loss;
        expect(gradients[i]![t]!).toBeCloseTo((at(h) - at(-h)) / (2 * h), 6);
      }),
    );
  });

  it("is minimised by E[R | step] whatever the lengths: a value, where the decomposition loss accepts any split", () => {
    // Two trajectories that share their first step: its best value is the mean of their outcomes.
    const best = valueLoss(
      [
        [0.5, 1],
        [0.5, 0],
      ],
      [1, 0],
    ).loss;
    expect(
      valueLoss(
        [
          [0.6, 1],
          [0.6, 0],
        ],
        [1, 0],
      ).loss,
    ).toBeGreaterThan(best);
    expect(
      valueLoss(
        [
          [0.4, 1],
          [0.4, 0],
        ],
        [1, 0],
      ).loss,
    ).toBeGreaterThan(best);
    expect(best).toBeCloseTo(0.125, 12);
  });

  it("names a trajectory without steps, a missing outcome and a value that is not finite", () => {
    expect(() => valueLoss([], [])).toThrow(PolicyInputError);
    expect(() => valueLoss([[0.1], []], [1, 0])).toThrow(/values\[1\]/);
    expect(() => valueLoss([[0.1]], [1, 0])).toThrow(/outcomes/);
    expect(() => valueLoss([[Number.NaN]], [1])).toThrow(/values\[0\]\[0\]/);
  });
});

describe("valueDifferences", () => {
  it("credits each step with the value's change, the last with the outcome less the value it left", () => {
    expect(valueDifferences([0.5, 0.8], 1).map((x) => x.toFixed(12))).toEqual(["0.300000000000", "0.200000000000"]);
    // Σ_t s_t = R − V(h_0) for any values.
    const values = [0.2, -0.4, 0.9, 0.1];
    const sum = valueDifferences(values, 0).reduce((a, b) => a + b);
    expect(sum).toBeCloseTo(0 - 0.2, 12);
    expect(valueDifferences([], 1)).toEqual([]);
    expect(() => valueDifferences([0.1, Number.POSITIVE_INFINITY], 1)).toThrow(/values\[1\]/);
  });
});
