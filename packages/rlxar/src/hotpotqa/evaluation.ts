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
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((issue) => ({ path: issue.path, message: issue.message }));
  // zod's record leaves out a key named "__proto__", which is an id like any other here: the maps
  // are rebuilt from the file's own keys, each value checked as the schema checks it.
  const raw = (parsed.success ? value : {}) as { answer: object; sp?: object };
  const answer = ownRecord(raw.answer, HotpotPredictionsSchema.shape.answer.valueType, "answer", problems);
  const sp =
    raw.sp === undefined
      ? undefined
      : ownRecord(raw.sp, HotpotPredictionsSchema.shape.sp.unwrap().valueType, "sp", problems);
  if (problems.length > 0)
    throw new RlxarFileError(
      source,
      problems.map((issue) => formatRubricIssue({ path: formatZodPath(issue.path), message: issue.message })),
    );
  return { answer, sp };
}

/** A map of the object's own keys (any id, `__proto__` included) whose values `item` accepts. */
function ownRecord<T>(
  raw: object | undefined,
  item: z.ZodType<T>,
  field: string,
  problems: { path: PropertyKey[]; message: string }[],
): Record<string, T> {
  const out = Object.create(null) as Record<string, T>;
  for (const [key, entry] of Object.entries(raw ?? {})) {
    const checked = item.safeParse(entry);
    if (checked.success) out[key] = checked.data;
    // The schema has reported every other key's fault already; only the one it skipped is new.
    else if (key === "__proto__")
      for (const issue of checked.error.issues)
        problems.push({ path: [field, key, ...issue.path], message: issue.message });
  }
  return out;
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
  // Ids are data: a question whose id is "__proto__" is a key, never the object's prototype.
  const perQuestion = Object.create(null) as Record<string, HotpotQuestionScore>;
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
