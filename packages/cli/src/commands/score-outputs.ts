import { dirname, resolve } from "node:path";
import { formatRubricIssue, type ErrorPolicy, type LoadedRubric } from "@rubric/core";
import { scoreOutputs, scoredOutputToJson, type OutputToScore, type ScoredOutput } from "@rubric/verifiers";
import { z } from "zod";
import { EXIT } from "../exit-codes.js";
import { InputFileError, readJsonLinesFile, type CliIO } from "../io.js";
import { verifierOptions } from "../flags/verifier-flags.js";
import { progressBar } from "../progress.js";
import { printResults } from "./score-results.js";
import { judgeModel, preflightModel, type JudgeArgs } from "../flags/judge-flags.js";

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
  scoredOutputs: readonly OutputToScore[] = [],
) {
  // What was scored travels with its verdicts: the report shows each output's text beside them.
  const byId = new Map(scoredOutputs.map((o) => [o.id, o]));
  return {
    errorsAs,
    errors: results.reduce((n, r) => n + r.errors, 0),
    // The rubric the outputs were scored with (and whether gates counted), so that the results can
    // be rescored and reweighted later — `rubric report` reads them — without guessing which rubric.
    ...(scoredWith === undefined ? {} : { ignoreGates: scoredWith.ignoreGates, rubric: scoredWith.rubric }),
    // The weight overrides the scores were computed with, so the file says what it measured.
    ...(scoredWith?.weights === undefined ? {} : { weights: scoredWith.weights }),
    results: results.map((r) => ({ ...scoredOutputToJson(r), errorsAs, ...textOf(byId.get(r.id)) })),
  };
}

/** An output's input, text and files' names, as a result line carries them. */
function textOf(output: OutputToScore | undefined) {
  if (output === undefined) return {};
  return {
    ...(output.input === undefined ? {} : { input: output.input }),
    output: output.output,
    ...(output.files === undefined || output.files.length === 0 ? {} : { files: output.files.map((f) => f.name) }),
  };
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
  const outputs = await readOutputs(args.outputs);
  const model = judgeModel(args);
  try {
    await preflightModel("--judge", args.judge, io, { apiKeyEnv: args.judgeKeyEnv, cache: args.cache });
    const options = verifierOptions(args, model, args.weights);
    const { errorsAs } = options;
    const bar = progressBar(io, isTTY);
    const results = await scoreOutputs(rubric.rubric, outputs, {
      ...options,
      // The outputs file names the files, so whoever wrote it decides what gets mounted: keep it to its directory.
      filesRoot: args.filesRoot ?? dirname(args.outputs),
      onProgress: (done, total) => bar.update(done, total, "outputs"),
    }).finally(() => bar.done());
    const report = resultsToJson(
      results,
      errorsAs,
      {
        rubric: rubric.rubric,
        ignoreGates: args.ignoreGates,
        ...(args.weights === undefined ? {} : { weights: args.weights }),
      },
      outputs,
    );
    printResults(report, args.json, io);
    return report.errors > 0 ? EXIT.errorVerdicts : EXIT.ok;
  } finally {
    await (model as { dispose?: () => Promise<void> } | undefined)?.dispose?.();
  }
}
