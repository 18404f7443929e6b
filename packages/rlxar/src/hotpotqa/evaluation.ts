import { formatRubricIssue, formatZodPath, withoutBom } from "@rubric/core";
import { z } from "zod";
import { RlxarFileError, RlxarInputError } from "../errors.js";
import type { HotpotQuestion } from "./data.js";
import { arcoExactMatch, exactMatch, f1Score } from "./metrics.js";

/**
 * The official predictions file (`hotpot_evaluate_v1.py`'s input): answers by question id, and
 * optionally supporting facts by id, which are read for their shape only (no supporting-fact
 * metric is computed here).
 */
export const HotpotPredictionsSchema = z.object({
  answer: z.record(z.string(), z.string()),
  sp: z.record(z.string(), z.array(z.tuple([z.string(), z.int().min(0)]))).optional(),
});
export type HotpotPredictions = z.infer<typeof HotpotPredictionsSchema>;

/**
 * Reads a predictions file; every fault is listed in one `RlxarFileError` with its field path
 * (`answer.5ae1…: expected string, received number`).
 *
 * @example
 * const predictions = readHotpotPredictions('{"answer": {"5ae143ed55429920d5234360": "1755"}}', "preds.json");
 */
export function readHotpotPredictions(text: string, source: string): HotpotPredictions {
  let value: unknown;
  try {
    value = JSON.parse(withoutBom(text));
  } catch (error) {
    throw new RlxarFileError(source, [`(root): not JSON (${(error as Error).message})`]);
  }
  const parsed = HotpotPredictionsSchema.safeParse(value);
  if (!parsed.success)
    throw new RlxarFileError(
      source,
      parsed.error.issues.map((issue) =>
        formatRubricIssue({ path: formatZodPath(issue.path), message: issue.message }),
      ),
    );
  return parsed.data;
}

/** One question's scores. */
export interface HotpotQuestionScore {
  readonly em: number;
  readonly f1: number;
  /** ARCO's EM variant (a yes/no gold counts when it starts the prediction). */
  readonly arcoEm: number;
}

/** The scores of a predictions file against its questions, as `rubric eval hotpotqa --json` prints them. */
export interface HotpotEvaluation extends HotpotQuestionScore {
  /** Questions scored: every question of the data, predicted or not. */
  readonly count: number;
  readonly perQuestion: Readonly<Record<string, HotpotQuestionScore>>;
  /** Questions without a prediction, scored 0 on every metric (as the official script does). */
  readonly missing: readonly string[];
  /** Predicted ids that name no question of the data; they score nothing and count nowhere. */
  readonly unknown: readonly string[];
}

/**
 * Scores answers against questions as the official script does: the mean over every question of
 * the data, a question without a prediction counting 0; EM and F1 in [0, 1]. ARCO's EM variant
 * comes beside them. Predictions for ids the data lacks are listed in `unknown`, never silently
 * dropped.
 *
 * @example
 * const result = evaluateHotpotQa(loadHotpotQa("dev.jsonl"), { answer: { "5ae143ed55429920d5234360": "1755" } });
 * result.missing.length; // 399
 */
export function evaluateHotpotQa(
  questions: readonly HotpotQuestion[],
  predictions: HotpotPredictions,
): HotpotEvaluation {
  // A mean over no questions would be a number that measured nothing.
  if (questions.length === 0) throw new RlxarInputError("questions", "no questions to score");
  const perQuestion: Record<string, HotpotQuestionScore> = {};
  const missing: string[] = [];
  let em = 0;
  let f1 = 0;
  let arcoEm = 0;
  for (const question of questions) {
    const prediction = Object.hasOwn(predictions.answer, question.id) ? predictions.answer[question.id] : undefined;
    if (prediction === undefined) missing.push(question.id);
    const score =
      prediction === undefined
        ? { em: 0, f1: 0, arcoEm: 0 }
        : {
            em: exactMatch(prediction, question.answer),
            f1: f1Score(prediction, question.answer),
            arcoEm: arcoExactMatch(prediction, question.answer),
          };
    perQuestion[question.id] = score;
    em += score.em;
    f1 += score.f1;
    arcoEm += score.arcoEm;
  }
  const known = new Set(questions.map((question) => question.id));
  const n = questions.length;
  return {
    count: n,
    em: em / n,
    f1: f1 / n,
    arcoEm: arcoEm / n,
    perQuestion,
    missing,
    unknown: Object.keys(predictions.answer).filter((id) => !known.has(id)),
  };
}
