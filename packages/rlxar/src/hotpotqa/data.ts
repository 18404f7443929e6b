import { readInputText } from "@rubric/core/files";
import { createRng, formatRubricIssue, readJsonLines } from "@rubric/core";
import { z } from "zod";
import { RlxarFileError, RlxarInputError } from "../errors.js";

/** One paragraph of a question's pool: its Wikipedia title, its sentences, and its text. */
export interface HotpotParagraph {
  readonly title: string;
  readonly sentences: readonly string[];
  /** The sentences as one paragraph, spaced as the file spaces them: what retrieval indexes and shows. */
  readonly text: string;
}

/** A supporting fact of the dev file: a sentence of a supporting paragraph. */
export interface SupportingFact {
  readonly title: string;
  /** The sentence's index in its paragraph. */
  readonly sentence: number;
}

/**
 * A HotpotQA question in the distractor setting, one form for both files: the dev file's
 * sentence-level `supporting_facts` and the train file's paragraph-level `supporting_titles`
 * both give `supportingTitles`; only the dev file has `supportingFacts`, `type` and `level`.
 */
export interface HotpotQuestion {
  readonly id: string;
  readonly question: string;
  readonly answer: string;
  /** `bridge` or `comparison`, where the file says. */
  readonly type?: string;
  /** `easy`, `medium` or `hard`, where the file says. */
  readonly level?: string;
  /** The closed retrieval pool: the gold paragraphs and the distractors, in the file's order. */
  readonly paragraphs: readonly HotpotParagraph[];
  /** The gold paragraphs' titles, each naming one of `paragraphs`, in first-mention order. */
  readonly supportingTitles: readonly string[];
  readonly supportingFacts?: readonly SupportingFact[];
}

const ParagraphSchema = z.tuple([z.string().min(1), z.array(z.string()).min(1)]);

/**
 * A line of either file. The two schemas differ only in how the gold paragraphs are named, so
 * one object schema with both fields optional reads both, and {@link toQuestion} insists on one:
 * a union would answer a typo in a shared field with two lists of issues, one per branch.
 */
export const HotpotRowSchema = z.object({
  _id: z.string().min(1),
  question: z.string().min(1),
  answer: z.string().min(1),
  // Dev: [title, sentence index] per supporting sentence.
  supporting_facts: z
    .array(z.tuple([z.string(), z.int().min(0)]))
    .min(1)
    .optional(),
  // Train: the two gold paragraphs' titles.
  supporting_titles: z.array(z.string()).min(1).optional(),
  context: z.array(ParagraphSchema).min(1),
  type: z.string().optional(),
  level: z.string().optional(),
});
export type HotpotRow = z.infer<typeof HotpotRowSchema>;

/**
 * Whether a row's sentences carry their own spacing, which decides how its paragraphs' texts are
 * made. ARCO concatenates the sentences as they are. The dev file keeps HotpotQA's original
 * sentence split, where a sentence after the first carries its own leading space (12,477 of
 * 12,608 in `dev.jsonl`; the rest continue a quotation, `Pieridae. "` + `Pieris rapae" is`, or a
 * sentence HotpotQA's splitter cut), so concatenation gives back the Wikipedia paragraph exactly,
 * which is what ARCO's retriever saw. The train file was split on double spaces and its sentences
 * trimmed (none has a leading space), so concatenating them would glue "1956.Although". The test
 * is per row, not per paragraph, because a dev paragraph of two sentences may have only the
 * quotation's continuation after its first: a row whose sentences carry spacing anywhere is
 * concatenated (ARCO's text, to the byte); a row with none is joined with one space.
 */
function carriesSpacing(context: HotpotRow["context"]): boolean {
  return context.some(([, sentences]) => sentences.some((sentence, i) => i > 0 && /^\s/u.test(sentence)));
}

/** Every fault of one row that its schema cannot see: the gold paragraphs must be in its pool. */
function rowProblems(row: HotpotRow): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  const titles = new Set(row.context.map(([title]) => title));
  if (row.supporting_facts === undefined && row.supporting_titles === undefined)
    problems.push({
      path: "(root)",
      message: "needs supporting_facts (the dev file's form) or supporting_titles (the train file's)",
    });
  row.supporting_facts?.forEach(([title], i) => {
    if (!titles.has(title))
      problems.push({
        path: `supporting_facts[${i}][0]`,
        message: `${JSON.stringify(title)} names no paragraph of context`,
      });
  });
  row.supporting_titles?.forEach((title, i) => {
    if (!titles.has(title))
      problems.push({
        path: `supporting_titles[${i}]`,
        message: `${JSON.stringify(title)} names no paragraph of context`,
      });
  });
  return problems;
}

