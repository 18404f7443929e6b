/**
 * Words and the spans of them an extractive policy may name: capitalised runs (entities and
 * titles), quoted spans, numbers and dates, and phrase-like n-grams. Everything works on
 * whitespace tokens of the raw text, so a span's text is the source's own characters, and a
 * double space (HotpotQA's sentence joints) changes nothing.
 */

/** One whitespace token, stripped of the punctuation around it. */
export interface Word {
  /** The token without its surrounding quotes, brackets and trailing punctuation. */
  readonly text: string;
  readonly lower: string;
  /** Offsets of `text` in the source. */
  readonly start: number;
  readonly end: number;
  /** Starts with an upper-case letter (an entity or title word, or a sentence's first word). */
  readonly capitalised: boolean;
  readonly stopword: boolean;
  /** A span never runs across this word's end: it ended a clause (`,;:`), a sentence, or a quote. */
  readonly breakAfter: boolean;
  /** A comma follows: "Marion, South Australia" joins two names across it. */
  readonly commaAfter: boolean;
  /** Index of the sentence (split at `.!?` ends) this word is in. */
  readonly sentence: number;
}

/** A run of words, as text and as word indices (end exclusive). */
export interface Span {
  readonly text: string;
  readonly start: number;
  readonly end: number;
}

// A compact English function-word list: words that carry no entity or content on their own.
const STOPWORDS = new Set(
  (
    "a an the of in on at to for from by with about as into onto over under after before between " +
    "during through and or but nor so yet not no is are was were be been being am do does did done " +
    "has have had having will would shall should can could may might must this that these those " +
    "it its it's he him his she her hers they them their theirs we us our you your i me my mine " +
    "who whom whose which what when where why how whether than then there here also both either " +
    "neither each any all some such same other another more most many much few one's own very too " +
    "if while because since until though although"
  ).split(" "),
);

/** Lower-case words that may sit inside a capitalised name: "Kiss and Tell", "University of Oxford". */
const CONNECTORS = new Set("of the a an and de la le von van der du del da dos for & to with on in at".split(" "));

export const MONTHS = new Set(
  "january february march april may june july august september october november december".split(" "),
);

const NUMBER_WORDS = new Set(
  "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty hundred thousand million billion".split(
    " ",
  ),
);

const ABBREVIATIONS = new Set(
  "mr mrs ms dr st jr sr mt ft co inc ltd corp no vol gen col lt sgt capt rev prof vs etc".split(" "),
);

