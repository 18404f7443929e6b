/**
 * Regex rules: the RE2 engine (re2js, the default) against JavaScript's RegExp (the engine before
 * it, now opt-in as `engine: "js"`), on patterns rubric authors write, counting matches in a
 * 5 kB output as the `regex` rule does. Also one compile of each, and the catastrophic pattern of
 * issue 13 item 7 on a short policy-written text, where RegExp's time grows exponentially.
 *
 *   pnpm --filter @rubric/verifiers run bench:regex [--append ../../BENCHMARKS.md]
 *
 * Runs bundled (tsup → bench/.build, then plain node), medians of 7 runs after 2 warm-ups.
 */
import { appendFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { compileRulePattern } from "../src/rules/regex-engine.js";

const { values: args } = parseArgs({ options: { append: { type: "string" }, runs: { type: "string", default: "7" } } });
const RUNS = Number(args.runs);

const paragraph =
  "## Q3 review\nRevenue rose 12% in Q3 2024-09 against Q2; the colour of the forecast is brighter. " +
  "Contact ana.silva@example.com or see https://example.com/report. Café sales: €4,200. 😀\n";
const OUTPUT = paragraph.repeat(Math.ceil(5_000 / paragraph.length));

const PATTERNS: [string, string][] = [
  ["\\bQ[1-4]\\b", ""],
  ["\\d{4}-\\d{2}", ""],
  ["colou?r", "i"],
  ["^#+ \\w+", "m"],
  ["[^\\s]+@[^\\s]+\\.\\w+", ""],
  ["\\p{L}+", "u"],
  ["https?://\\S+", "u"],
];

function median(run: () => unknown, repeat: number): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS + 2; i++) {
    const started = performance.now();
    for (let k = 0; k < repeat; k++) run();
    if (i >= 2) times.push((performance.now() - started) / repeat);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

const µs = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;
const rows: string[] = [];
for (const [pattern, flags] of PATTERNS) {
  const js = new RegExp(pattern, `${flags}g`);
  const re2 = compileRulePattern(pattern, flags);
  const jsCount = OUTPUT.match(js)?.length ?? 0;
  if (re2.count(OUTPUT) !== jsCount) throw new Error(`/${pattern}/${flags}: the engines disagree`);
  const jsMs = median(() => OUTPUT.match(js), 200);
  const re2Ms = median(() => re2.count(OUTPUT), 200);
  const compileMs = median(() => compileRulePattern(pattern, flags), 200);
  rows.push(
    `| \`/${pattern}/${flags}\` | ${jsCount} | ${µs(jsMs)} | ${µs(re2Ms)} | ${(re2Ms / jsMs).toFixed(1)}× | ${µs(compileMs)} |`,
  );
  process.stderr.write(`${rows.at(-1)}\n`);
}

const catastrophic: string[] = [];
for (const n of [16, 20, 22]) {
  const text = `${"a".repeat(n)}!`;
  const js = /^(\w+\s?)*$/g;
  const re2 = compileRulePattern("^(\\w+\\s?)*$", "");
  catastrophic.push(
    `| \`"a"×${n} + "!"\` | ${median(() => text.match(js), 1).toFixed(1)} ms | ${median(() => re2.count(text), 20).toFixed(3)} ms |`,
  );
  process.stderr.write(`${catastrophic.at(-1)}\n`);
}

const report = [
  "### Regex rules: RE2 (re2js) vs RegExp",
  "",
  "`pnpm --filter @rubric/verifiers run bench:regex` — counting the matches in a 5 kB output as the",
  `\`regex\` rule does; median of ${RUNS} runs, per count (compile: per compile of the RE2 pattern).`,
  "",
  "| pattern | matches | RegExp | RE2 | RE2 / RegExp | RE2 compile |",
  "|---|---:|---:|---:|---:|---:|",
  ...rows,
  "",
  "The catastrophic pattern `^(\\w+\\s?)*$` (issue 13 item 7), one count:",
  "",
  "| text | RegExp | RE2 |",
  "|---|---:|---:|",
  ...catastrophic,
  "",
].join("\n");
process.stdout.write(`${report}\n`);
if (args.append !== undefined) appendFileSync(args.append, `\n${report}`);
