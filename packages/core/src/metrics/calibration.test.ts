import { describe, expect, it } from "vitest";
import { expectedCalibrationError } from "./calibration.js";
import { StatisticsInputError } from "./errors.js";

const confidences = [0.05, 0.15, 0.22, 0.38, 0.45, 0.51, 0.66, 0.7, 0.85, 0.95, 1.0, 0.99, 0.3];
const correct: (0 | 1)[] = [0, 0, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0];

describe("expectedCalibrationError", () => {
  it("matches a NumPy computation of the same definition", () => {
    // numpy 1.24.2: idx = np.minimum(np.floor(c*bins).astype(int), bins-1);
    // ece = Σ_b (np.sum(idx==b)/len(c)) * |y[idx==b].mean() - c[idx==b].mean()| over non-empty bins
    // -> 0.3038461538461539 (bins=10), 0.1469230769230769 (bins=5), 0.0607692307692308 (bins=1)
    expect(expectedCalibrationError(confidences, correct).ece).toBeCloseTo(0.3038461538461539, 12);
    expect(expectedCalibrationError(confidences, correct, { bins: 5 }).ece).toBeCloseTo(0.1469230769230769, 12);
    expect(expectedCalibrationError(confidences, correct, { bins: 1 }).ece).toBeCloseTo(0.0607692307692308, 12);
  });

  it("reports every bin, with null accuracy and confidence when empty", () => {
    const { ece, bins } = expectedCalibrationError([0.9, 0.8, 0.3, 0.6, 1], [true, true, false, 0, 1], { bins: 4 });
    expect(bins).toEqual([
      { lower: 0, upper: 0.25, count: 0, accuracy: null, confidence: null },
      { lower: 0.25, upper: 0.5, count: 1, accuracy: 0, confidence: 0.3 },
      { lower: 0.5, upper: 0.75, count: 1, accuracy: 0, confidence: 0.6 },
      { lower: 0.75, upper: 1, count: 3, accuracy: 1, confidence: expect.closeTo(0.9, 15) },
    ]);
    expect(ece).toBeCloseTo((1 / 5) * 0.3 + (1 / 5) * 0.6 + (3 / 5) * 0.1, 15);
  });

  it("computes the documented example", () => {
    const { ece } = expectedCalibrationError([0.9, 0.8, 0.3, 0.6], [true, true, false, 0], { bins: 2 });
    expect(ece).toBeCloseTo((1 / 4) * 0.3 + (3 / 4) * Math.abs(2 / 3 - 2.3 / 3), 14);
  });

  it("is 0 when confidence equals accuracy in every bin", () => {
    expect(expectedCalibrationError([1, 1, 0, 0], [1, true, 0, false]).ece).toBe(0);
  });

  it("rejects invalid input", () => {
    expect(() => expectedCalibrationError([0.5], [1, 0])).toThrow(
      /confidences and correct must have the same length, got 1 and 2/,
    );
    expect(() => expectedCalibrationError([], [])).toThrow(StatisticsInputError);
    expect(() => expectedCalibrationError([0.5, 1.2], [1, 0])).toThrow(
      /confidences\[1\] must be a number in \[0, 1\], got 1.2/,
    );
    expect(() => expectedCalibrationError([0.5, Number.NaN], [1, 0])).toThrow(/confidences\[1\] .* got NaN/);
    expect(() => expectedCalibrationError([0.5], [2 as 1])).toThrow(/correct\[0\] must be true, false, 0 or 1, got 2/);
    expect(() => expectedCalibrationError([0.5], [1], { bins: 0 })).toThrow(/bins must be an integer ≥ 1, got 0/);
  });
});
