import {
  formatRubricIssue,
  lintRubricIds,
  lintStagedRubric,
  readRubricDocument,
  type LoadedRubric,
} from "@rubric/core";
import { checkVerifierSpecs, createVerifierRegistry, type VerifierRegistry } from "@rubric/verifiers";
import { z } from "zod";
import { defineCommand } from "../flags/command.js";
import { switchFlag } from "../flags/flag.js";
import { readText, type CliIO } from "../io.js";

export const validateCommand = defineCommand({
  name: "validate",
  usage: "<file.json|file.jsonl>... [options]",
  description: `Checks rubric files (flat or staged, JSON or JSONL). Prints every problem with its file,
line and path; exits 0 when all files are valid, 1 otherwise. Valid means scorable: besides the
file's shape, every criterion's verifier kind must be one the toolkit runs and its spec must parse
with that verifier's schema (a regex RE2 cannot run is named here), unless --schema-only; the
judge model for llm-judge criteria is chosen at score time, so only their specs are checked.
Criterion and rule ids that read alike (equal under NFKC and case folding) are warned about.
Load-time corrections
(stage rescaling, pass-mark auto-correction) and findings that leave a rubric valid but make
scores unreachable (a gate whose rules cannot reach its pass mark, stage maxima below the
category maximum) are printed as warnings and do not fail validation.`,
  positional: {
    key: "files",
    label: "<file>...",
    description: "rubric files",
    schema: z.array(z.string()).min(1, { error: "needs at least one file" }),
  },
  flags: {
    json: switchFlag("print a JSON report instead of text"),
    schemaOnly: switchFlag("check the files' shape only, not the verifier kinds and specs"),
  },
  run: ({ files, json, schemaOnly }, { io }) => validate(files, { json, schemaOnly }, io),
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

type Finding = { line?: number; path: string; message: string };

// Paths point into the file: a JSON array puts a rubric under `[i].`, and a {task_id, rubric}
// record nests it one level down.
function pathPrefix(r: LoadedRubric): string {
  const index = r.index === undefined ? "" : `[${r.index}].`;
  return index + (r.kind === "staged" && r.rubric.taskId !== undefined ? "rubric." : "");
}

function warningsOf(r: LoadedRubric): Finding[] {
  const line = r.line === undefined ? {} : { line: r.line };
  const prefix = pathPrefix(r);
  const staged =
    r.kind === "staged"
      ? [
          ...r.corrections.map((c) => ({ path: c.path, message: `corrected ${c.from} → ${c.to}: ${c.reason}` })),
          ...lintStagedRubric(r.rubric),
        ]
      : [];
  return [...staged, ...lintRubricIds(r.rubric)].map((w) => ({ ...line, path: prefix + w.path, message: w.message }));
}

// What `score` would refuse before running anything: a kind without a verifier, a spec its
// verifier's schema rejects.
function unscorable(r: LoadedRubric, registry: VerifierRegistry): Finding[] {
  const line = r.line === undefined ? {} : { line: r.line };
  return checkVerifierSpecs(r.rubric, registry, { judgeChosenLater: true }).flatMap((check) =>
    check.ok ? [] : [{ ...line, path: pathPrefix(r) + check.path, message: check.message }],
  );
}

export function validate(
  files: readonly string[],
  options: { json: boolean; schemaOnly?: boolean },
  io: CliIO,
): number {
  // The registry `score` uses by default: every rule kind and both sandboxes (nothing runs here).
  const registry = options.schemaOnly ? undefined : createVerifierRegistry();
  const reports: FileReport[] = files.map((file) => {
    const document = readRubricDocument(readText(file), { source: file });
    const warnings = document.rubrics.flatMap(warningsOf);
    const errors: Finding[] = [
      ...document.issues.map((i) => ({ line: i.line, path: i.path, message: i.message })),
      ...(registry ? document.rubrics.flatMap((r) => unscorable(r, registry)) : []),
    ];
    return {
      file,
      valid: errors.length === 0,
      rubrics: document.rubrics.length,
      flat: document.rubrics.filter((r) => r.kind === "flat").length,
      staged: document.rubrics.filter((r) => r.kind === "staged").length,
      criteria: document.rubrics.reduce(
        (n, r) =>
          n + (r.kind === "flat" ? r.rubric.criteria.length : r.rubric.stages.reduce((m, s) => m + s.rules.length, 0)),
        0,
      ),
      errors,
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
