/**
 * Regex rules: the engines a rule's pattern can run on, and what they cost the rule path.
 *
 *   pnpm --filter @rubric/verifiers run bench:regex [--append ../../BENCHMARKS.md] [--re2-from DIR]
 *
 * 1. Per pattern, counting the matches in a 5 kB output as the `regex` rule does: JavaScript's
 *    RegExp, re2js, and what the rule runs now (RegExp for a pattern proven linear, else re2js);
 *    with `--re2-from DIR` (a node_modules holding the `re2` package, a native RE2 binding, which
 *    is not a dependency) native RE2 too. Also one RE2 compile of each.
 * 2. The catastrophic pattern of issue 13 item 7 on short policy-written texts.
 * 3. The rule path: the 12-criterion rubric of `bench` (rule-rubric.ts) on its 1,000 outputs, as
 *    the verifiers' bare checks with every pattern on re2js (before), as they run now, and the same
 *    checks written natively (String#includes, RegExp#test): the floor. Round-robin rounds.
 *
 * Runs bundled (tsup → bench/.build, then plain node), medians after 2 warm-ups.
 */
import { appendFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createVerifierRegistry } from "../src/registry/registry.js";
import { compileRulePattern } from "../src/rules/regex-engine.js";
import { createRegexVerifier } from "../src/rules/regex.js";
import { outputs, rubric } from "./rule-rubric.js";

const { values: args } = parseArgs({
  options: {
    append: { type: "string" },
    runs: { type: "string", default: "7" },
    rounds: { type: "string", default: "21" },
    "re2-from": { type: "string" },
  },
});
const RUNS = Number(args.runs);
const ROUNDS = Number(args.rounds);

/** The native binding, when the caller points at an install of it. */
type NativeRe2 = new (pattern: string, flags: string) => RegExp;
const NativeRE2 =
  args["re2-from"] === undefined ? undefined : (createRequire(join(args["re2-from"], "noop.js"))("re2") as NativeRe2);

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
  return middle(times);
}

