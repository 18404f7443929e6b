import { statSync } from "node:fs";
import { buildReport, scoresSection, type ReportSection } from "@rubric/report";
import { z } from "zod";
import { defineCommand } from "../flags/command.js";
import { switchFlag, textFlag } from "../flags/flag.js";
import { InputFileError, UsageError, readJson, readText, type CliIO } from "../io.js";
import { prepareResultFiles, writeResultFile } from "../results/result-files.js";

export const reportCommand = defineCommand({
  name: "report",
  usage: "<results.json>... --out report.html [options]",
  description: `Writes one self-contained HTML page (nothing loaded from the network when it is viewed) from
\`rubric score --outputs --json\` results: every output's total and verdicts (status, score,
rationale; an error verdict is marked as an error, never shown as 0), staged rubrics' stages and
the gate that stopped an output, and a weight control per criterion — moving one recomputes every
total and the ranking in the page with @rubric/core's scoreRubric, no verifier called again.
"Export weights" saves a file that \`rubric score --weights\` reads and that gives the same totals.
Each output is rescored with the rubric when the report is written and must match its recorded
total, so a report never shows results under a rubric they were not scored with.`,
  positional: {
    key: "inputs",
    label: "<results.json>...",
    description: "score results (rubric score --outputs … --json > results.json)",
    schema: z.array(z.string()).min(1, { error: "needs at least one results file" }),
  },
  flags: {
    out: textFlag("<file.html>", "where the page goes").required(),
    rubric: textFlag("<file>", "the rubric, for results printed before `score` included it"),
    task: textFlag("<id>", "which rubric of a multi-rubric --rubric file"),
    title: textFlag("<text>", 'the page\'s title (default "Rubric report")'),
    force: switchFlag("replace an existing --out"),
  },
  footer: "Exit codes: 0 written, 1 an input could not be read or does not match its rubric, 2 usage error.",
  run: (args, { io }) => report(args, io),
});

export async function report(
  args: { inputs: string[]; out: string; rubric?: string; task?: string; title?: string; force: boolean },
  io: CliIO,
): Promise<number> {
  if (!args.out.endsWith(".html")) throw new UsageError(`--out names an .html file, got ${JSON.stringify(args.out)}`);
  if (args.task !== undefined && args.rubric === undefined)
    throw new UsageError("--task picks a rubric of --rubric <file>");
  prepareResultFiles([{ path: args.out, what: "a report" }], args.force);
  const rubric =
    args.rubric === undefined
      ? undefined
      : { text: readText(args.rubric), source: args.rubric, ...(args.task === undefined ? {} : { task: args.task }) };
  const sections: ReportSection[] = args.inputs.map((input) => {
    if (statSync(input, { throwIfNoEntry: false })?.isDirectory())
      throw new InputFileError(`${input}: a directory; the report reads score results (a JSON file) so far`);
    return scoresSection(readJson(input), input, rubric);
  });
  writeResultFile(args.out, buildReport(sections, args.title === undefined ? {} : { title: args.title }), args.force);
  const outputs = sections.reduce((n, s) => n + s.outputs.length, 0);
  io.out(`wrote ${args.out}: ${sections.length} section(s), ${outputs.toLocaleString("en")} outputs\n`);
  return 0;
}
