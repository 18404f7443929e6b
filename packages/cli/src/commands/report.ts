import { lstatSync, statSync } from "node:fs";
import { join } from "node:path";
import { formatZodIssues } from "@rubric/core";
import { cardToMarkdown, parseIntegrityCard } from "@rubric/hackbench";
import {
  ArcaneLlmTableSchema,
  ArcaneTableSchema,
  ArcoGymTableSchema,
  ArcoTableSchema,
  SidecarManagerTableSchema,
  arcaneLlmMarkdown,
  arcaneMarkdown,
  arcoGymMarkdown,
  arcoGymPlots,
  arcoMarkdown,
  arcoPlots,
  arcaneTrainingSvg,
  scalingSvg,
  sidecarManagerMarkdown,
  type ArcaneLlmTable,
  type ArcaneTable,
  type ArcoGymTable,
  type ArcoTable,
  type SidecarManagerTable,
} from "@rubric/repro";
import { buildReport, documentSection, scoresSection, type ReportSection } from "@rubric/report";
import { z } from "zod";
import { defineCommand } from "../flags/command.js";
import { switchFlag, textFlag } from "../flags/flag.js";
import { InputFileError, UsageError, readJson, readText, readTextInside, type CliIO } from "../io.js";
import { prepareResultFiles, writeResultFile } from "../results/result-files.js";

