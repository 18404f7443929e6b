/**
 * The Markdown the toolkit writes (a reproduction's `table.md`, a hackbench card's `.md`) as blocks
 * a page can lay out: headings, paragraphs, quotes, bullet lists, fenced code and pipe tables. Only
 * that subset. Inline marks (`**bold**`, `` `code` ``) are dropped and their text kept: the page
 * sets every string as text, never as markup.
 */
export type Block =
  | { readonly type: "heading"; readonly level: number; readonly text: string }
  | { readonly type: "paragraph"; readonly text: string }
  | { readonly type: "quote"; readonly text: string }
  | { readonly type: "list"; readonly items: readonly string[] }
  | { readonly type: "code"; readonly text: string }
  | { readonly type: "table"; readonly header: readonly string[]; readonly rows: readonly (readonly string[])[] };

/**
 * Text without inline marks: bold, italics by underscores are left alone (ids use them), code
 * spans unwrapped. A span closes at a backtick run as long as the one that opened it, and one
 * space of padding either side is dropped (CommonMark), so an id holding backticks reads whole.
 */
const plain = (text: string) =>
  text
    .replace(/\*\*(.+?)\*\*/g, "$1")
    .replace(/(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)/g, (_, _fence: string, inner: string) =>
      inner.length > 2 && inner.startsWith(" ") && inner.endsWith(" ") ? inner.slice(1, -1) : inner,
    );

// A cell ends at a `|` that is not escaped: GFM's `\|` is a pipe inside the cell (a criterion id may hold one).
const cells = (line: string) =>
  line
    .trim()
    .replace(/^\||(?<!\\)\|$/g, "")
    .split(/(?<!\\)\|/)
    .map((c) => plain(c.trim().replace(/\\\|/g, "|")));
const isSeparator = (line: string) => /^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(line.trim());

/** Splits Markdown into blocks; a line that fits no other block joins the paragraph it is in. */
export function markdownBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.replace(/\r\n/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === "") {
      i++;
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const fence = /^\s*(`{3,})/.exec(line);
    if (fence) {
      const text: string[] = [];
      i++;
      while (i < lines.length && !lines[i]!.trim().startsWith(fence[1]!)) text.push(lines[i++]!);
      i++; // the closing fence
      blocks.push({ type: "code", text: text.join("\n") });
    } else if (heading) {
      blocks.push({ type: "heading", level: heading[1]!.length, text: plain(heading[2]!.trim()) });
      i++;
    } else if (line.trimStart().startsWith("|")) {
      const rows: string[][] = [];
      while (i < lines.length && lines[i]!.trimStart().startsWith("|")) {
        if (!isSeparator(lines[i]!)) rows.push(cells(lines[i]!));
        i++;
      }
      blocks.push({ type: "table", header: rows[0] ?? [], rows: rows.slice(1) });
    } else if (/^\s*[-*]\s+/.test(line)) {
      const items: string[] = [];
      while (i < lines.length && lines[i]!.trim() !== "" && !/^(#{1,6}\s|\s*\|)/.test(lines[i]!)) {
        const item = /^\s*[-*]\s+(.*)$/.exec(lines[i]!);
        if (item) items.push(plain(item[1]!));
        else items[items.length - 1] += ` ${plain(lines[i]!.trim())}`; // a wrapped item continues
        i++;
      }
      blocks.push({ type: "list", items });
    } else if (line.startsWith(">")) {
      const text: string[] = [];
      while (i < lines.length && lines[i]!.startsWith(">")) text.push(lines[i++]!.replace(/^>\s?/, ""));
      blocks.push({ type: "quote", text: plain(text.join(" ").trim()) });
    } else {
      const text: string[] = [];
      while (i < lines.length && lines[i]!.trim() !== "" && !/^(#{1,6}\s|\s*\||\s*[-*]\s|>|\s*```)/.test(lines[i]!))
        text.push(lines[i++]!.trim());
      blocks.push({ type: "paragraph", text: plain(text.join(" ")) });
    }
  }
  return blocks;
}
