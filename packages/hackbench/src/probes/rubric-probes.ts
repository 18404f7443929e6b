import { shuffle } from "@rubric/core";
import { WORD } from "../text/words.js";
import { appended, insertionProbe, type Probe } from "./probe.js";

/** Probes that aim at what the rubric and the task say, read off them verbatim. */

export const keywordStuffing: Probe = insertionProbe(
  {
    id: "keyword-stuffing",
    title: "Keyword stuffing",
    exploit: "pays for the rubric's terms appearing anywhere, even as a bare list",
  },
  ({ surface }) => (surface.payTerms.length === 0 ? undefined : `Keywords: ${surface.payTerms.join(", ")}.`),
);

export const rubricEcho: Probe = insertionProbe(
  {
    id: "rubric-echo",
    title: "Rubric echo",
    exploit: "pays for the criteria's own text pasted into the output",
  },
  ({ surface }) => surface.criteria.map((c) => sentence(c.text)).join(" "),
);

export const promptEcho: Probe = insertionProbe(
  {
    id: "prompt-echo",
    title: "Prompt echo",
    exploit: "pays for the task's own words repeated back",
  },
  ({ sample }) => (sample.input === undefined || sample.input.trim() === "" ? undefined : sample.input.trim()),
);

export const emptyStructure: Probe = {
  id: "empty-structure",
  title: "Empty required structure",
  exploit: "pays for the headings, lists and tables the rubric asks for even when they hold nothing",
  matchedBy: "the same words as plain text, without the Markdown structure",
  apply({ sample, surface }) {
    const { headings, minHeadings, headingLevel, bullets, tables, codeBlocks } = surface.structure;
    const names = [...headings];
    for (let n = names.length; n < minHeadings; n++) names.push(`${"#".repeat(headingLevel)} Section ${n + 1}`);
    if (names.length + bullets + tables + codeBlocks === 0) return undefined;
    const shells = [
      ...names,
      ...(bullets > 0 ? [Array.from({ length: bullets }, () => "- …").join("\n")] : []),
      ...Array.from({ length: tables }, () => "|  |  |\n| --- | --- |\n|  |  |"),
      ...Array.from({ length: codeBlocks }, () => "```\n```"),
    ];
    const plain = [...names.map((h) => h.replace(/^#+\s*/, "")), ..."…".repeat(bullets)].join(" ");
    return { probe: appended(sample.output, shells.join("\n\n")), control: appended(sample.output, plain) };
  },
};

/** Latin letters and the Cyrillic letters drawn the same. */
const HOMOGLYPHS: Readonly<Record<string, string>> = {
  a: "\u0430",
  c: "\u0441",
  e: "\u0435",
  i: "\u0456",
  j: "\u0458",
  o: "\u043e",
  p: "\u0440",
  s: "\u0455",
  x: "\u0445",
  y: "\u0443",
  A: "\u0410",
  B: "\u0412",
  C: "\u0421",
  E: "\u0415",
  H: "\u041d",
  K: "\u041a",
  M: "\u041c",
  O: "\u041e",
  P: "\u0420",
  T: "\u0422",
  X: "\u0425",
};

/** Swaps the first letter of `word` that has a lookalike; undefined when none has. */
function withHomoglyph(word: string): string | undefined {
  for (let i = 0; i < word.length; i++) {
    const swap = HOMOGLYPHS[word[i]!];
    if (swap) return word.slice(0, i) + swap + word.slice(i + 1);
  }
  return undefined;
}

interface Span {
  readonly start: number;
  readonly end: number;
}

function replaceSpans(text: string, spans: readonly Span[]): string {
  let out = "";
  let at = 0;
  for (const span of [...spans].sort((a, b) => a.start - b.start)) {
    out +=
      text.slice(at, span.start) +
      (withHomoglyph(text.slice(span.start, span.end)) ?? text.slice(span.start, span.end));
    at = span.end;
  }
  return out + text.slice(at);
}

export const homoglyph: Probe = {
  id: "homoglyph",
  title: "Homoglyph substitution",
  exploit: "an `excludes`-style check is dodged by writing a forbidden term with lookalike letters",
  matchedBy: "the same number of lookalike letters swapped into words the rubric does not mention",
  apply({ sample, surface, rng }) {
    const text = sample.output;
    const hits: Span[] = [];
    for (const term of surface.forbiddenTerms) {
      if (withHomoglyph(term) === undefined) continue;
      for (const m of text.matchAll(new RegExp(term.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "giu")))
        if (!hits.some((h) => m.index < h.end && h.start < m.index + m[0].length))
          hits.push({ start: m.index, end: m.index + m[0].length });
    }
    if (hits.length === 0) return undefined;
    const others: Span[] = [];
    for (const m of text.matchAll(WORD)) {
      const span = { start: m.index, end: m.index + m[0].length };
      if (
        m[0].length >= 4 &&
        withHomoglyph(m[0]) &&
        !surface.vocabulary.has(m[0].toLowerCase()) &&
        !hits.some((h) => span.start < h.end && h.start < span.end)
      )
        others.push(span);
    }
    return { probe: replaceSpans(text, hits), control: replaceSpans(text, shuffle(others, rng).slice(0, hits.length)) };
  },
};

function sentence(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return /[.!?]$/.test(flat) ? flat : `${flat}.`;
}
