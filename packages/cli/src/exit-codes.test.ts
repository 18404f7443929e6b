import { CriterionErrorsError, RubricError } from "@rubric/core";
import { SampleFileError } from "@rubric/hackbench";
import { describe, expect, it } from "vitest";
import { EXIT_CODES, errorCode, exitCodeFor, exitCodeTable } from "./exit-codes.js";
import { InputFileError, UsageError } from "./io.js";

class Coded extends RubricError {
  constructor(readonly code: string) {
    super(code);
  }
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
    expect(exitCodeFor(new SampleFileError("x"), "hackbench")).toBe(2);
  });

  it("knows errors by their code alone; leaves any other error alone, a class name included", () => {
    expect(errorCode(new CriterionErrorsError("x", []))).toBe("score.criterion-errors");
    expect(exitCodeFor(new CriterionErrorsError("x", []), "score")).toBe(1);
    const named = Object.assign(new Error("x"), { name: "RubricValidationError" });
    expect(errorCode(named)).toBeUndefined();
    expect(exitCodeFor(named, "validate")).toBeUndefined();
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
    expect(table).toMatch(
      / {2}1 {2}invalid input or unscorable verdicts \[cli\.input-file, cli\.output-exists, cli\.output-unwritable, rubric\.\*, score\.\*/,
    );
    expect(table).toContain("  3  hackbench: hackable");
  });
});
