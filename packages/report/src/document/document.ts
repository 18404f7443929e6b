import { markdownBlocks, type Block } from "./markdown.js";

/** A figure of a document section: an SVG the toolkit drew (a reproduction's plot), shown as an image. */
export interface Figure {
  readonly caption: string;
  /** The SVG document's text. */
  readonly svg: string;
}

/** A reproduction's tables or an integrity card: text, tables and figures, laid out as written. */
export interface DocumentSection {
  readonly kind: "document";
  readonly title: string;
  readonly source: string;
  readonly blocks: readonly Block[];
  /** SVGs as data: URIs, so that the page shows them as images (never as markup in its document). */
  readonly figures: readonly { readonly caption: string; readonly src: string }[];
}

/**
 * A section from Markdown the toolkit wrote (`table.md` of `rubric repro`, the `.md` of a
 * hackbench card) and the plots beside it. The caller reads and validates the files (the CLI
 * checks each JSON against its package's schema); this only lays them out.
 */
export function documentSection(input: {
  readonly title: string;
  readonly source: string;
  readonly markdown: string;
  readonly figures?: readonly Figure[];
}): DocumentSection {
  return {
    kind: "document",
    title: input.title,
    source: input.source,
    blocks: markdownBlocks(input.markdown),
    figures: (input.figures ?? []).map((f) => ({
      caption: f.caption,
      src: `data:image/svg+xml;base64,${Buffer.from(f.svg, "utf8").toString("base64")}`,
    })),
  };
}
