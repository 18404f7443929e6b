import {
  loadRubrics,
  parseVerdictFile,
  parseWeightFile,
  scoreRubric,
  type ErrorPolicy,
  type LoadedRubric,
  type RubricScore,
} from "@rubric/core";
import { InputFileError, UsageError, readJson, readText, type CliIO, errorPolicyFlag } from "../io.js";

export const scoreHelp = `rubric score --rubric <file> (--verdicts <file> | --outputs <file>) [options]

With --verdicts: scores one output from stored verdicts (no verifier is called).
With --outputs: runs the rubric's verifiers on every output and scores each.

  --rubric <file>        rubric file (.json or .jsonl; flat or staged)
  --task <id>            which rubric of a multi-rubric file (GDPval task_id, flat id or category name)
  --verdicts <file>      {"scores": {"<criterionId>": fraction in [0,1]}} or {"verdicts": [...]}
  --weights <file>       {"weights": {"<criterionId>": weight}}: edit weights at test time (--verdicts)
  --outputs <file>       JSONL, one {"id", "input"?, "output", "files"?} per line
  --judge <provider>     model for llm-judge criteria: llama-cpp:<file.gguf> | hf:<model>[@<provider>]
                         | openai-compatible:<baseUrl>#<model>  (keys from HF_TOKEN / OPENAI_API_KEY)
  --judge-mode <mode>    batched (default: one call per output) | per-criterion
  --samples <k>          judge samples per verdict, averaged (default 1)
  --concurrency <n>      verifier calls in flight (default 8)
  --cache <dir>          persistent verdict cache; a rerun of the same work makes no calls
  --ignore-gates         staged rubrics: score every stage, ignoring gates
  --errors-as <policy>   fail | zero | renormalize for error verdicts
                         (default fail with --verdicts, renormalize with --outputs)
  --json                 print JSON

Staged rule ids are s{stage}.r{rule} (0-based) unless the rule carries an "id".
Exit codes: 0 ok; 1 invalid input; 2 usage error, or (--outputs) some verdict was an error.`;

export interface ScoreArgs {
  readonly rubric?: string;
  readonly task?: string;
  readonly verdicts?: string;
  readonly outputs?: string;
  readonly judge?: string;
  readonly judgeMode?: string;
  readonly samples?: string;
  readonly concurrency?: string;
  readonly cache?: string;
  readonly weights?: string;
  readonly ignoreGates: boolean;
  readonly errorsAs?: string;
  readonly json: boolean;
}

function pick(rubrics: LoadedRubric[], task: string | undefined, file: string): LoadedRubric {
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

export async function score(args: ScoreArgs, io: CliIO, isTTY = false): Promise<number> {
  if (!args.rubric) throw new UsageError("score needs --rubric <file>");
  if (args.outputs !== undefined) {
    if (args.verdicts !== undefined || args.weights !== undefined)
      throw new UsageError("--outputs runs the verifiers; it cannot be combined with --verdicts or --weights");
    const rubric = pick(loadRubrics(readText(args.rubric), { source: args.rubric }), args.task, args.rubric);
    // Loaded on demand: the verifiers (Effect, model clients) cost a second of start-up that
    // scoring stored verdicts should not pay.
    const { scoreOutputsCommand } = await import("./score-outputs.js");
    return scoreOutputsCommand(rubric, { ...args, outputs: args.outputs }, io, isTTY);
  }
  if (args.judge !== undefined || args.cache !== undefined) throw new UsageError("--judge and --cache need --outputs");
  if (!args.verdicts) throw new UsageError("score needs --verdicts <file> or --outputs <file>");
  const errorsAs = args.errorsAs === undefined ? undefined : errorPolicyFlag(args.errorsAs, "fail");
  const rubric = pick(loadRubrics(readText(args.rubric), { source: args.rubric }), args.task, args.rubric);
  const verdicts = parseVerdictFile(readJson(args.verdicts), args.verdicts);
  const weights = args.weights === undefined ? undefined : parseWeightFile(readJson(args.weights), args.weights);
  const result = scoreRubric(rubric, verdicts, {
    ignoreGates: args.ignoreGates,
    ...(errorsAs === undefined ? {} : { errorsAs }),
    ...(weights === undefined ? {} : { weights }),
  });
  io.out(args.json ? `${JSON.stringify(scoreToJson(result))}\n` : scoreToText(result));
  return 0;
}
