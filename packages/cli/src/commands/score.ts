import { ScoreResultsFileSchema } from "@rubric/report";
import {
  checkWeights,
  CriterionErrorsError,
  formatZodIssues,
  loadRubrics,
  parseVerdictFile,
  parseWeightFile,
  scoreRubric,
  VerdictValidationError,
  type LoadedRubric,
  type RubricScore,
  type Verdict,
} from "@rubric/core";
import { type CommandArgs, defineCommand } from "../flags/command.js";
import { switchFlag, textFlag } from "../flags/flag.js";
import { verifierFlags } from "../flags/verifier-flags.js";
import { InputFileError, UsageError, readJson, readText, type CliIO } from "../io.js";
import { EXIT } from "../exit-codes.js";
import { judgeFlagWords, judgeHint } from "../flags/judge-flags.js";
import { printResults } from "./score-results.js";

const scoreFlags = {
  rubric: textFlag("<file>", "rubric file (.json or .jsonl; flat or staged)").required(),
  task: textFlag("<id>", "which rubric of a multi-rubric file (GDPval task_id, flat id or category name)"),
  verdicts: textFlag(
    "<file>",
    '{"scores": {"<criterionId>": fraction in [0,1]}}, {"verdicts": [...]}, or a `score --outputs --json` results file (every output rescored)',
  ),
  weights: textFlag("<file>", '{"weights": {"<criterionId>": weight}}: edit weights at test time'),
  outputs: textFlag("<file>", 'JSONL, one {"id", "input"?, "output", "files"?} per line'),
  filesRoot: textFlag("<dir>", "outputs' files must resolve under this directory (default: the outputs file's)"),
  ...verifierFlags,
  json: switchFlag("print JSON"),
};

export type ScoreArgs = CommandArgs<typeof scoreFlags, never, never>;

export const scoreCommand = defineCommand({
  name: "score",
  usage: "--rubric <file> (--verdicts <file> | --outputs <file>) [options]",
  description: `With --verdicts: scores one output from stored verdicts (no verifier is called).
With --outputs: runs the rubric's verifiers on every output and scores each.`,
  flags: scoreFlags,
  footer: `Staged rule ids are s{stage}.r{rule} (0-based) unless the rule carries an "id".
Exit codes: 0 ok; 1 invalid input; 2 usage error, or (--outputs, or a results file as --verdicts) some verdict was an error.`,
  hint: (error, args) => judgeHint(error, args.judge),
  run: (args, { io, isTTY }) => score(args, io, isTTY),
});

/** The rubric of a file that `--task` names (or its only one). */
export function pick(rubrics: LoadedRubric[], task: string | undefined, file: string): LoadedRubric {
  const name = (r: LoadedRubric) => (r.kind === "flat" ? [r.rubric.id] : [r.rubric.taskId, r.rubric.category_name]);
  if (task === undefined) {
    if (rubrics.length === 1) return rubrics[0]!;
    throw new UsageError(
      `${file} holds ${rubrics.length} rubrics; choose one with --task <id> (e.g. --task ${name(rubrics[0]!)[0]})`,
    );
  }
  const found = rubrics.filter((r) => name(r).includes(task));
  if (found.length === 1) return found[0]!;
  throw new InputFileError(
    found.length === 0
      ? `${file}: no rubric with id ${JSON.stringify(task)}`
      : `${file}: ${found.length} rubrics match ${JSON.stringify(task)}`,
  );
}

/** The JSON the issue promises: staged {total,max,normalized,stages,stoppedAt}; flat {total,max,normalized,unclipped,criteria}. */
export function scoreToJson(score: RubricScore): Record<string, unknown> {
  if (score.kind === "staged")
    return {
      rubric: score.rubricId,
      total: score.total,
      max: score.max,
      normalized: score.normalized,
      stages: score.stages.map((s) => ({ name: s.name, score: s.score, maxPoints: s.maxPoints, passed: s.passed })),
      stoppedAt: score.stoppedAt,
      failedGate: score.failedGate,
    };
  return {
    rubric: score.rubricId,
    total: score.total,
    max: score.max,
    normalized: score.normalized,
    unclipped: score.unclipped,
    criteria: score.criteria.map((c) => ({
      id: c.criterionId,
      weight: c.weight,
      status: c.status,
      fraction: c.fraction,
      contribution: c.contribution,
    })),
  };
}

