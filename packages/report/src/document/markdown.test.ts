import { describe, expect, it } from "vitest";
import { documentSection } from "./document.js";
import { markdownBlocks } from "./markdown.js";

describe("markdownBlocks", () => {
  it("reads the subset the toolkit writes: headings, quotes, paragraphs, lists (wrapped items too) and pipe tables", () => {
    const md = [
      "# ARCANE (quick)",
      "",
      "> Rubric gym, a simulation:",
      "> not the paper's setting.",
      "",
      "Each row is a method;",
      "the paper's column is beside ours.",
      "",
      "| Method | N=1 | paper N=1 |",
      "|---|---:|---|",
      "| SFT | 0.612 | 0.62 |",
      "| GSPO | **0.700** | 0.62 |",
      "| `a\\|b` | `` x`y `` | ``` `` ``` |",
      "",
      "- first `note`",
      "  wrapped on",
      "- second note",
      "## Controls",
      "```",
      "rubric hackbench --probes keyword-stuffing",
      "  | not a table",
      "```",
    ].join("\n");
    expect(markdownBlocks(md)).toEqual([
      { type: "heading", level: 1, text: "ARCANE (quick)" },
      { type: "quote", text: "Rubric gym, a simulation: not the paper's setting." },
      { type: "paragraph", text: "Each row is a method; the paper's column is beside ours." },
      {
        type: "table",
        header: ["Method", "N=1", "paper N=1"],
        rows: [
          ["SFT", "0.612", "0.62"],
          ["GSPO", "0.700", "0.62"],
          ["a|b", "x`y", "``"],
        ],
      },
      { type: "list", items: ["first note wrapped on", "second note"] },
      { type: "heading", level: 2, text: "Controls" },
      { type: "code", text: "rubric hackbench --probes keyword-stuffing\n  | not a table" },
    ]);
  });

  it("keeps an SVG figure as a data: URI image, never as markup", () => {
    const section = documentSection({
      title: "t",
      source: "s",
      markdown: "x",
      figures: [{ caption: "plot", svg: "<svg><script>1</script></svg>" }],
    });
    expect(section.figures[0]!.src).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(Buffer.from(section.figures[0]!.src.split(",")[1]!, "base64").toString()).toBe(
      "<svg><script>1</script></svg>",
    );
  });
});
