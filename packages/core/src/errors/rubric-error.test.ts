import { describe, expect, it } from "vitest";
import * as core from "../index.js";
import { isRubricError, RubricError } from "./rubric-error.js";

describe("isRubricError", () => {
  it("recognises core's errors, each with its own code", () => {
    const errors = [
      new core.RubricValidationError([{ path: "criteria[0].weight", message: "expected ≥ 0, got -2" }]),
      new core.RubricConversionError("m"),
      new core.VerifierKindError("m"),
      new core.VerdictValidationError("m"),
      new core.CriterionErrorsError("m", []),
      new core.ScoringError("m"),
      new core.StatisticsInputError("m"),
      new core.PolicyInputError("epsLow", "expected a finite number ≥ 0, got -1"),
      new core.RandomInputError("m"),
    ];
    for (const error of errors) {
      expect(error).toBeInstanceOf(RubricError);
      expect(isRubricError(error), error.name).toBe(true);
    }
    expect(new Set(errors.map((e) => e.code)).size).toBe(errors.length);
    expect(errors[0]!.code).toBe("rubric.validation");
  });

  it("goes by shape, so that an error of a second copy of core still counts", () => {
    const foreign = Object.assign(new Error("m"), { code: "score.scoring" });
    expect(isRubricError(foreign)).toBe(true);
  });

  it("refuses what is not an Error or has no <area>.<kind> code", () => {
    expect(isRubricError({ message: "m", code: "score.scoring" })).toBe(false);
    expect(isRubricError(new Error("m"))).toBe(false);
    expect(isRubricError(Object.assign(new Error("m"), { code: "ENOENT" }))).toBe(false);
    expect(isRubricError(Object.assign(new Error("m"), { code: "Score.Scoring" }))).toBe(false);
    expect(isRubricError(Object.assign(new Error("m"), { code: 42 }))).toBe(false);
  });
});
