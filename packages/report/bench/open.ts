/**
 * How fast a large report opens and answers a weight change, in Debian's chromium (headless):
 * 10,000 outputs × 12 criteria (rules-like verdicts, one in fifty an error), the page written by
 * `buildReport`, then per run: navigation → the page's `ready` (parsed, scored, first 500 rows drawn)
 * and one weight change → the next frame's ranking. Target: interactive in under 2 s.
 *
 *   pnpm --filter @rubric/report run bench [--runs 5] [--outputs 10000]
 */
import { mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createRng, median, parseFlatRubric, scoreRubric, type Verdict } from "@rubric/core";
import { chromium } from "playwright-core";
import { buildReport, type ScoresSection } from "../src/index.js";

const { values: args } = parseArgs({
  options: { runs: { type: "string", default: "5" }, outputs: { type: "string", default: "10000" } },
});
const runs = Number(args.runs);
const n = Number(args.outputs);
const rng = createRng("report-bench");
const rubric = parseFlatRubric({
  id: "bench",
  criteria: Array.from({ length: 12 }, (_, j) => ({
    id: `c${j}`,
    text: `Criterion ${j}: the output does property ${j}`,
    weight: 1 + (j % 3),
    polarity: j % 6 === 5 ? ("penalty" as const) : ("reward" as const),
    verifier: { kind: "includes" as const, terms: [`term${j}`] },
  })),
});
const outputs = Array.from({ length: n }, (_, i) => {
  const verdicts: Verdict[] = rubric.criteria.map((c) =>
    rng.next() < 0.02
      ? { criterionId: c.id, score: null, status: "error", error: "judge timed out" }
      : { criterionId: c.id, score: Math.round(rng.next() * 4) / 4, status: "ok", rationale: `found ${c.id}` },
  );
  const score = scoreRubric(rubric, verdicts, { errorsAs: "renormalize" });
  return { id: `output-${i}`, verdicts, recorded: { total: score.total, normalized: score.normalized } };
});
const section: ScoresSection = {
  kind: "scores",
  title: "bench",
  source: "bench",
  rubricKind: "flat",
  rubric,
  errorsAs: "renormalize",
  ignoreGates: false,
  outputs,
};
const started = performance.now();
const html = buildReport([section]);
const buildMs = performance.now() - started;
const file = join(mkdtempSync(join(tmpdir(), "report-bench-")), "report.html");
writeFileSync(file, html);

const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
const interactive: number[] = [];
const firstRender: number[] = [];
const reweight: number[] = [];
for (let r = 0; r < runs + 1; r++) {
  const page = await browser.newPage();
  await page.goto(`file://${file}`);
  await page.waitForFunction(
    () => (window as unknown as { __rubricReport?: { ready: boolean } }).__rubricReport?.ready,
  );
  // performance.now() in the page counts from the navigation's start.
  const [readyAt, renderMs] = await page.evaluate(() => [
    performance.now(),
    (window as unknown as { __rubricReport: { lastRenderMs: number } }).__rubricReport.lastRenderMs,
  ]);
  const changeMs = await page.evaluate(async () => {
    const state = (window as unknown as { __rubricReport: { renders: number } }).__rubricReport;
    const before = state.renders;
    const input = document.querySelector<HTMLInputElement>('.weights tr[data-criterion="c0"] input[type=number]')!;
    const t = performance.now();
    input.value = "0";
    input.dispatchEvent(new Event("input"));
    while (state.renders === before) await new Promise((resolve) => requestAnimationFrame(resolve));
    return performance.now() - t;
  });
  await page.close();
  if (r === 0) continue; // warm-up: the browser's first page
  interactive.push(readyAt!);
  firstRender.push(renderMs!);
  reweight.push(changeMs);
}
await browser.close();

console.log(`### Report page: ${n.toLocaleString("en")} outputs × 12 criteria in chromium (headless)`);
console.log();
console.log(
  `- page: ${(statSync(file).size / 2 ** 20).toFixed(1)} MiB, written by buildReport in ${buildMs.toFixed(0)} ms`,
);
console.log(
  `- navigation → interactive (data parsed, every output scored, first 500 rows drawn): median ${median(interactive).toFixed(0)} ms over ${runs} runs (min ${Math.min(...interactive).toFixed(0)}, max ${Math.max(...interactive).toFixed(0)}); target < 2000 ms`,
);
console.log(`- of which scoring and drawing the ranking: median ${median(firstRender).toFixed(0)} ms`);
console.log(
  `- one weight change → every output rescored and the ranking redrawn, next frame included: median ${median(reweight).toFixed(0)} ms`,
);
