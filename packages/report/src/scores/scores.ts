import {
  checkWeights,
  CriterionErrorsError,
  ErrorPolicySchema,
  formatZodIssues,
  loadRubrics,
  scoreRubric,
  type ErrorPolicy,
  type FlatRubric,
  type StagedRubric,
  type Verdict,
} from "@rubric/core";
import { z } from "zod";
import { ReportInputError } from "../errors.js";

/** A verdict as `rubric score --outputs --json` prints it. */
const VerdictJsonSchema = z.object({
  criterionId: z.string().min(1),
  score: z.number().min(0).max(1).nullable(),
  status: z.enum(["ok", "error", "skipped"]),
  rationale: z.string().optional(),
  error: z.string().optional(),
});

/** What `rubric score --outputs --json` prints (the rubric too, since the release that added it). */
export const ScoreResultsFileSchema = z.object({
  errorsAs: ErrorPolicySchema,
  errors: z.number().int().min(0),
  ignoreGates: z.boolean().optional(),
  rubric: z.unknown().optional(),
  /** The weight overrides the run scored with (`score --outputs --weights`), by criterion id. */
  weights: z.record(z.string(), z.number().nonnegative()).optional(),
  results: z
    .array(
      z.object({
        id: z.string(),
        total: z.number().nullable(),
        normalized: z.number().nullable(),
        errors: z.number().int().min(0),
        scoreError: z.string().optional(),
        verdicts: z.array(VerdictJsonSchema),
        /** What was scored (results written before text was included have none). */
        input: z.string().optional(),
        output: z.string().optional(),
        /** The names of the output's files. */
        files: z.array(z.string()).optional(),
      }),
    )
    .min(1),
});
export type ScoreResultsFile = z.output<typeof ScoreResultsFileSchema>;

/** One output in a report: its verdicts, and the score the run recorded for it. */
export interface ReportOutput {
  readonly id: string;
  /** What was scored, when the results carry it. */
  readonly input?: string;
  readonly output?: string;
  readonly files?: readonly string[];
  readonly verdicts: readonly z.output<typeof VerdictJsonSchema>[];
  readonly recorded: {
    readonly total: number | null;
    readonly normalized: number | null;
    readonly scoreError?: string;
  };
}

/** A scored set of outputs: what the page ranks, and reweights with core's `scoreRubric`. */
export interface ScoresSection {
  readonly kind: "scores";
  readonly title: string;
  readonly source: string;
  readonly rubricKind: "flat" | "staged";
  readonly rubric: FlatRubric | StagedRubric;
  readonly errorsAs: ErrorPolicy;
  readonly ignoreGates: boolean;
  readonly outputs: readonly ReportOutput[];
}

/**
 * A `score --outputs --json` result as a report section. The rubric is the file's own, or
 * `rubricText` (a rubric file's text, for results printed before the rubric was included). Each
 * output is rescored here with the rubric's weights and must give the total the run recorded: a
 * rubric that is not the one the outputs were scored with is refused, not shown with wrong totals.
 *
 * @throws ReportInputError naming the file and the first problem.
 */
export function scoresSection(
  value: unknown,
  source: string,
  rubric?: { readonly text: string; readonly source: string; readonly task?: string },
): ScoresSection {
  const parsed = ScoreResultsFileSchema.safeParse(value);
  if (!parsed.success) throw new ReportInputError(source, formatZodIssues(parsed.error, { limit: 3 }));
  const file = parsed.data;
  const picked = rubric
    ? pickRubric(rubric.text, rubric.source, rubric.task)
    : file.rubric === undefined
      ? undefined
      : pickRubric(JSON.stringify(file.rubric), `${source} (its rubric)`, undefined);
  if (picked === undefined)
    throw new ReportInputError(
      source,
      "the results hold no rubric (printed by an older `rubric score`): give the rubric with --rubric <file>",
    );
  const ignoreGates = file.ignoreGates ?? false;
  // Scores recorded under weight overrides are the rubric with those weights: the page starts
  // from them, and the totals are checked against them.
  const weights = file.weights;
  // The same kind with that kind's rubric, reweighted (spreading a union loses the pairing).
  const loaded =
    weights === undefined
      ? picked
      : ({ ...picked, rubric: withWeights(picked.rubric, weights, source) } as typeof picked);
  for (const [k, result] of file.results.entries()) {
    let total: number | null;
    try {
      total = scoreRubric(loaded.rubric, result.verdicts as Verdict[], { errorsAs: file.errorsAs, ignoreGates }).total;
    } catch (error) {
      // Under errorsAs "fail" an error verdict leaves the output unscored, as the run recorded it.
      if (error instanceof CriterionErrorsError) total = null;
      else throw new ReportInputError(source, `results[${k}] (${result.id}): ${(error as Error).message}`);
    }
    const agrees =
      total === null
        ? result.total === null
        : result.total !== null && Math.abs(total - result.total) <= 1e-9 * Math.max(1, Math.abs(total));
    if (!agrees)
      throw new ReportInputError(
        source,
        `results[${k}] (${result.id}): the run recorded a total of ${result.total} but the rubric gives ${total}: these results were not scored with this rubric`,
      );
  }
  return {
    kind: "scores",
    title: `Scores: ${loaded.kind === "flat" ? loaded.rubric.id : (loaded.rubric.taskId ?? loaded.rubric.category_name)}`,
    source,
    rubricKind: loaded.kind,
    rubric: loaded.rubric,
    errorsAs: file.errorsAs,
    ignoreGates,
    outputs: file.results.map((r) => ({
      id: r.id,
      ...(r.input === undefined ? {} : { input: r.input }),
      ...(r.output === undefined ? {} : { output: r.output }),
      ...(r.files === undefined ? {} : { files: r.files }),
      verdicts: r.verdicts,
      recorded: {
        total: r.total,
        normalized: r.normalized,
        ...(r.scoreError === undefined ? {} : { scoreError: r.scoreError }),
      },
    })),
  };
}

/** The rubric with some weights replaced (flat: criteria; staged: rules), checked as core checks them. */
function withWeights<R extends FlatRubric | StagedRubric>(
  rubric: R,
  weights: Readonly<Record<string, number>>,
  source: string,
): R {
  try {
    checkWeights(rubric, weights);
  } catch (error) {
    throw new ReportInputError(source, (error as Error).message);
  }
  const weight = (id: string, w: number) => (Object.hasOwn(weights, id) ? weights[id]! : w);
  if ("stages" in rubric)
    return {
      ...rubric,
      stages: rubric.stages.map((s) => ({
        ...s,
        rules: s.rules.map((r) => ({ ...r, weight: weight(r.id, r.weight) })),
      })),
    };
  return { ...rubric, criteria: rubric.criteria.map((c) => ({ ...c, weight: weight(c.id, c.weight) })) };
}

function pickRubric(text: string, source: string, task: string | undefined) {
  let rubrics: ReturnType<typeof loadRubrics>;
  try {
    rubrics = loadRubrics(text, { source });
  } catch (error) {
    throw new ReportInputError(source, (error as Error).message);
  }
  if (rubrics.length === 1 && task === undefined) return rubrics[0]!;
  const found = rubrics.filter((r) =>
    r.kind === "flat" ? r.rubric.id === task : r.rubric.taskId === task || r.rubric.category_name === task,
  );
  if (found.length !== 1)
    throw new ReportInputError(
      source,
      task === undefined
        ? `holds ${rubrics.length} rubrics: name one (--task <id>)`
        : `no single rubric ${JSON.stringify(task)} among its ${rubrics.length}`,
    );
  return found[0]!;
}
