/**
 * Markdown read as a reader sees it: paragraphs, list items, headings, tables and code. Probes
 * take sentences to restate from here, and the biased judge reads prose from here.
 */
export interface TextBlock {
  readonly kind: "paragraph" | "list-item" | "heading" | "table-row" | "code";
  readonly text: string;
}

const LIST_ITEM = /^\s*(?:[-*+]|\d+[.)])\s+(\S.*)$/;
const HEADING = /^\s{0,3}#{1,6}\s+(\S.*)$/;

/** Splits Markdown into blocks; consecutive plain lines join into one paragraph. */
export function textBlocks(markdown: string): TextBlock[] {
  const blocks: TextBlock[] = [];
  let paragraph: string[] = [];
  let inFence = false;
  const flush = () => {
    if (paragraph.length > 0) blocks.push({ kind: "paragraph", text: paragraph.join(" ") });
    paragraph = [];
  };
  for (const line of markdown.split(/\r?\n/)) {
    if (/^\s{0,3}(```|~~~)/.test(line)) {
      flush();
      inFence = !inFence;
      continue;
    }
    if (inFence) {
      blocks.push({ kind: "code", text: line });
      continue;
    }
    const heading = HEADING.exec(line);
    const item = LIST_ITEM.exec(line);
    if (line.trim() === "") flush();
    else if (heading) {
      flush();
      blocks.push({ kind: "heading", text: heading[1]! });
    } else if (item) {
      flush();
      blocks.push({ kind: "list-item", text: item[1]! });
    } else if (/^\s*\|/.test(line)) {
      flush();
      blocks.push({ kind: "table-row", text: line });
    } else paragraph.push(line.trim());
  }
  flush();
  return blocks;
}

/** Sentences of a block of prose: split after . ! ? followed by white space. */
export function sentencesOf(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+/u)
    .map((s) => s.trim())
    .filter((s) => /[\p{L}\p{N}]/u.test(s));
}

/** The sentences of an output's paragraphs, in order (not headings, list items, tables or code). */
export function paragraphSentences(markdown: string): string[] {
  return textBlocks(markdown)
    .filter((b) => b.kind === "paragraph")
    .flatMap((b) => sentencesOf(b.text));
}
