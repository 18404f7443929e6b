import type { AgentView } from "../../environment/environment.js";
import { normalizeAnswer } from "../../hotpotqa/metrics.js";
import { queryKey } from "../log-linear/query-key.js";
import { contentKey, contentKeys, questionCues, type QuestionCues } from "./question.js";
import {
  capitalisedRuns,
  capitalisedSpans,
  numberSpans,
  phraseSpans,
  quotedSpans,
  type Span,
  type Word,
  words,
} from "./spans.js";

/** How many candidates of each kind a view gets; the caps keep a step's cost bounded. */
export interface ExtractiveCandidateOptions {
  /** Queries taken from the question (quoted titles, entities, phrases, the whole question). Default 12. */
  readonly maxQuestionQueries?: number;
  /** Queries taken from the retrieved paragraphs' entities, over all paragraphs. Default 16. */
  readonly maxParagraphQueries?: number;
  /** Answer spans (yes and no come on top). Default 240. */
  readonly maxAnswers?: number;
  /** Longest answer span, in words. Default 6. */
  readonly maxSpanWords?: number;
}

/** The caps `extractiveCandidates` and `extractivePolicy` use unless told otherwise. */
export const DEFAULT_CANDIDATE_OPTIONS: Required<ExtractiveCandidateOptions> = {
  maxQuestionQueries: 12,
  maxParagraphQueries: 16,
  maxAnswers: 240,
  maxSpanWords: 6,
};

/** Where a query came from. */
export type QuerySource =
  | "question-quoted"
  | "question-entity"
  | "question-phrase"
  | "question-whole"
  | "paragraph-lead"
  | "paragraph-entity";

/** Where an answer came from; `yes` and `no` are always offered. */
export type AnswerSource = "entity" | "number" | "phrase" | "yes" | "no";

/** One place an answer span occurs in the retrieved text. */
export interface Occurrence {
  /** Which retrieved paragraph (0 = first retrieved). */
  readonly paragraph: number;
  readonly sentence: number;
  /** Word position in the paragraph, 0 (first word) … 1 (last). */
  readonly position: number;
  /** Fraction of the question's content words found in the sentence around it. */
  readonly sentenceMatch: number;
  /** The span starts the paragraph: it names the paragraph's subject. */
  readonly lead: boolean;
}

export interface SearchCandidate {
  readonly kind: "search";
  /** The action as the environment reads it: `Search[query]`. */
  readonly text: string;
  readonly query: string;
  readonly source: QuerySource;
  /** Fraction of the query's content words that are in the question. */
  readonly questionOverlap: number;
  /** Fraction of the query's content words already in the retrieved text. */
  readonly retrievedOverlap: number;
  /** The same query (case- and space-insensitive) was issued before in this episode. */
  readonly repeat: boolean;
  readonly words: number;
}

export interface FinishCandidate {
  readonly kind: "finish";
  /** `Finish[answer]`. */
  readonly text: string;
  readonly answer: string;
  readonly source: AnswerSource;
  /** Every occurrence in the retrieved paragraphs, first first (none for yes and no). */
  readonly occurrences: readonly Occurrence[];
  readonly questionOverlap: number;
  readonly words: number;
  /** The span's shape, for the answer-type cues. */
  readonly shape: SpanShape;
}

export type Candidate = SearchCandidate | FinishCandidate;

/** A span's shape as the answer-type features read it. */
export type SpanShape = "date" | "number" | "name" | "phrase";
export const SPAN_SHAPES: readonly SpanShape[] = ["date", "number", "name", "phrase"];

/** A successful search's paragraph, analysed once. */
export interface RetrievedParagraph {
  readonly text: string;
  readonly words: readonly Word[];
  /** Per sentence, the fraction of the question's content words it holds. */
  readonly sentenceMatch: readonly number[];
}

/** What a view is, read once: the question's cues, the retrieved paragraphs, the queries issued. */
export interface ViewReading {
  readonly question: QuestionCues;
  readonly paragraphs: readonly RetrievedParagraph[];
  readonly issued: ReadonlySet<string>;
  readonly budgetLeft: number;
  readonly mustFinish: boolean;
}

const SEARCH = /^Search\[([\s\S]*)\]$/u;

// A rollout shows the same paragraphs again and again (a task's replicas, later steps of one
// episode), and their words and spans do not depend on the question: read each once. Pure memos,
// so results never depend on what was read before; cleared whole when full to bound memory.
const MEMO_SIZE = 4096;
const wordMemo = new Map<string, readonly Word[]>();
const spanMemo = new Map<string, ParagraphSpans>();

interface ParagraphSpans {
  readonly runs: readonly Span[];
  readonly entities: readonly Span[];
  readonly numbers: readonly Span[];
  readonly phrases: readonly Span[];
}