const LEADING = /^[\s"'“”‘’«»([{]+/u;
const TRAILING = /[\s"'“”‘’«»)\]},.;:!?]+$/u;

export function isStopword(lower: string): boolean {
  return STOPWORDS.has(lower);
}

/** A word that reads as a number: digits (1755, 3,677, 1990s, 12th) or a number word. */
export function isNumberWord(word: Word): boolean {
  return /\d/u.test(word.text) || NUMBER_WORDS.has(word.lower);
}

// Sentences joined without a space ("…in 1956.Although it…") still end where two letters, a digit
// (or a bracket) and a period meet a capitalised word. "U.S.Army" stays one word; "St.Louis"
// splits, but a short capitalised word's period ends no sentence (see below).
const GLUED = /(?<=(?:[\p{L}\d]{2}|[\d)])["”’]?[.!?]["”’]?)(?=\p{Lu}(?:\p{Ll}|$))/gu;

/** Whitespace tokens of `text`, glued sentences split apart, as `{ 0: token, index }`. */
function* tokens(text: string): Generator<{ readonly 0: string; readonly index: number }> {
  for (const match of text.matchAll(/\S+/gu)) {
    // Most tokens have no inner sentence end: skip the look-behind search for them.
    if (!/[.!?]["”’]?\p{Lu}/u.test(match[0])) {
      yield match;
      continue;
    }
    let from = 0;
    for (const cut of match[0].matchAll(GLUED)) {
      yield { 0: match[0].slice(from, cut.index), index: match.index + from };
      from = cut.index;
    }
    yield { 0: match[0].slice(from), index: match.index + from };
  }
}

/** The words of `text`, with sentence indices and the clause breaks spans must respect. */
export function words(text: string): Word[] {
  const out: Word[] = [];
  let sentence = 0;
  for (const match of tokens(text)) {
    const raw = match[0];
    const lead = raw.match(LEADING)?.[0].length ?? 0;
    const trail = raw.slice(lead).match(TRAILING)?.[0] ?? "";
    const stripped = raw.slice(lead, raw.length - trail.length);
    if (stripped === "" || (stripped !== "&" && /^[^\p{L}\p{N}]+$/u.test(stripped))) {
      // A lone dash or quote: it still breaks the span before it.
      if (out.length > 0) out[out.length - 1] = { ...out[out.length - 1]!, breakAfter: true };
      continue;
    }
    // An opening quote or bracket starts a new span: "Meet Corliss Archer" is not part of the word before it.
    if (lead > 0 && out.length > 0) out[out.length - 1] = { ...out[out.length - 1]!, breakAfter: true };
    const start = match.index + lead;
    const lower = stripped.toLowerCase();
    // An initial ("C. J. Cherryh"), a dotted acronym ("U.S.") or a title ("St.", "Jr.") ends with a
    // period without ending the sentence; any other word ending in "." does.
    const abbreviation = /^\p{L}$/u.test(stripped) || stripped.includes(".") || ABBREVIATIONS.has(lower);
    const period = /[.!?]/u.test(trail) && !(trail === "." && abbreviation);
    out.push({
      text: stripped,
      lower,
      start,
      end: start + stripped.length,
      capitalised: /^\p{Lu}/u.test(stripped),
      stopword: STOPWORDS.has(lower),
      breakAfter: period || /[,;:"”»)\]]/u.test(trail),
      commaAfter: trail === ",",
      sentence,
    });
    if (period) sentence++;
  }
  return out;
}

function spanOf(text: string, ws: readonly Word[], start: number, end: number): Span {
  return { text: text.slice(ws[start]!.start, ws[end - 1]!.end), start, end };
}

/** Whether a span may continue from word i to word i + 1. */
function joined(ws: readonly Word[], i: number): boolean {
  return !ws[i]!.breakAfter && ws[i]!.sentence === ws[i + 1]!.sentence;
}

/**
 * Maximal runs of capitalised words, with connectors ("of", "and", "the") inside when a
 * capitalised word follows: "Kiss and Tell", "Chief of Protocol of the United States". A run that
 * is a single function word ("The", "He") is no entity.
 */
export function capitalisedRuns(text: string, ws: readonly Word[]): Span[] {
  const out: Span[] = [];
  let i = 0;
  while (i < ws.length) {
    if (!ws[i]!.capitalised) {
      i++;
      continue;
    }
    let end = i + 1;
    while (end < ws.length && joined(ws, end - 1)) {
      const next = ws[end]!;
      if (next.capitalised) end++;
      else if (CONNECTORS.has(next.lower)) {
        let k = end;
        while (k < ws.length && CONNECTORS.has(ws[k]!.lower) && joined(ws, k)) k++;
        if (k < ws.length && ws[k]!.capitalised && joined(ws, k - 1)) end = k + 1;
        else break;
      } else break;
    }
    // A sentence's first word is capitalised whatever it is: "Were Scott Derrickson …" names Scott Derrickson.
    let from = i;
    while (from < end && ws[from]!.stopword) from++;
    while (from < end && !ws[from]!.capitalised) from++;
    if (from < end) out.push(spanOf(text, ws, from, end));
    i = end;
  }
  return out;
}

/**
 * Every part of a capitalised run that starts and ends on a capitalised word, up to `maxWords`
 * words. The parts matter because a name's longer context ("Chief of Protocol of the United
 * States") usually holds the answer ("Chief of Protocol").
 */
export function capitalisedSpans(text: string, ws: readonly Word[], maxWords = 6): Span[] {
  const out: Span[] = [];
  const runs = capitalisedRuns(text, ws);
  runs.forEach((run, r) => {
    // A place is often written "City, Region": the run, a comma, and the next run right after it.
    const next = runs[r + 1];
    if (next !== undefined && next.start === run.end && ws[run.end - 1]!.commaAfter && next.end - run.start <= maxWords)
      out.push(spanOf(text, ws, run.start, next.end));
  });
  for (const run of runs) {
    for (let a = run.start; a < run.end; a++) {
      if (!ws[a]!.capitalised) continue;
      for (let b = a + 1; b <= Math.min(run.end, a + maxWords); b++) {
        if (!ws[b - 1]!.capitalised || (b - a === 1 && ws[a]!.stopword)) continue;
        out.push(spanOf(text, ws, a, b));
      }
    }
  }
  return out;
}

/** Text between double quotes ("…" or “…”): a title the question names, searched as written. */
export function quotedSpans(text: string): string[] {
  return [...text.matchAll(/"([^"]{2,80})"|“([^”]{2,80})”/gu)].map((m) => (m[1] ?? m[2]!).trim()).filter(Boolean);
}

/**
 * Numbers and dates: every number word alone, a number with the word after it ("12 years",
 * "3,677 seated"), and dates written "January 25, 1755", "25 January 1755" or "January 1755".
 */
export function numberSpans(text: string, ws: readonly Word[]): Span[] {
  const out: Span[] = [];
  const month = (i: number) => i < ws.length && MONTHS.has(ws[i]!.lower);
  const digits = (i: number) => i < ws.length && /^\d/u.test(ws[i]!.text);
  for (let i = 0; i < ws.length; i++) {
    if (isNumberWord(ws[i]!)) {
      out.push(spanOf(text, ws, i, i + 1));
      if (i + 1 < ws.length && joined(ws, i) && !ws[i + 1]!.stopword && !ws[i + 1]!.capitalised)
        out.push(spanOf(text, ws, i, i + 2));
    }
    if (month(i)) {
      // Month D, YYYY — the comma after D is a clause break for other spans, not for a date.
      if (digits(i + 1) && digits(i + 2) && ws[i + 1]!.sentence === ws[i + 2]!.sentence)
        out.push(spanOf(text, ws, i, i + 3));
      if (digits(i + 1)) out.push(spanOf(text, ws, i, i + 2));
      if (i > 0 && digits(i - 1) && digits(i + 1) && joined(ws, i - 1)) out.push(spanOf(text, ws, i - 1, i + 2));
    }
  }
  return out;
}

/**
 * Phrase-like n-grams: runs of 1 … `maxWords` words inside one clause that start and end on a
 * content word (not a function word), so "comedy film" and "chief of staff" are kept and
 * "of the" is not — a cheap stand-in for noun phrases without a tagger.
 */
export function phraseSpans(text: string, ws: readonly Word[], maxWords = 3): Span[] {
  const out: Span[] = [];
  for (let a = 0; a < ws.length; a++) {
    if (ws[a]!.stopword) continue;
    for (let b = a + 1; b <= Math.min(ws.length, a + maxWords); b++) {
      if (b > a + 1 && !joined(ws, b - 2)) break;
      if (!ws[b - 1]!.stopword) out.push(spanOf(text, ws, a, b));
    }
  }
  return out;
}
