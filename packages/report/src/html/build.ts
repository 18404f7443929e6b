import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ReportPageMissingError } from "../errors.js";
import type { DocumentSection } from "../document/document.js";
import type { ScoresSection } from "../scores/scores.js";
import { PAGE_STYLE } from "./style.js";

/** A part of a report: scored outputs (reweightable), or a document (a reproduction's tables, an integrity card). */
export type ReportSection = ScoresSection | DocumentSection;

/** What a report page holds, as JSON inside it: the page's script reads it and renders every view. */
export interface ReportData {
  readonly format: "rubric-report/1";
  readonly title: string;
  readonly generated: string;
  readonly sections: readonly ReportSection[];
}

let pageScript: string | undefined;

/** The page's script (core's scoring and the page's code, bundled for the browser by the build). */
function readPageScript(): string {
  if (pageScript !== undefined) return pageScript;
  // dist/index.{js,cjs} sit beside dist/page.js; tests run this module from src/html/.
  const candidates = [new URL("./page.js", import.meta.url), new URL("../../dist/page.js", import.meta.url)].map((u) =>
    fileURLToPath(u),
  );
  const found = candidates.find((path) => existsSync(path));
  if (found === undefined) throw new ReportPageMissingError(candidates);
  pageScript = readFileSync(found, "utf8");
  return pageScript;
}

/** JSON that can sit inside a <script> element: no `</script>`, no HTML comment opener, no line separators. */
function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/**
 * One self-contained HTML file: the data as JSON, the page's script and its style inline. It loads
 * nothing from the network when viewed; every total it shows, reweighted or not, is computed by
 * @rubric/core's `scoreRubric` in the page.
 *
 * @example
 * writeFileSync("report.html", buildReport([scoresSection(JSON.parse(text), "results.json")]));
 */
export function buildReport(
  sections: readonly ReportSection[],
  options: { title?: string; generated?: Date } = {},
): string {
  const data: ReportData = {
    format: "rubric-report/1",
    title: options.title ?? "Rubric report",
    generated: (options.generated ?? new Date()).toISOString(),
    sections,
  };
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(data.title)}</title>
<style>${PAGE_STYLE}</style>
</head>
<body>
<noscript>This report computes its views in the page: enable JavaScript to read it.</noscript>
<main id="report"></main>
<script type="application/json" id="report-data">${scriptSafeJson(data)}</script>
<script>${readPageScript().replace(/<\/script/gi, "<\\/script")}</script>
</body>
</html>
`;
}