function remember<T>(memo: Map<string, T>, key: string, make: () => T): T {
  let value = memo.get(key);
  if (value === undefined) {
    if (memo.size >= MEMO_SIZE) memo.clear();
    value = make();
    memo.set(key, value);
  }
  return value;
}

function paragraphWords(text: string): readonly Word[] {
  return remember(wordMemo, text, () => words(text));
}

function paragraphSpans(p: RetrievedParagraph, maxSpanWords: number): ParagraphSpans {
  return remember(spanMemo, `${maxSpanWords}\u0000${p.text}`, () => ({
    runs: capitalisedRuns(p.text, p.words),
    entities: capitalisedSpans(p.text, p.words, maxSpanWords),
    numbers: numberSpans(p.text, p.words),
    phrases: phraseSpans(p.text, p.words, Math.min(3, maxSpanWords)),
  }));
}

export { queryKey };

/**
 * Reads a view: a turn counts as retrieval when its action is a `Search[…]` whose observation is
 * not an "Invalid action" message; the same paragraph seen twice counts once.
 */
export function readView(view: AgentView): ViewReading {
  const question = questionCues(view.task);
  const issued = new Set<string>();
  const texts: string[] = [];
  for (const turn of view.history) {
    const search = SEARCH.exec(turn.action.trim());
    if (search === null) continue;
    issued.add(queryKey(search[1]!));
    const observation = turn.observation.trim();
    if (observation === "" || observation.startsWith("Invalid action") || texts.includes(observation)) continue;
    texts.push(observation);
  }
  const paragraphs = texts.map((text) => {
    const ws = paragraphWords(text);
    const sentences = ws.length === 0 ? 0 : ws[ws.length - 1]!.sentence + 1;
    const found = Array.from({ length: sentences }, () => new Set<string>());
    for (const w of ws) {
      const key = contentKey(w);
      if (question.content.has(key)) found[w.sentence]!.add(key);
    }
    const size = Math.max(1, question.content.size);
    return { text, words: ws, sentenceMatch: found.map((s) => s.size / size) };
  });
  return { question, paragraphs, issued, budgetLeft: view.budgetLeft, mustFinish: view.mustFinish };
}

function overlap(keys: readonly string[], within: (key: string) => boolean): number {
  return keys.length === 0 ? 0 : keys.filter(within).length / keys.length;
}

function shapeOf(ws: readonly Word[], span: Span, source: AnswerSource): SpanShape {
  if (source === "number") {
    return span.end - span.start > 1 || /^\d{3,4}s?$/u.test(ws[span.start]!.text) ? "date" : "number";
  }
  return ws[span.start]!.capitalised ? "name" : "phrase";
}

// Brackets would end the action early when the environment parses it.
const writable = (text: string) => !/[[\]]/u.test(text) && text.trim() !== "";

function searchCandidates(reading: ViewReading, task: string, options: Required<ExtractiveCandidateOptions>) {
  const retrieved = new Set(reading.paragraphs.flatMap((p) => p.words.map(contentKey)));
  const seen = new Set<string>();
  const out: SearchCandidate[] = [];
  const add = (query: string, source: QuerySource, limit: number, count: { n: number }) => {
    const key = queryKey(query);
    if (count.n >= limit || seen.has(key) || !writable(query)) return;
    seen.add(key);
    count.n++;
    const ws = words(query);
    const keys = contentKeys(ws, 0, ws.length);
    out.push({
      kind: "search",
      text: `Search[${query}]`,
      query,
      source,
      questionOverlap: overlap(keys, (k) => reading.question.content.has(k)),
      retrievedOverlap: overlap(keys, (k) => retrieved.has(k)),
      repeat: reading.issued.has(key),
      words: ws.length,
    });
  };
  const q = reading.question;
  const fromQuestion = { n: 0 };
  for (const quoted of quotedSpans(task)) add(quoted, "question-quoted", options.maxQuestionQueries, fromQuestion);
  for (const run of capitalisedRuns(task, q.words))
    add(run.text, "question-entity", options.maxQuestionQueries, fromQuestion);
  // Maximal runs of content words between function words: the question's noun-phrase-like parts.
  for (let a = 0; a < q.words.length; a++) {
    if (q.words[a]!.stopword || q.words[a]!.capitalised) continue;
    let b = a + 1;
    while (b < q.words.length && !q.words[b]!.stopword && !q.words[b - 1]!.breakAfter) b++;
    add(
      task.slice(q.words[a]!.start, q.words[b - 1]!.end),
      "question-phrase",
      options.maxQuestionQueries,
      fromQuestion,
    );
    a = b - 1;
  }
  add(task.replace(/\?\s*$/u, "").trim(), "question-whole", options.maxQuestionQueries, fromQuestion);
  const fromParagraphs = { n: 0 };
  for (const p of reading.paragraphs)
    for (const run of paragraphSpans(p, options.maxSpanWords).runs)
      add(
        run.text,
        run.start === 0 ? "paragraph-lead" : "paragraph-entity",
        options.maxParagraphQueries,
        fromParagraphs,
      );
  return out;
}

