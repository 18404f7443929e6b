import { RubricError } from "@rubric/core";

/** The root of @rubric/report's errors. */
export abstract class ReportError extends RubricError {}

/** A report input that cannot be read: names the file and what is wrong with it. */
export class ReportInputError extends ReportError {
  override readonly name = "ReportInputError";
  readonly code = "report.input";
  constructor(
    readonly source: string,
    readonly problem: string,
  ) {
    super(`${source}: ${problem}`);
  }
}

/** The page's script is missing from the package (a source checkout that was not built). */
export class ReportPageMissingError extends ReportError {
  override readonly name = "ReportPageMissingError";
  readonly code = "report.page-missing";
  constructor(readonly tried: readonly string[]) {
    super(`the report page's script is not built (looked for ${tried.join(", ")}): run \`pnpm build\``);
  }
}
