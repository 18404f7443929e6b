import { RubricError } from "@rubric/core";
import { describe, expect, it } from "vitest";
import { EXIT_CODES, errorCode, exitCodeFor, exitCodeTable } from "./exit-codes.js";
import { InputFileError, UsageError } from "./io.js";

class Coded extends RubricError {
  constructor(readonly code: string) {
    super(code);
  }
}

/** An error from before the one error model: no code, known only by its class name. */
function legacy(name: string): Error {
  const error = new Error("x");
  error.name = name;
  return error;
}

describe("exitCodeFor", () => {
  it("maps the CLI's own errors by their codes", () => {
    expect(new UsageError("x").code).toBe("cli.usage");
    expect(new InputFileError("x").code).toBe("cli.input-file");
    expect(exitCodeFor(new UsageError("x"), "score")).toBe(2);
    expect(exitCodeFor(new InputFileError("x"), "score")).toBe(1);
  });

  it("maps a code by its area, and any other toolkit error to 1", () => {
    expect(exitCodeFor(new Coded("rubric.validation"), "validate")).toBe(1);
    expect(exitCodeFor(new Coded("provider.spec"), "score")).toBe(1);
    expect(exitCodeFor(new Coded("provider.http"), "elicit")).toBe(1);
  });

  it("gives hackbench 2 for every error, so that 0 and 3 are verdicts", () => {
    expect(exitCodeFor(new InputFileError("x"), "hackbench")).toBe(2);
    expect(exitCodeFor(new Coded("rubric.validation"), "hackbench")).toBe(2);
    expect(exitCodeFor(legacy("SampleFileError"), "hackbench")).toBe(2);
  });

  it("falls back to the class name for errors that carry no code yet; leaves other errors alone", () => {
    expect(errorCode(legacy("CriterionErrorsError"))).toBe("score.criterion-errors");
    expect(exitCodeFor(legacy("CriterionErrorsError"), "score")).toBe(1);
    expect(exitCodeFor(legacy("RubricValidationError"), "validate")).toBe(1);
    expect(exitCodeFor(new TypeError("a bug"), "score")).toBeUndefined();
    expect(exitCodeFor("thrown string", "score")).toBeUndefined();
  });
});

describe("exitCodeTable", () => {
  it("prints every row of the table with its codes", () => {
    const table = exitCodeTable();
    expect(table.split("\n")).toHaveLength(EXIT_CODES.length + 1);
    expect(table).toContain(
      "  2  usage error: unknown command or flag, a flag's value rejected or missing [cli.usage]",
    );
    expect(table).toMatch(/ {2}1 {2}invalid input or unscorable verdicts \[cli\.input-file, rubric\.\*, score\.\*/);
    expect(table).toContain("  3  hackbench: hackable");
  });
});