function fmt(x: number | null): string {
  return x === null ? "—" : Number.isInteger(x) ? String(x) : x.toFixed(3);
}

function scoreToText(score: RubricScore): string {
  const lines: string[] = [];
  if (score.kind === "staged") {
    lines.push(`${score.rubricId}: ${fmt(score.total)} / ${fmt(score.max)} = ${score.normalized.toFixed(4)}`);
    const width = Math.max(5, ...score.stages.map((s) => s.name.length));
    lines.push(`  ${"stage".padEnd(width)}  ${"score".padStart(7)}  ${"max".padStart(7)}  passed`);
    for (const s of score.stages)
      lines.push(
        `  ${s.name.padEnd(width)}  ${fmt(s.score).padStart(7)}  ${fmt(s.maxPoints).padStart(7)}  ${s.passed ? "yes" : s.required ? "NO (gate)" : "no"}`,
      );
    if (score.stoppedAt) lines.push(`  stopped at ${JSON.stringify(score.stoppedAt)}: later stages were not scored`);
  } else {
    lines.push(
      `${score.rubricId}: normalized ${score.normalized.toFixed(4)} (unclipped ${score.unclipped.toFixed(4)}; ${fmt(score.total)} of ${fmt(score.max)} reward weight)`,
    );
    const width = Math.max(9, ...score.criteria.map((c) => c.criterionId.length));
    lines.push(`  ${"criterion".padEnd(width)}  ${"weight".padStart(7)}  ${"verdict".padStart(7)}  contribution`);
    for (const c of score.criteria)
      lines.push(
        `  ${c.criterionId.padEnd(width)}  ${fmt(c.weight).padStart(7)}  ${(c.status === "ok" ? fmt(c.fraction) : c.status).padStart(7)}  ${fmt(c.contribution)}`,
      );
  }
  return `${lines.join("\n")}\n`;
}

function isResultsFile(value: unknown): boolean {
  return typeof value === "object" && value !== null && Array.isArray((value as { results?: unknown }).results);
}

/**
 * `score --verdicts <results file>`: every output of a `score --outputs --json` report rescored
 * from its stored verdicts (no verifier is called), under `--weights`, `--errors-as` and
 * `--ignore-gates` when given and the file's own (its weights included) otherwise; printed as
 * `--outputs` prints.
 */
function rescoreResults(
  rubric: LoadedRubric,
  value: unknown,
  args: ScoreArgs,
  given: Readonly<Record<string, number>> | undefined,
  io: CliIO,
): number {
  const source = args.verdicts!;
  const parsed = ScoreResultsFileSchema.safeParse(value);
  if (!parsed.success) throw new InputFileError(`${source}: ${formatZodIssues(parsed.error, { limit: 3 })}`);
  const file = parsed.data;
  const errorsAs = args.errorsAs ?? file.errorsAs;
  const ignoreGates = args.ignoreGates || (file.ignoreGates ?? false);
  // `--weights` replaces the weights the file was scored with; without it they stay.
  const weights = given ?? file.weights;
  if (weights !== undefined)
    checkWeightIds(rubric, weights, given === undefined ? `${source} (its weights)` : args.weights!);
  const results = file.results.map((result, k) => {
    let scored: RubricScore | undefined;
    let scoreError: string | undefined;
    try {
      scored = scoreRubric(rubric, result.verdicts as Verdict[], {
        errorsAs,
        ignoreGates,
        ...(weights === undefined ? {} : { weights }),
      });
    } catch (error) {
      // Under errorsAs "fail" an error verdict leaves the output unscored, as `--outputs` does.
      if (!(error instanceof CriterionErrorsError))
        throw new InputFileError(`${source}: results[${k}] (${result.id}): ${(error as Error).message}`);
      scoreError = error.message;
    }
    const errors = result.verdicts.filter((v) => v.status === "error").length;
    return {
      id: result.id,
      total: scored?.total ?? null,
      normalized: scored?.normalized ?? null,
      errors,
      ...(scoreError === undefined ? {} : { scoreError }),
      verdicts: result.verdicts,
      errorsAs,
      // The scored text, when the file carries it, stays with its verdicts.
      ...(result.input === undefined ? {} : { input: result.input }),
      ...(result.output === undefined ? {} : { output: result.output }),
      ...(result.files === undefined ? {} : { files: result.files }),
    };
  });
  const report = {
    errorsAs,
    errors: results.reduce((n, r) => n + r.errors, 0),
    ignoreGates,
    rubric: rubric.rubric,
    ...(weights === undefined ? {} : { weights }),
    results,
  };
  printResults(report, args.json, io);
  return report.errors > 0 ? EXIT.errorVerdicts : EXIT.ok;
}

