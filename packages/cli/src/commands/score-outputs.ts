import { dirname, resolve } from "node:path";
import { formatRubricIssue, mean, quantile, type ErrorPolicy, type LoadedRubric } from "@rubric/core";
import {
  createVerifierRegistry,
  fileCache,
  llmJudge,
  scoreOutputs,
  scoredOutputToJson,
  type OutputToScore,
  type ScoredOutput,
} from "@rubric/verifiers";
import { z } from "zod";
import { EXIT } from "../exit-codes.js";
import { ruleLimitsOf } from "../flags/rule-limits.js";
import { InputFileError, readJsonLinesFile, type CliIO } from "../io.js";
import { progressBar } from "../progress.js";
import { judgeModel, type JudgeArgs } from "./judge.js";

/** One line of an outputs file. */
const OutputLineSchema = z.strictObject({
  id: z.union([z.string().min(1), z.number().int()]).transform(String),
  input: z.string().optional(),
  output: z.string(),
  /** Files the output consists of, visible read-only to code verifiers; paths relative to the outputs file. */
  files: z
    .array(z.strictObject({ name: z.string().min(1), path: z.string().min(1), mimeType: z.string().optional() }))
    .optional(),
});

/** What `score --outputs` uses of the score command's options (parsed by its declaration in score.ts). */
export interface ScoreOutputsArgs extends JudgeArgs {
  readonly outputs: string;
  readonly judgeMode: "batched" | "per-criterion" | undefined;
  readonly samples: number;
  readonly concurrency: number;
  readonly cache: string | undefined;
  readonly errorsAs: ErrorPolicy | undefined;
  readonly ignoreGates: boolean;
  readonly json: boolean;
  readonly filesRoot: string | undefined;
  readonly maxRuleTimeoutMs: number | undefined;
  readonly maxRuleMemoryMb: number | undefined;
  /** Weight overrides by criterion id (`--weights`), already checked against the rubric. */
  readonly weights: Readonly<Record<string, number>> | undefined;
}

async function readOutputs(path: string): Promise<OutputToScore[]> {
  const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/") + 1) : "";
  // Streamed: an outputs file may be far larger than one string can hold.
  const { records, issues } = await readJsonLinesFile(path, OutputLineSchema, { idOf: (output) => output.id });
  // File paths in a line are relative to the outputs file.
  const outputs: OutputToScore[] = records.map(({ value: { files, ...rest } }) => ({
    ...rest,
    ...(files ? { files: files.map((f) => ({ ...f, path: resolve(dir, f.path) })) } : {}),
  }));
  if (issues.length > 0)
    throw new InputFileError(
      `${path}: ${issues.length} problem(s)\n${issues.map((i) => `  ${formatRubricIssue(i)}`).join("\n")}`,
    );
  if (outputs.length === 0)
    throw new InputFileError(`${path}: no outputs (expected one {"id", "input"?, "output"} per line)`);
  return outputs;
}

/**
 * The report `score --outputs --json` prints. Every result carries the error policy it was
 * scored under, so a renormalised score is never read as a complete one.
 */
export function resultsToJson(
  results: readonly ScoredOutput[],
  errorsAs: ErrorPolicy,
  scoredWith?: {
    readonly rubric: LoadedRubric["rubric"];
    readonly ignoreGates: boolean;
    readonly weights?: Readonly<Record<string, number>>;
  },
) {
  return {
    errorsAs,
    errors: results.reduce((n, r) => n + r.errors, 0),
    // The rubric the outputs were scored with (and whether gates counted), so that the results can
    // be rescored and reweighted later — `rubric report` reads them — without guessing which rubric.
    ...(scoredWith === undefined ? {} : { ignoreGates: scoredWith.ignoreGates, rubric: scoredWith.rubric }),
    // The weight overrides the scores were computed with, so the file says what it measured.
    ...(scoredWith?.weights === undefined ? {} : { weights: scoredWith.weights }),
    results: results.map((r) => ({ ...scoredOutputToJson(r), errorsAs })),
  };
}

type ResultRow = ReturnType<typeof resultsToJson>["results"][number];

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
 * `rubric score --outputs`: runs the verifiers on every output and prints their scores.
 * Error verdicts are reported and leave the exit code at 2. By default (`--errors-as fail`) an
 * output with an error verdict is unscored: a judge that is down must not let an output score 1 on
 * its rule criteria alone. `--errors-as renormalize` scores over the criteria that could be
 * judged, marked in every result; an error is never counted as 0.
 */
export async function scoreOutputsCommand(
  rubric: LoadedRubric,
  args: ScoreOutputsArgs,
  io: CliIO,
  isTTY: boolean,
): Promise<number> {
  const errorsAs: ErrorPolicy = args.errorsAs ?? "fail";
  const outputs = await readOutputs(args.outputs);
  const model = judgeModel(args);
  try {
    const registry = createVerifierRegistry({
      ruleLimits: ruleLimitsOf(args),
      ...(model === undefined
        ? {}
        : { judge: llmJudge(model, { mode: args.judgeMode ?? "batched", samples: args.samples }) }),
    });
    const bar = progressBar(io, isTTY);
    const results = await scoreOutputs(rubric.rubric, outputs, {
      registry,
      concurrency: args.concurrency,
      errorsAs,
      ignoreGates: args.ignoreGates,
      ...(args.weights === undefined ? {} : { weights: args.weights }),
      // The outputs file names the files, so whoever wrote it decides what gets mounted: keep it to its directory.
      filesRoot: args.filesRoot ?? dirname(args.outputs),
      ...(args.cache === undefined ? {} : { cache: fileCache(args.cache) }),
      onProgress: (done, total) => bar.update(done, total, "outputs"),
    }).finally(() => bar.done());
    const report = resultsToJson(results, errorsAs, {
      rubric: rubric.rubric,
      ignoreGates: args.ignoreGates,
      ...(args.weights === undefined ? {} : { weights: args.weights }),
    });
    if (args.json) io.out(`${JSON.stringify(report)}\n`);
    else {
      const width = Math.max(2, ...results.map((r) => r.id.length));
      io.out(`${"id".padEnd(width)}  normalized  errors\n`);
      for (const r of report.results) {
        const score = r.normalized === null ? "—" : r.normalized.toFixed(4);
        // A renormalised score left out the criteria whose verdicts were errors: say so on its line.
        const marked = r.errors > 0 && r.normalized !== null ? `  (${errorsAs}: ${r.errors} criteria left out)` : "";
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
    return report.errors > 0 ? EXIT.errorVerdicts : EXIT.ok;
  } finally {
    await (model as { dispose?: () => Promise<void> } | undefined)?.dispose?.();
  }
}