function toQuestion(row: HotpotRow): HotpotQuestion {
  const facts = row.supporting_facts?.map(([title, sentence]) => ({ title, sentence }));
  // A sentence index past its paragraph's end is kept, not refused: the official dev file has a
  // few, and nothing here reads supporting facts below the paragraph.
  const joiner = carriesSpacing(row.context) ? "" : " ";
  const supportingTitles = [...new Set(row.supporting_titles ?? facts?.map((fact) => fact.title) ?? [])];
  return {
    id: row._id,
    question: row.question,
    answer: row.answer,
    type: row.type,
    level: row.level,
    paragraphs: row.context.map(([title, sentences]) => ({ title, sentences, text: sentences.join(joiner) })),
    supportingTitles,
    supportingFacts: facts,
  };
}

/** Which questions of a file to keep. */
export interface HotpotQaSelection {
  /** The first n questions of the file. */
  readonly first?: number;
  /** n questions drawn without replacement by `createRng(seed)`, kept in the file's order. */
  readonly sample?: { readonly size: number; readonly seed: number | string };
}

/**
 * Questions chosen as `loadHotpotQa` chooses them (the first n, or a seeded sample in file
 * order): for a split made after loading, e.g. a held-out part of the training file.
 *
 * @example
 * const tune = selectHotpotQuestions(all, { sample: { size: 69, seed: "arco/split" } });
 */
export function selectHotpotQuestions<T>(questions: readonly T[], selection: HotpotQaSelection): T[] {
  const { first, sample } = selection;
  if (first !== undefined && sample !== undefined)
    throw new RlxarInputError("selection", "give first or sample, not both");
  const count = (n: number, path: string) => {
    if (!Number.isInteger(n) || n < 0) throw new RlxarInputError(path, `expected an integer ≥ 0, got ${n}`);
    return Math.min(n, questions.length);
  };
  if (first !== undefined) return questions.slice(0, count(first, "selection.first"));
  if (sample === undefined) return [...questions];
  const size = count(sample.size, "selection.sample.size");
  // A partial Fisher–Yates over the indices: the first `size` are a uniform sample.
  const rng = createRng(sample.seed);
  const order = questions.map((_, i) => i);
  for (let i = 0; i < size; i++) {
    const j = i + rng.int(order.length - i);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order
    .slice(0, size)
    .sort((a, b) => a - b)
    .map((i) => questions[i]!);
}

/**
 * Reads a HotpotQA JSON-lines text (the dev file's or the train file's schema). Every bad line is
 * listed in one `RlxarFileError` with its number and field path (`line 4: context[2][1]: …`),
 * a gold title that names no paragraph of its pool among them, and so is a repeated `_id`.
 *
 * @example
 * const questions = readHotpotQa(readInputText("dev.jsonl"), "dev.jsonl", { sample: { size: 50, seed: 1 } });
 */
export function readHotpotQa(text: string, source: string, selection: HotpotQaSelection = {}): HotpotQuestion[] {
  const { records, issues } = readJsonLines(text, HotpotRowSchema, { source, idOf: (row) => row._id, idPath: "_id" });
  const problems = [...issues];
  for (const { line, value } of records)
    for (const problem of rowProblems(value)) problems.push({ ...problem, line, source });
  if (problems.length > 0) {
    problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    // The source leads the error's message once; each problem keeps its line and path.
    throw new RlxarFileError(
      source,
      problems.map((problem) => formatRubricIssue({ ...problem, source: undefined })),
    );
  }
  return selectHotpotQuestions(
    records.map((record) => toQuestion(record.value)),
    selection,
  );
}

/**
 * {@link readHotpotQa} on a file, read by core's input-file reader: a regular file of at most
 * 256 MiB, else one of its `file.*` errors naming the file (`/dev/zero` given as `--eval-data`
 * was read to many GB, issue 29 item 24).
 *
 * @example
 * const dev = loadHotpotQa("../shared/data/hotpotqa/dev.jsonl");
 */
export function loadHotpotQa(path: string, selection: HotpotQaSelection = {}): HotpotQuestion[] {
  return readHotpotQa(readInputText(path), path, selection);
}