/** Weight overrides that name a criterion the rubric lacks are refused before any verifier runs, naming the file. */
export function checkWeightIds(rubric: LoadedRubric, weights: Readonly<Record<string, number>>, file: string): void {
  try {
    checkWeights(rubric.rubric, weights);
  } catch (error) {
    if (error instanceof VerdictValidationError) throw new InputFileError(`${file}: ${error.message}`);
    throw error;
  }
}

export async function score(args: ScoreArgs, io: CliIO, isTTY = false): Promise<number> {
  if (args.outputs !== undefined) {
    if (args.verdicts !== undefined)
      throw new UsageError("--outputs runs the verifiers; it cannot be combined with --verdicts");
    const rubric = pick(loadRubrics(readText(args.rubric), { source: args.rubric }), args.task, args.rubric);
    const weights = args.weights === undefined ? undefined : parseWeightFile(readJson(args.weights), args.weights);
    if (weights !== undefined) checkWeightIds(rubric, weights, args.weights!);
    // Loaded on demand: the verifiers (Effect, model clients) cost a second of start-up that
    // scoring stored verdicts should not pay.
    const { scoreOutputsCommand } = await import("./score-outputs.js");
    return scoreOutputsCommand(rubric, { ...args, outputs: args.outputs, weights }, io, isTTY);
  }
  const needOutputs = [
    ...judgeFlagWords(args).filter((w) => w.startsWith("--")),
    ...(args.cache === undefined ? [] : ["--cache"]),
    ...(args.filesRoot === undefined ? [] : ["--files-root"]),
    ...(args.maxRuleTimeoutMs === undefined ? [] : ["--max-rule-timeout-ms"]),
    ...(args.maxRuleMemoryMb === undefined ? [] : ["--max-rule-memory-mb"]),
  ];
  if (needOutputs.length > 0) throw new UsageError(`${needOutputs.join(", ")} need --outputs`);
  if (!args.verdicts) throw new UsageError("score needs --verdicts <file> or --outputs <file>");
  const errorsAs = args.errorsAs;
  const rubric = pick(loadRubrics(readText(args.rubric), { source: args.rubric }), args.task, args.rubric);
  const stored = readJson(args.verdicts);
  const weights = args.weights === undefined ? undefined : parseWeightFile(readJson(args.weights), args.weights);
  // A results file (`score --outputs --json`) holds many outputs' verdicts: each is rescored.
  if (isResultsFile(stored)) return rescoreResults(rubric, stored, args, weights, io);
  const verdicts = parseVerdictFile(stored, args.verdicts);
  const result = scoreRubric(rubric, verdicts, {
    ignoreGates: args.ignoreGates,
    errorsAs,
    weights,
  });
  io.out(args.json ? `${JSON.stringify(scoreToJson(result))}\n` : scoreToText(result));
  return 0;
}
