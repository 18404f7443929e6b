import { RubricError } from "../errors/rubric-error.js";

/** One problem found in a rubric document, located precisely enough to fix by hand. */
export interface RubricIssue {
  /** Path inside the document, e.g. `stages[1].rules[0].weight`; `(root)` for the document itself. */
  readonly path: string;
  /** What is wrong, with the offending value where there is one: `expected ≥ 0, got -2`. */
  readonly message: string;
  /** 1-based line in a JSONL file, when the document came from one. */
  readonly line?: number;
  /** The file or label the document came from, when known. */
  readonly source?: string;
}

/** Formats an issue the way every tool prints it: `file:3: stages[1].weight: expected ≥ 0, got -2`. */
export function formatRubricIssue(issue: RubricIssue): string {
  const where = [issue.source, issue.line === undefined ? undefined : `line ${issue.line}`]
    .filter((part) => part !== undefined)
    .join(":");
  return `${where ? `${where}: ` : ""}${issue.path}: ${issue.message}`;
}

/**
 * Thrown when a rubric document does not match its schema. Carries every issue found,
 * not just the first, so a user can fix a file in one pass.
 */
export class RubricValidationError extends RubricError {
  override readonly name = "RubricValidationError";
  readonly code = "rubric.validation";
  constructor(readonly issues: readonly RubricIssue[]) {
    super(
      issues.length === 1
        ? formatRubricIssue(issues[0]!)
        : `${issues.length} problems:\n${issues.map((i) => `  ${formatRubricIssue(i)}`).join("\n")}`,
    );
  }
}

/** Thrown when a rubric cannot be converted between the flat and staged forms without losing meaning. */
export class RubricConversionError extends RubricError {
  override readonly name = "RubricConversionError";
  readonly code = "rubric.conversion";
}
