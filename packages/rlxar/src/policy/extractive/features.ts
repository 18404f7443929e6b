import { RlxarInputError } from "../../errors.js";
import type { Candidate, FinishCandidate, SearchCandidate, ViewReading } from "./candidates.js";
import { SPAN_SHAPES } from "./candidates.js";
import { ANSWER_TYPES } from "./question.js";

/**
 * The named features φ(a, view) of the log-linear policy, in weight order. Each is a number in
 * [0, 1] (an indicator or a fraction), so a weight reads directly as "how much this cue moves the
 * logit". Searches and answers use disjoint features, so the retrieval and budget cues of each kind
 * decide between searching and finishing.
 *
 * @example
 * const weights = extractivePolicy().featureWeights();
 * weights["span:bridge"]; // 0 before training
 */
export const FEATURE_NAMES: readonly string[] = [
  // What kind of action, and when.
  "search",
  "search:budgetLeft",
  "search:noneRetrieved",
  "search:oneRetrieved",
  "finish:noneRetrieved",
  "finish:oneRetrieved",
  // Which query.
  "search:question-quoted",
  "search:question-entity",
  "search:question-phrase",
  "search:question-whole",
  "search:paragraph-lead",
  "search:paragraph-entity",
  "search:questionOverlap",
  "search:retrievedOverlap",
  "search:repeat",
  "search:words",
  // Which answer.
  "answer:yes",
  "answer:no",
  "answer:entity",
  "answer:number",
  "answer:phrase",
  "question:yesNo×yes",
  "question:yesNo×no",
  "question:yesNo×span",
  "question:comparison×yes",
  "question:comparison×no",
  ...ANSWER_TYPES.flatMap((type) => SPAN_SHAPES.map((shape) => `type:${type}×${shape}`)),
  "span:inQuestion",
  "span:questionOverlap",
  "question:choice×inQuestion",
  "span:sentenceMatch",
  "span:inFirstParagraph",
  "span:inLastParagraph",
  "span:firstSentence",
  "span:position",
  "span:paragraphLead",
  "span:bridge",
  "span:occurrences",
  "span:words1",
  "span:words2",
  "span:words3",
  "span:words4+",
];

const INDEX = new Map(FEATURE_NAMES.map((name, i) => [name, i]));

/** The position of a named feature in the weight vector. */
export function featureIndex(name: string): number {
  const i = INDEX.get(name);
  if (i === undefined) throw new RlxarInputError("name", `no feature named ${JSON.stringify(name)}`);
  return i;
}

const at = (name: string) => featureIndex(name);
const F = {
  search: at("search"),
  searchBudget: at("search:budgetLeft"),
  searchNone: at("search:noneRetrieved"),
  searchOne: at("search:oneRetrieved"),
  finishNone: at("finish:noneRetrieved"),
  finishOne: at("finish:oneRetrieved"),
  questionOverlap: at("search:questionOverlap"),
  retrievedOverlap: at("search:retrievedOverlap"),
  repeat: at("search:repeat"),
  searchWords: at("search:words"),
  yesNoYes: at("question:yesNo×yes"),
  yesNoNo: at("question:yesNo×no"),
  yesNoSpan: at("question:yesNo×span"),
  comparisonYes: at("question:comparison×yes"),
  comparisonNo: at("question:comparison×no"),
  inQuestion: at("span:inQuestion"),
  spanOverlap: at("span:questionOverlap"),
  choiceInQuestion: at("question:choice×inQuestion"),
  sentenceMatch: at("span:sentenceMatch"),
  firstParagraph: at("span:inFirstParagraph"),
  lastParagraph: at("span:inLastParagraph"),
  firstSentence: at("span:firstSentence"),
  position: at("span:position"),
  lead: at("span:paragraphLead"),
  bridge: at("span:bridge"),
  occurrences: at("span:occurrences"),
};

function searchFeatures(row: Float64Array, c: SearchCandidate, reading: ViewReading): void {
  const retrieved = reading.paragraphs.length;
  row[F.search] = 1;
  row[F.searchBudget] = Math.min(reading.budgetLeft, 3) / 3;
  row[F.searchNone] = retrieved === 0 ? 1 : 0;
  row[F.searchOne] = retrieved === 1 ? 1 : 0;
  row[at(`search:${c.source}`)] = 1;
  row[F.questionOverlap] = c.questionOverlap;
  row[F.retrievedOverlap] = c.retrievedOverlap;
  row[F.repeat] = c.repeat ? 1 : 0;
  row[F.searchWords] = Math.min(c.words, 10) / 10;
}

function finishFeatures(row: Float64Array, c: FinishCandidate, reading: ViewReading): void {
  const q = reading.question;
  const retrieved = reading.paragraphs.length;
  row[F.finishNone] = retrieved === 0 ? 1 : 0;
  row[F.finishOne] = retrieved === 1 ? 1 : 0;
  row[at(`answer:${c.source}`)] = 1;
  if (c.source === "yes" || c.source === "no") {
    if (q.yesNo) row[c.source === "yes" ? F.yesNoYes : F.yesNoNo] = 1;
    if (q.comparison) row[c.source === "yes" ? F.comparisonYes : F.comparisonNo] = 1;
    return;
  }
  if (q.yesNo) row[F.yesNoSpan] = 1;
  if (!q.yesNo) row[at(`type:${q.type}×${c.shape}`)] = 1;
  const inQuestion = c.questionOverlap === 1 ? 1 : 0;
  row[F.inQuestion] = inQuestion;
  row[F.spanOverlap] = c.questionOverlap;
  row[F.choiceInQuestion] = q.choice ? inQuestion : 0;
  const first = c.occurrences[0]!;
  let sentenceMatch = 0;
  const paragraphs = new Set<number>();
  for (const o of c.occurrences) {
    sentenceMatch = Math.max(sentenceMatch, o.sentenceMatch);
    paragraphs.add(o.paragraph);
  }
  row[F.sentenceMatch] = sentenceMatch;
  if (retrieved > 1) {
    row[F.firstParagraph] = paragraphs.has(0) ? 1 : 0;
    row[F.lastParagraph] = paragraphs.has(retrieved - 1) ? 1 : 0;
  }
  row[F.firstSentence] = c.occurrences.some((o) => o.sentence === 0) ? 1 : 0;
  row[F.position] = first.position;
  row[F.lead] = c.occurrences.some((o) => o.lead) ? 1 : 0;
  row[F.bridge] = paragraphs.size > 1 ? 1 : 0;
  // log(1 + n) / log(11): 1 at ten occurrences, so it stays in [0, 1] for almost every span.
  row[F.occurrences] = Math.min(1, Math.log1p(c.occurrences.length) / Math.log(11));
  row[at(c.words >= 4 ? "span:words4+" : `span:words${c.words}`)] = 1;
}

/** φ of every candidate, row-major: `candidates.length` rows of `FEATURE_NAMES.length` values. */
export function featureMatrix(candidates: readonly Candidate[], reading: ViewReading): Float64Array {
  const width = FEATURE_NAMES.length;
  const matrix = new Float64Array(candidates.length * width);
  candidates.forEach((c, i) => {
    const row = matrix.subarray(i * width, (i + 1) * width);
    if (c.kind === "search") searchFeatures(row, c, reading);
    else finishFeatures(row, c, reading);
  });
  return matrix;
}
