import { formatRubricIssue, lintStagedRubric, readRubricDocument } from "@rubric/core";
import { z } from "zod";
import { defineCommand } from "../flags/command.js";
import { switchFlag } from "../flags/flag.js";
import { readText, type CliIO } from "../io.js";

export const validateCommand = defineCommand({
  name: "validate",
  usage: "<file.json|file.jsonl>... [options]",
  description: `Checks rubric files (flat or staged, JSON or JSONL). Prints every problem with its file,
line and path; exits 0 when all files are valid, 1 otherwise. Load-time corrections
(stage rescaling, pass-mark auto-correction) and findings that leave a rubric valid but make
scores unreachable (a gate whose rules cannot reach its pass mark, stage maxima below the
category maximum) are printed as warnings and do not fail validation.`,
  positional: {
    key: "files",
    label: "<file>...",
    description: "rubric files",
    schema: z.array(z.string()).min(1, { error: "needs at least one file" }),
  },
  flags: { json: switchFlag("print a JSON report instead of text") },
  run: ({ files, json }, { io }) => validate(files, { json }, io),
});

interface FileReport {
  readonly file: string;
  readonly valid: boolean;
  readonly rubrics: number;
  readonly flat: number;
  readonly staged: number;
  readonly criteria: number;
  readonly errors: readonly { line?: number; path: string; message: string }[];
  readonly warnings: readonly { line?: number; path: string; message: string }[];
}

export function validate(files: readonly string[], options: { json: boolean }, io: CliIO): number {
  const reports: FileReport[] = files.map((file) => {
    const document = readRubricDocument(readText(file), { source: file });
    const warnings = document.rubrics.flatMap((r) => {
      if (r.kind !== "staged") return [];
      const line = r.line === undefined ? {} : { line: r.line };
      // Paths point into the file: a {task_id, rubric} record nests the rubric one level down.
      const prefix = r.rubric.taskId === undefined ? "" : "rubric.";
      return [
        ...r.corrections.map((c) => ({
          ...line,
          path: prefix + c.path,
          message: `corrected ${c.from} → ${c.to}: ${c.reason}`,
        })),
        ...lintStagedRubric(r.rubric).map((w) => ({ ...line, path: prefix + w.path, message: w.message })),
      ];
    });
    return {
      file,
      valid: document.issues.length === 0,
      rubrics: document.rubrics.length,
      flat: document.rubrics.filter((r) => r.kind === "flat").length,
      staged: document.rubrics.filter((r) => r.kind === "staged").length,
      criteria: document.rubrics.reduce(
        (n, r) =>
          n + (r.kind === "flat" ? r.rubric.criteria.length : r.rubric.stages.reduce((m, s) => m + s.rules.length, 0)),
        0,
      ),
      errors: document.issues.map((i) => ({
        line: i.line,
        path: i.path,
        message: i.message,
      })),
      warnings,
    };
  });
  if (options.json) io.out(`${JSON.stringify({ valid: reports.every((r) => r.valid), files: reports }, null, 2)}\n`);
  else {
    for (const report of reports) {
      for (const e of report.errors) io.err(`error: ${formatRubricIssue({ ...e, source: report.file })}\n`);
      for (const w of report.warnings) io.err(`warning: ${formatRubricIssue({ ...w, source: report.file })}\n`);
      const counts = `${report.rubrics} rubric(s): ${report.staged} staged, ${report.flat} flat, ${report.criteria} criteria${report.warnings.length > 0 ? `, ${report.warnings.length} warning(s)` : ""}`;
      io.out(
        report.valid
          ? `ok    ${report.file}  ${counts}\n`
          : `FAIL  ${report.file}  ${report.errors.length} error(s); ${counts} valid\n`,
      );
    }
  }
  return reports.every((r) => r.valid) ? 0 : 1;
}
