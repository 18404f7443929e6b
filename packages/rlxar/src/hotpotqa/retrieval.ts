import MiniSearch from "minisearch";
import { RlxarInputError } from "../errors.js";
import type { HotpotParagraph } from "./data.js";

/** MiniSearch's word breaks: Unicode spaces, line breaks and punctuation. */
const WORD_BREAKS = /[\n\r\p{Z}\p{P}]+/u;

/** How a question's pool is indexed and scored. */
export interface RetrievalOptions {
  /**
   * Index each paragraph's title beside its text. Default false, as ARCO: its retriever encodes
   * the paragraphs' sentences only, so a query naming an entity finds its paragraph through the
   * text's words, never through the title.
   */
  readonly indexTitles?: boolean;
  /** BM25's term-frequency saturation k₁ (default 1.2). */
  readonly k?: number;
  /** BM25's length normalisation b (default 0.75, Robertson's). */
  readonly b?: number;
}

/** The paragraph a search found. */
export interface ParagraphHit {
  /** Its place in the pool (the file's order). */
  readonly index: number;
  readonly paragraph: HotpotParagraph;
  /** Its BM25 score (> 0: a hit always shares a term with the query). */
  readonly score: number;
}

/** A question's pool, indexed once, searched by every Search of its episodes. */
export interface ParagraphIndex {
  /** The best paragraph for the query, or undefined when no paragraph shares a term with it. */
  search(query: string): ParagraphHit | undefined;
}

/**
 * Indexes a closed pool of paragraphs for top-1 BM25 retrieval, the lexical stand-in for ARCO's
 * dense retriever (SimCSE-RoBERTa [CLS] cosine over the same ten paragraphs, titles excluded).
 *
 * The index is MiniSearch's: words split at Unicode spaces and punctuation and lower-cased, with
 * no stemming and no stop words; its IDF is Lucene's, ln(1 + (N − n + ½)/(n + ½)), which stays
 * positive even for a word in every paragraph. Two settings make its score Okapi BM25 rather
 * than MiniSearch's default: `d = 0` turns off BM25+'s lower bound, and MiniSearch's multiplying
 * a document's score by the number of query terms it matched is divided out here. One difference
 * from the textbook stays: MiniSearch measures a paragraph's length (for b's normalisation) in
 * distinct words as written, not in words, so a paragraph that repeats itself is not penalised
 * for the repetition.
 *
 * Where the two retrievers part: a dense retriever always returns its nearest paragraph; BM25 has
 * nothing to rank when no paragraph shares a word with the query, and then `search` returns
 * undefined (the environment says so to the agent rather than hand it an arbitrary paragraph).
 * Ties (equal scores, to the bit) go to the paragraph that comes first in the pool.
 *
 * @example
 * const index = indexParagraphs(question.paragraphs);
 * index.search("Moscow State University founded")?.paragraph.title; // "Moscow State University"
 */
export function indexParagraphs(
  paragraphs: readonly HotpotParagraph[],
  options: RetrievalOptions = {},
): ParagraphIndex {
  const k = options.k ?? 1.2;
  const b = options.b ?? 0.75;
  if (!(k > 0 && Number.isFinite(k))) throw new RlxarInputError("options.k", `expected a number > 0, got ${k}`);
  if (!(b >= 0 && b <= 1)) throw new RlxarInputError("options.b", `expected a number in [0, 1], got ${b}`);
  const fields = options.indexTitles === true ? ["text", "title"] : ["text"];
  const index = new MiniSearch<{ id: number; text: string; title: string }>({
    fields,
    // MiniSearch's own split, less the empty strings it leaves at a paragraph's ends: it counts
    // those in the field's length, which would skew length normalisation.
    tokenize: (text) => text.split(WORD_BREAKS).filter((token) => token !== ""),
    searchOptions: { bm25: { k, b, d: 0 }, prefix: false, fuzzy: false, combineWith: "OR" },
  });
  index.addAll(paragraphs.map((paragraph, id) => ({ id, text: paragraph.text, title: paragraph.title })));
  return {
    search(query) {
      let best: ParagraphHit | undefined;
      for (const result of index.search(query)) {
        const score = result.score / result.queryTerms.length;
        const id = result.id as number;
        if (best === undefined || score > best.score || (score === best.score && id < best.index))
          best = { index: id, paragraph: paragraphs[id]!, score };
      }
      return best;
    },
  };
}