function finishCandidates(reading: ViewReading, options: Required<ExtractiveCandidateOptions>): FinishCandidate[] {
  interface Draft {
    answer: string;
    source: AnswerSource;
    shape: SpanShape;
    occurrences: Occurrence[];
    questionOverlap: number;
    words: number;
    order: number;
  }
  const byKey = new Map<string, Draft>();
  // yes and no are reserved: a paragraph's "No" merges into the `no` answer instead of doubling it.
  const reserved = new Set(["yes", "no"]);
  const rank: Record<AnswerSource, number> = { entity: 0, number: 1, phrase: 2, yes: 3, no: 3 };
  const keys = new Map<string, string>();
  reading.paragraphs.forEach((p, pi) => {
    const last = Math.max(1, p.words.length - 1);
    const spans = paragraphSpans(p, options.maxSpanWords);
    const sources: [AnswerSource, readonly Span[]][] = [
      ["entity", spans.entities],
      ["number", spans.numbers],
      ["phrase", spans.phrases],
    ];
    for (const [source, spans] of sources) {
      for (const span of spans) {
        // The same text recurs across sources and paragraphs: normalise each once.
        let key = keys.get(span.text);
        if (key === undefined) {
          key = normalizeAnswer(span.text);
          keys.set(span.text, key);
        }
        if (key === "" || reserved.has(key) || !writable(span.text)) continue;
        const occurrence: Occurrence = {
          paragraph: pi,
          sentence: p.words[span.start]!.sentence,
          position: span.start / last,
          sentenceMatch: p.sentenceMatch[p.words[span.start]!.sentence] ?? 0,
          lead: span.start === 0,
        };
        const found = byKey.get(key);
        if (found !== undefined) {
          // The same span from another source or place: one candidate, every occurrence once.
          if (!found.occurrences.some((o) => o.paragraph === pi && o.position === occurrence.position))
            found.occurrences.push(occurrence);
          continue;
        }
        const content = contentKeys(p.words, span.start, span.end);
        byKey.set(key, {
          answer: span.text,
          source,
          shape: shapeOf(p.words, span, source),
          occurrences: [occurrence],
          questionOverlap: overlap(content, (k) => reading.question.content.has(k)),
          words: span.end - span.start,
          order: byKey.size,
        });
      }
    }
  });
  // Entities, then numbers, then phrases, each in reading order: the cap drops phrases first.
  const spans = [...byKey.values()]
    .sort((a, b) => rank[a.source] - rank[b.source] || a.order - b.order)
    .slice(0, options.maxAnswers);
  const yesNo = (["yes", "no"] as const).map((answer) => ({
    answer,
    source: answer,
    shape: "phrase" as const,
    occurrences: [],
    questionOverlap: 0,
    words: 1,
  }));
  return [...spans, ...yesNo].map(({ answer, source, shape, occurrences, questionOverlap, words }) => ({
    kind: "finish",
    text: `Finish[${answer}]`,
    answer,
    source,
    shape,
    occurrences,
    questionOverlap,
    words,
  }));
}

/**
 * The actions an extractive policy chooses among, from the view alone (never gold information):
 * searches first (from the question, then from the retrieved paragraphs' entities), then answers
 * (spans of the retrieved paragraphs, then `yes` and `no`). Deterministic, deduplicated (queries
 * case-insensitively, answers by HotpotQA's normalisation) and capped. Queries issued before stay
 * in the list, marked `repeat`, so the policy learns what a repeat is worth instead of being told.
 * At `mustFinish` only answers are offered.
 *
 * @example
 * const { candidates } = extractiveCandidates({ taskId: "q1", task: "Who directed Ed Wood?", history: [], budgetLeft: 3, mustFinish: false });
 * candidates[0]?.text; // "Search[Ed Wood]"
 */
export function extractiveCandidates(
  view: AgentView,
  options: ExtractiveCandidateOptions = {},
): { readonly reading: ViewReading; readonly candidates: readonly Candidate[] } {
  const resolved = { ...DEFAULT_CANDIDATE_OPTIONS, ...options };
  const reading = readView(view);
  const searches = view.mustFinish ? [] : searchCandidates(reading, view.task, resolved);
  return { reading, candidates: [...searches, ...finishCandidates(reading, resolved)] };
}