export const reportCommand = defineCommand({
  name: "report",
  usage: "<input>... --out report.html [options]",
  description: `Writes one self-contained HTML page (nothing loaded from the network when it is viewed) from
\`rubric score --outputs --json\` results: every output's total and verdicts (status, score,
rationale; an error verdict is marked as an error, never shown as 0), staged rubrics' stages and
the gate that stopped an output, and a weight control per criterion — moving one recomputes every
total and the ranking in the page with @rubric/core's scoreRubric, no verifier called again.
"Export weights" saves a file that \`rubric score --weights\` reads and that gives the same totals.
Each output is rescored with the rubric when the report is written and must match its recorded
total, so a report never shows results under a rubric they were not scored with.

Also reads a \`rubric repro arcane\` / \`repro arco\` / \`repro arco-gym\` run directory (its tables with the paper's
column, and its plots, all drawn from its table.json, and an ARCANE gym run's training curves
from its runs/seed-<n>/ logs when it has them; a symbolic link or anything but a regular file
there is refused) and a \`rubric hackbench\` card (probes, gains with intervals, exploits,
controls), each checked against its schema first.`,
  positional: {
    key: "inputs",
    label: "<input>...",
    description:
      "score results (rubric score --outputs … --json), a rubric repro run directory, a hackbench card (.json)",
    schema: z.array(z.string()).min(1, { error: "needs at least one input" }),
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
  const sections = await Promise.all(args.inputs.map((input) => readSection(input, rubric)));
  writeResultFile(args.out, buildReport(sections, args.title === undefined ? {} : { title: args.title }), args.force);
  const outputs = sections.reduce((n, s) => n + (s.kind === "scores" ? s.outputs.length : 0), 0);
  io.out(
    `wrote ${args.out}: ${sections.length} section(s) (${sections.map((s) => s.kind).join(", ")}), ${outputs.toLocaleString("en")} scored outputs\n`,
  );
  return 0;
}

/**
 * The reproductions' run directories the report reads, by their table.json's `kind`. Each run's
 * tables and plots are drawn from its checked table.json by the same functions that wrote its
 * table.md and SVG files, so the page has one source: an edited table.md cannot contradict the
 * plots beside it (issue 29 item 10). The one other source is an ARCANE gym run's training logs
 * (`runs/seed-<n>/{sft,gspo}/log.jsonl`, which training.svg is drawn from), each line checked
 * against its schema and nothing read through a link; a run without them (one written before
 * training.svg) has no training figure. No other file of the directory is read.
 */
const RUNS = {
  "arcane-gym": {
    title: "ARCANE in the rubric gym",
    schema: ArcaneTableSchema,
    markdown: (t: unknown) => arcaneMarkdown(t as ArcaneTable),
    figures: async (t: unknown, dir: string) => {
      const table = t as ArcaneTable;
      const figures = [{ caption: "Best-of-N scaling", svg: await scalingSvg(table) }];
      const training = await arcaneTrainingSvg(table, join(dir, "runs"));
      if (training !== undefined) figures.push({ caption: "Training curves", svg: training });
      return figures;
    },
  },
  "arcane-llm": {
    title: "ARCANE with LLM roles",
    schema: ArcaneLlmTableSchema,
    markdown: (t: unknown) => arcaneLlmMarkdown(t as ArcaneLlmTable),
    figures: async () => [],
  },
  "arcane-sidecar-manager": {
    title: "ARCANE with an LLM manager (sidecar)",
    schema: SidecarManagerTableSchema,
    markdown: (t: unknown) => sidecarManagerMarkdown(t as SidecarManagerTable),
    figures: async () => [],
  },
  "arco-hotpotqa": {
    title: "ARCO on HotpotQA",
    schema: ArcoTableSchema,
    markdown: (t: unknown) => arcoMarkdown(t as ArcoTable),
    figures: async (t: unknown) => arcoPlots(t as ArcoTable),
  },
  "arco-gym": {
    title: "ARCO in its gym (a simulation)",
    schema: ArcoGymTableSchema,
    markdown: (t: unknown) => arcoGymMarkdown(t as ArcoGymTable),
    figures: async (t: unknown) => arcoGymPlots(t as ArcoGymTable),
  },
} as const;

/**
 * One input as a report section: a reproduction's run directory (its table.json checked against
 * its package's schema, its tables and plots drawn from it), a hackbench card (checked, then drawn
 * as its Markdown), or score results (rescored against their rubric).
 *
 * A run directory is untrusted input (it may come from someone else): its table.json is read only
 * as a regular file, never through a symbolic link, so that a link to `/proc/self/environ` or
 * `/etc/passwd` cannot put this machine's secrets into the page, and a FIFO or `/dev/zero` there
 * is refused at once instead of hanging the report (issue 29 items 2 and 14).
 */
async function readSection(
  input: string,
  rubric: { readonly text: string; readonly source: string; readonly task?: string } | undefined,
): Promise<ReportSection> {
  // A bigint stat: a number stat of a FIFO confuses Node 20's module resolution (see @rubric/core/files).
  if (statSync(input, { throwIfNoEntry: false, bigint: true })?.isDirectory()) {
    const tableFile = join(input, "table.json");
    if (lstatSync(tableFile, { throwIfNoEntry: false, bigint: true }) === undefined)
      throw new InputFileError(
        `${input}: a directory without table.json; the report reads a \`rubric repro\` run directory`,
      );
    const table = readJson(tableFile, readTextInside);
    const kind = typeof table === "object" && table !== null ? (table as { kind?: unknown }).kind : undefined;
    const run = Object.hasOwn(RUNS, String(kind)) ? RUNS[kind as keyof typeof RUNS] : undefined;
    if (run === undefined)
      throw new InputFileError(
        `${tableFile}: "kind" is ${JSON.stringify(kind)}; expected one of ${Object.keys(RUNS).join(", ")}`,
      );
    const checked = run.schema.safeParse(table);
    if (!checked.success) throw new InputFileError(`${tableFile}: ${formatZodIssues(checked.error, { limit: 3 })}`);
    return documentSection({
      title: run.title,
      source: input,
      markdown: run.markdown(checked.data),
      figures: await run.figures(checked.data, input),
    });
  }
  const value = readJson(input);
  if (
    typeof value === "object" &&
    value !== null &&
    "format" in value &&
    String(value.format).startsWith("rubric-hackbench/")
  )
    return documentSection({
      title: "Reward-hacking integrity card",
      source: input,
      markdown: cardToMarkdown(parseIntegrityCard(value, input)),
    });
  return scoresSection(value, input, rubric);
}