function middle(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const µs = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;

// --- 1. per pattern ----------------------------------------------------------------------------
const rows: string[] = [];
for (const [pattern, flags] of PATTERNS) {
  const js = new RegExp(pattern, `${flags}g`);
  const re2 = compileRulePattern(pattern, flags, { regExpWhenLinear: false });
  const rule = compileRulePattern(pattern, flags);
  const jsCount = OUTPUT.match(js)?.length ?? 0;
  if (re2.count(OUTPUT) !== jsCount || rule.count(OUTPUT) !== jsCount)
    throw new Error(`/${pattern}/${flags}: the engines disagree`);
  const jsMs = median(() => OUTPUT.match(js), 200);
  const re2Ms = median(() => re2.count(OUTPUT), 200);
  const ruleMs = median(() => rule.count(OUTPUT), 200);
  let nativeCell = "";
  if (NativeRE2) {
    const native = new NativeRE2(pattern, `${flags.replace("u", "")}gu`);
    const nativeCount = OUTPUT.match(native)?.length ?? 0;
    const nativeMs = median(() => OUTPUT.match(native), 200);
    nativeCell = ` ${µs(nativeMs)}${nativeCount === jsCount ? "" : ` (${nativeCount} matches)`} |`;
  }
  const compileMs = median(() => compileRulePattern(pattern, flags, { regExpWhenLinear: false }), 200);
  rows.push(
    `| \`/${pattern}/${flags}\` | ${jsCount} | ${µs(jsMs)} | ${µs(re2Ms)} | ${(re2Ms / jsMs).toFixed(1)}× | ${rule.runsOn} ${µs(ruleMs)} |${nativeCell} ${µs(compileMs)} |`,
  );
  process.stderr.write(`${rows.at(-1)}\n`);
}

// --- 2. the catastrophic pattern ---------------------------------------------------------------
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

// --- 3. the rule path against native checks ----------------------------------------------------
const now = createVerifierRegistry({ python: false });
const before = createVerifierRegistry({ python: false }).register(createRegexVerifier({ regExpWhenLinear: false }), {
  replace: true,
});
const checksOf = (registry: typeof now) =>
  rubric.criteria.map((c) => {
    const verifier = registry.get(c.verifier.kind)!;
    return { verifier, spec: verifier.specSchema.parse(c.verifier) };
  });
const [checksBefore, checksNow] = [checksOf(before), checksOf(now)];
let sink = 0;
const ruleChecks = (checks: typeof checksNow) => () => {
  for (const o of outputs) for (const { verifier, spec } of checks) sink += verifier.check!(spec, o).score ?? 0;
};
// The same twelve checks as a script would write them: lower-cased includes, RegExp#test, a word split.
const nativeRegexes = rubric.criteria.flatMap((c) =>
  c.verifier.kind === "regex" ? [new RegExp((c.verifier as { pattern: string }).pattern)] : [],
);
const nativeTerms = ["revenue", "margin", "forecast", "risk"];
const nativeChecks = () => {
  for (const { output } of outputs) {
    const lower = output.toLowerCase();
    for (const term of nativeTerms) sink += lower.includes(term) ? 1 : 0;
    for (const regex of nativeRegexes) sink += regex.test(output) ? 1 : 0;
    sink += output.split(/\s+/).filter(Boolean).length <= 60 ? 1 : 0;
    sink += output.length >= 80 ? 1 : 0;
    sink += lower.includes("guaranteed") ? 0 : 1;
  }
};
const paths = { native: nativeChecks, before: ruleChecks(checksBefore), now: ruleChecks(checksNow) };
const times: Record<keyof typeof paths, number[]> = { native: [], before: [], now: [] };
for (const run of Object.values(paths)) run(); // warm-up
for (let r = 0; r < ROUNDS; r++)
  for (const [name, run] of Object.entries(paths) as [keyof typeof paths, () => void][]) {
    const started = performance.now();
    run();
    times[name].push(performance.now() - started);
  }
const [nativeMs, beforeMs, nowMs] = [middle(times.native), middle(times.before), middle(times.now)];
const onRegExp = rubric.criteria.filter(
  (c) =>
    c.verifier.kind === "regex" &&
    compileRulePattern((c.verifier as { pattern: string }).pattern, "").runsOn === "RegExp",
).length;

const report = [
  "### Regex rules: the engines",
  "",
  `\`pnpm --filter @rubric/verifiers run bench:regex${NativeRE2 ? " --re2-from <dir>" : ""}\` — counting the matches in a 5 kB output as the`,
  `\`regex\` rule does; median of ${RUNS} runs, per count. "rule now": what the rule runs (RegExp when the`,
  "pattern is proven linear, else re2js); compile: one RE2 compile.",
  "",
  `| pattern | matches | RegExp | re2js | re2js / RegExp | rule now |${NativeRE2 ? " native re2 |" : ""} RE2 compile |`,
  `|---|---:|---:|---:|---:|---:|${NativeRE2 ? "---:|" : ""}---:|`,
  ...rows,
  "",
  "The catastrophic pattern `^(\\w+\\s?)*$` (issue 13 item 7), one count:",
  "",
  "| text | RegExp | RE2 |",
  "|---|---:|---:|",
  ...catastrophic,
  "",
  `The rule path: 1,000 outputs × the 12 criteria of \`bench\` (${onRegExp} of its 5 patterns now on RegExp), bare`,
  `checks, median of ${ROUNDS} round-robin rounds:`,
  "",
  "| checks | median | × native |",
  "|---|---:|---:|",
  `| native (includes, RegExp#test, split) | ${nativeMs.toFixed(2)} ms | 1.0× |`,
  `| rule path, every pattern on re2js (before) | ${beforeMs.toFixed(2)} ms | ${(beforeMs / nativeMs).toFixed(1)}× |`,
  `| rule path now | ${nowMs.toFixed(2)} ms | ${(nowMs / nativeMs).toFixed(1)}× |`,
  "",
  `The rule path now takes ${((nowMs / beforeMs) * 100).toFixed(0)} % of its time before (checksum ${sink}).`,
  "",
].join("\n");
process.stdout.write(`${report}\n`);
if (args.append !== undefined) appendFileSync(args.append, `\n${report}`);
