/** The page's style: plain, printable, readable without colour. */
export const PAGE_STYLE = `
:root { --fg: #1d2230; --muted: #5b6475; --line: #d9dde5; --bg-alt: #f5f7fa; --accent: #2457c5; --bad: #b3261e; --good: #1b7a3a; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); }
main { max-width: 1200px; margin: 0 auto; padding: 24px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 4px; }
h3 { font-size: 15px; margin: 20px 0 6px; }
.muted { color: var(--muted); }
table { border-collapse: collapse; width: 100%; margin: 6px 0 12px; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; background: var(--bg-alt); position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.layout { display: grid; grid-template-columns: minmax(320px, 5fr) 7fr; gap: 24px; align-items: start; }
@media (max-width: 900px) { .layout { grid-template-columns: minmax(0, 1fr); } }
.layout > * { min-width: 0; }
.scroll { overflow-x: auto; }
.weights input[type=number] { width: 72px; }
.weights input[type=range] { width: 110px; vertical-align: middle; }
.weights tr.changed td { background: #fff7e0; }
.weights input.invalid { border: 2px solid var(--bad); background: #fdf0ef; }
.weights td { overflow-wrap: anywhere; }
@media (max-width: 520px) {
  main { padding: 12px; }
  .weights input[type=range] { display: none; }
  .weights input[type=number] { width: 60px; }
}
button { font: inherit; padding: 4px 10px; margin-right: 6px; border: 1px solid var(--line); background: white; border-radius: 4px; cursor: pointer; }
button:hover { border-color: var(--accent); }
.status-error { color: var(--bad); font-weight: 600; }
.status-skipped { color: var(--muted); }
.unscored { color: var(--bad); }
.penalty { color: var(--bad); }
tr.output { cursor: pointer; }
tr.output:hover td { background: var(--bg-alt); }
tr.details > td { background: #fbfcfe; padding: 8px 16px 12px; }
.rationale { white-space: pre-wrap; max-width: 48ch; }
.gate { padding: 4px 8px; border-left: 3px solid var(--bad); background: #fdf0ef; margin: 6px 0; }
.note { margin: 6px 0; }
figure { margin: 12px 0; }
figure img { max-width: 100%; border: 1px solid var(--line); }
blockquote { margin: 8px 0; padding: 4px 12px; border-left: 3px solid var(--line); }
table.document { width: auto; }
td.pass { color: var(--good); font-weight: 600; }
td.fail { color: var(--bad); font-weight: 600; }
.filters { display: flex; gap: 8px; flex-wrap: wrap; margin: 4px 0; }
.filters input[type=search] { flex: 1 1 160px; min-width: 0; font: inherit; padding: 3px 6px; }
td.preview { color: var(--muted); max-width: 36ch; overflow-wrap: anywhere; }
.scored-text pre { max-height: 18em; overflow-y: auto; margin: 2px 0 8px; }
.side-by-side { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; }
@media (max-width: 520px) { .side-by-side { grid-template-columns: 1fr; } }
tr.differs td { background: #fff7e0; }
pre { background: var(--bg-alt); padding: 8px 12px; overflow-x: auto; white-space: pre-wrap; }
`;
