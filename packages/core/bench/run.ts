/**
 * Benchmarks of @rubric/core on the built package (what users import).
 *
 *   pnpm bench                      from the repository root (builds first)
 *   pnpm --filter @rubric/core bench -- --write ../../BENCHMARKS.md
 *
 * Targets on the project's 2-core machine: ≥ 1M criterion aggregations/s, reweighting
 * 10,000 scored outputs × 12 criteria ≤ 20 ms, GSPO objective + gradient for 64 × 1,024 ≤ 30 ms.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  createRng,
  gspoObjective,
  parseFlatRubric,
  readRubricJsonl,
  reweight,
  scoreRubric,
  type FlatScore,
  type StagedRubric,
} from "@rubric/core";
import { bench, throughput, type BenchResult } from "./harness.js";

const { values: args } = parseArgs({ options: { write: { type: "string" }, runs: { type: "string", default: "30" } } });
const runs = Number(args.runs);
const rng = createRng("bench-2026");
const results: { result: BenchResult; target?: string; met?: boolean }[] = [];

// --- Flat scoring: a 12-criterion rubric (ARCANE's typical size), 1,000 outputs per run.
const flat = parseFlatRubric({
  id: "bench-flat",
  criteria: Array.from({ length: 12 }, (_, j) => ({
    id: `c${j}`,
    text: `criterion ${j}`,
    weight: 1 + (j % 4),
    polarity: j % 6 === 5 ? "penalty" : "reward",
    verifier: { kind: "llm-judge" },
  })),
});
const flatVerdicts = Array.from({ length: 1000 }, () =>
  Object.fromEntries(flat.criteria.map((c) => [c.id, rng.next()])),
);
const flatResult = bench(
  "flat scoring: scoreRubric, 1,000 outputs × 12 criteria",
  () => flatVerdicts.map((v) => scoreRubric(flat, v).normalized),
  {
    runs,
    items: 12_000,
    itemName: "criterion aggregations",
  },
);
results.push({
  result: flatResult,
  target: "≥ 1M criterion aggregations/s",
  met: 12_000 / (flatResult.medianMs / 1000) >= 1e6,
});

// --- Staged scoring: the 219 real GDPval rubrics, random verdicts.
const shared = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../shared/", import.meta.url));
const staged = ["rubrics-train.jsonl", "rubrics-eval.jsonl"].flatMap((f) =>
  readRubricJsonl(readFileSync(`${shared}/data/gdpval/${f}`, "utf8")).rubrics.map((r) => r.rubric as StagedRubric),
);
const stagedCases = staged.flatMap((rubric) =>
  Array.from({ length: 5 }, () => ({
    rubric,
    verdicts: Object.fromEntries(rubric.stages.flatMap((s) => s.rules.map((r) => [r.id, rng.next()]))),
  })),
);
const stagedCriteria = stagedCases.reduce((n, c) => n + Object.keys(c.verdicts).length, 0);
const stagedResult = bench(
  `staged scoring: scoreRubric, 219 GDPval rubrics × 5 outputs (${stagedCriteria} rules)`,
  () => stagedCases.map((c) => scoreRubric(c.rubric, c.verdicts).normalized),
  {
    runs,
    items: stagedCriteria,
    itemName: "criterion aggregations",
  },
);
results.push({
  result: stagedResult,
  target: "≥ 1M criterion aggregations/s",
  met: stagedCriteria / (stagedResult.medianMs / 1000) >= 1e6,
});

// --- Reweighting 10,000 scored outputs × 12 criteria with edited weights (no verifier calls).
const scored: FlatScore[] = Array.from({ length: 10_000 }, () =>
  scoreRubric(flat, Object.fromEntries(flat.criteria.map((c) => [c.id, rng.next()]))),
);
const edited = { c0: 0, c3: 5, c7: 0.5 };
const reweightResult = bench(
  "reweight: 10,000 scored outputs × 12 criteria",
  () => scored.map((s) => reweight(s, edited).normalized),
  {
    runs,
    items: 10_000,
    itemName: "outputs",
  },
);
results.push({ result: reweightResult, target: "≤ 20 ms", met: reweightResult.medianMs <= 20 });

// --- GSPO objective + gradient, 64 sequences × 1,024 tokens.
const K = 64;
const T = 1024;
const logpOld = Array.from({ length: K }, () => Array.from({ length: T }, () => -0.5 - 3 * rng.next()));
const logpNew = logpOld.map((row) => row.map((x) => x + 0.002 * (rng.next() - 0.5)));
const mask = Array.from({ length: K }, () => Array.from({ length: T }, (_, t) => (t < 700 + rng.int(324) ? 1 : 0)));
const advantages = Array.from({ length: K }, () => rng.normal());
const gspoResult = bench(
  "gspoObjective + gradient: 64 sequences × 1,024 tokens, masked",
  () => gspoObjective({ logpNew, logpOld, mask, advantages }).loss,
  {
    runs,
    items: K * T,
    itemName: "tokens",
  },
);
results.push({ result: gspoResult, target: "≤ 30 ms", met: gspoResult.medianMs <= 30 });

// --- Report.
const cpu = cpus()[0]?.model ?? "unknown CPU";
const header = `Measured ${new Date().toISOString().slice(0, 10)} on ${cpu}, ${availableParallelism()} cores available, Node ${process.version}; ${runs} timed runs after 5 warm-up runs, one process.`;
const table = [
  "| benchmark | median | p10 – p90 | throughput | target | met |",
  "| --- | ---: | ---: | ---: | --- | --- |",
  ...results.map(
    ({ result, target, met }) =>
      `| ${result.name} | ${result.medianMs.toFixed(2)} ms | ${result.p10Ms.toFixed(2)} – ${result.p90Ms.toFixed(2)} ms | ${throughput(result)} | ${target ?? ""} | ${met === undefined ? "" : met ? "yes" : "**no**"} |`,
  ),
].join("\n");
console.log(`${header}\n\n${table}`);
if (args.write) {
  const doc = `# Benchmarks

Produced by \`pnpm bench\` (which runs \`pnpm --filter @rubric/core bench -- --write ../../BENCHMARKS.md\`
after building). Timings are medians over repeated runs in one process; compare ratios between rows of
one run rather than absolute numbers across machines.

## @rubric/core

${header}

${table}

What each row measures:
- *flat scoring* — \`scoreRubric\` end to end (verdict record → aligned arrays → aggregation → result object
  with per-criterion contributions) for 1,000 outputs of a 12-criterion rubric with two penalty criteria.
- *staged scoring* — the same on all 219 GDPval staged rubrics (gates, caps), 5 random verdict sets each.
- *reweight* — \`reweight(score, weights)\` on 10,000 stored scores: the test-time weight edit of ARCANE,
  with zero verifier calls.
- *gspoObjective* — sequence-level ratios, clipped surrogate loss and the per-token gradient
  ∂loss/∂logpNew for 64 × 1,024 tokens with ragged masks.
`;
  writeFileSync(args.write, doc);
  console.log(`\nwrote ${args.write}`);
}
