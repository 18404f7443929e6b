// How scored outputs are printed: the table with its summary line and the first error's cause,
// or the JSON report. Shared by `score --outputs` and `score --verdicts <results file>`; it loads
// no verifier.
import { mean, quantile, type ErrorPolicy } from "@rubric/core";
import type { CliIO } from "../io.js";

/** One output's line of a results report (`score --outputs --json`'s `results[i]`). */
export interface ResultRow {
  readonly id: string;
  readonly total: number | null;
  readonly normalized: number | null;
  readonly errors: number;
  readonly scoreError?: string | undefined;
  readonly verdicts: readonly { readonly criterionId: string; readonly error?: string | undefined }[];
}

/** A results report as printed: the policy, the error count and every output's row. */
export interface ResultsReport {
  readonly errorsAs: ErrorPolicy;
  readonly errors: number;
  readonly results: readonly ResultRow[];
}

/**
 * The line that ends plain output: how many outputs, the mean and quantiles of the scored ones'
 * normalised scores, and how many could not be scored.
 */
export function summaryLine(results: readonly ResultRow[]): string {
  const scored = results.flatMap((r) => (r.normalized === null ? [] : [r.normalized]));
  const errors = results.reduce((n, r) => n + r.errors, 0);
  const unscored = results.length - scored.length;
  const tail = `${unscored} unscored, ${errors} error verdict(s)`;
  if (scored.length === 0) return `summary: ${results.length} output(s), none scored; ${tail}`;
  const sorted = [...scored].sort((a, b) => a - b);
  const q = (p: number) => quantile(sorted, p).toFixed(4);
  return `summary: ${results.length} output(s), ${scored.length} scored: mean ${mean(scored).toFixed(4)}, p10 ${q(0.1)}, median ${q(0.5)}, p90 ${q(0.9)}; ${tail}`;
}

/** The first verdict that is an error, with its output and criterion. */
function firstError(results: readonly ResultRow[]) {
  for (const r of results) {
    if (r.scoreError !== undefined) return { id: r.id, criterionId: "(score)", error: r.scoreError };
    const v = r.verdicts.find((verdict) => verdict.error !== undefined);
    if (v !== undefined) return { id: r.id, criterionId: v.criterionId, error: v.error! };
  }
  return undefined;
}

/**
 * Prints a results report: JSON as it is, or one line per output (id, normalised score, error
 * verdicts) and the summary line; error verdicts are counted on stderr with the first one's cause.
 */
export function printResults(report: ResultsReport, json: boolean, io: CliIO): void {
  if (json) io.out(`${JSON.stringify(report)}\n`);
  else {
    const width = Math.max(2, ...report.results.map((r) => r.id.length));
    io.out(`${"id".padEnd(width)}  normalized  errors\n`);
    for (const r of report.results) {
      const score = r.normalized === null ? "—" : r.normalized.toFixed(4);
      // A renormalised score left out the criteria whose verdicts were errors: say so on its line.
      const marked =
        r.errors > 0 && r.normalized !== null ? `  (${report.errorsAs}: ${r.errors} criteria left out)` : "";
      io.out(`${r.id.padEnd(width)}  ${score.padStart(10)}  ${r.errors}${marked}\n`);
    }
    io.out(`${summaryLine(report.results)}\n`);
  }
  if (report.errors > 0) {
    io.err(`${report.errors} verdict(s) were errors; they are reported above and never counted as 0.\n`);
    // The cause, not only the count: a judge that cannot start fails every row the same way.
    const first = firstError(report.results);
    if (first !== undefined)
      io.err(
        `first error (output ${JSON.stringify(first.id)}, criterion ${JSON.stringify(first.criterionId)}): ${first.error}\n`,
      );
  }
}
