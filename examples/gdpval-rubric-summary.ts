/**
 * The main job (for now): validate the 219 shipped GDPval rubrics of the ARCANE paper and score
 * them under verdict scenarios that need no model — every rule met, every rule failed, and
 * seeded random verdicts — to show how the staged gates shape the scores.
 *
 *   pnpm main                          (from the repository root: builds, then runs this)
 *   pnpm --filter @rubric/examples gdpval-summary -- --seed 7 --samples 50 --json
 *
 * Data: ../shared/data/gdpval (override with RUBRIC_SHARED_DIR).
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  bootstrapCI,
  createRng,
  mean,
  populationStd,
  rubricSetStructure,
  scoreRubric,
  type RubricSetStructure,
  type StagedRubric,
  type StagedScore,
} from "@rubric/core";
import { loadGdpval } from "@rubric/autointeract";

// pnpm passes the "--" that separates its own arguments through; it is not ours.
const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== "--"),
  options: {
    seed: { type: "string", default: "42" },
    samples: { type: "string", default: "20" },
    json: { type: "boolean", default: false },
  },
});
const seed = Number(args.seed);
const samples = Number(args.samples);
if (!Number.isSafeInteger(seed)) throw new Error(`--seed must be an integer, got ${args.seed}`);
if (!Number.isSafeInteger(samples) || samples < 1)
  throw new Error(`--samples must be a positive integer, got ${args.samples}`);

const shared = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../shared/", import.meta.url));

interface SplitSummary {
  split: string;
  structure: RubricSetStructure;
  rubrics: number;
  stages: number;
  rules: number;
  codeRules: number;
  judgeRules: number;
  requiredGates: number;
  capMismatches: number;
  allMet: { mean: number; belowOne: number; unreachable: { taskId: string; best: number }[] };
  allFailed: { mean: number };
  random: { mean: number; sd: number; ci95: [number, number]; stoppedAtGate: number; meanIgnoringGates: number };
}

function ruleIds(rubric: StagedRubric): string[] {
  return rubric.stages.flatMap((s) => s.rules.map((r) => r.id));
}

function summarise(split: string, examples: readonly { readonly rubric: StagedRubric }[]): SplitSummary {
  const started = Date.now();
  const rubrics = examples.map((e) => e.rubric);
  const rng = createRng(seed).fork(split);
  const allMet: number[] = [];
  const unreachable: { taskId: string; best: number }[] = [];
  const allFailed: number[] = [];
  const random: number[] = [];
  const randomNoGates: number[] = [];
  let stopped = 0;
  for (const rubric of rubrics) {
    const ids = ruleIds(rubric);
    const best = scoreRubric(rubric, Object.fromEntries(ids.map((id) => [id, 1]))).normalized;
    allMet.push(best);
    if (best < 1 - 1e-12) unreachable.push({ taskId: rubric.taskId ?? rubric.category_name, best });
    allFailed.push(scoreRubric(rubric, Object.fromEntries(ids.map((id) => [id, 0]))).normalized);
    for (let k = 0; k < samples; k++) {
      const verdicts = Object.fromEntries(ids.map((id) => [id, rng.next()]));
      const scored: StagedScore = scoreRubric(rubric, verdicts);
      random.push(scored.normalized);
      if (scored.stoppedAt !== null) stopped++;
      randomNoGates.push(scoreRubric(rubric, verdicts, { ignoreGates: true }).normalized);
    }
  }
  const randomMean = mean(random);
  const structure = rubricSetStructure(rubrics);
  // Verdict sets of one rubric are not independent of each other; resample rubrics, not sets.
  const perRubric = rubrics.map((_, r) => mean(random.slice(r * samples, (r + 1) * samples)));
  const ci = bootstrapCI(perRubric, { seed: `${seed}-${split}`, resamples: 2000 });
  const summary: SplitSummary = {
    split,
    structure,
    rubrics: rubrics.length,
    stages: rubrics.reduce((n, r) => n + r.stages.length, 0),
    rules: rubrics.reduce((n, r) => n + ruleIds(r).length, 0),
    codeRules: rubrics.reduce(
      (n, r) => n + r.stages.flatMap((s) => s.rules).filter((x) => x.type === "code").length,
      0,
    ),
    judgeRules: rubrics.reduce(
      (n, r) => n + r.stages.flatMap((s) => s.rules).filter((x) => x.type === "llm_judge").length,
      0,
    ),
    requiredGates: rubrics.reduce(
      (n, r) => n + r.stages.filter((s) => s.is_required && s.on_failure_action !== "continue").length,
      0,
    ),
    capMismatches: rubrics.reduce(
      (n, r) =>
        n + r.stages.filter((s) => Math.abs(s.rules.reduce((w, x) => w + x.weight, 0) - s.max_points) > 1e-9).length,
      0,
    ),
    allMet: { mean: mean(allMet), belowOne: unreachable.length, unreachable },
    allFailed: { mean: mean(allFailed) },
    random: {
      mean: randomMean,
      sd: populationStd(random),
      ci95: [ci.lower, ci.upper],
      stoppedAtGate: stopped / random.length,
      meanIgnoringGates: mean(randomNoGates),
    },
  };
  console.error(
    `${split}: ${rubrics.length} rubrics scored ${rubrics.length * (2 + 2 * samples)} times in ${Date.now() - started} ms`,
  );
  return summary;
}

// Loading validates every rubric (it throws, naming the line, on any invalid one) and joins each
// to its GDPval task in the paper's split.
const gdpval = await loadGdpval(`${shared}/data/gdpval`);
const summaries = [summarise("train", gdpval.train), summarise("eval", gdpval.eval)];

if (args.json) {
  console.log(
    JSON.stringify(
      {
        seed,
        samples,
        tasks: gdpval.tasks.length,
        tasksWithoutRubric: gdpval.withoutRubric.map((t) => t.task_id),
        summaries,
      },
      null,
      2,
    ),
  );
} else {
  const rows: [string, (s: SplitSummary) => string][] = [
    ["rubrics (all valid)", (s) => String(s.rubrics)],
    ["stages / rubric", (s) => (s.stages / s.rubrics).toFixed(2)],
    [
      "criteria / rubric: mean (median)",
      (s) => `${s.structure.criteriaPerRubric.mean.toFixed(2)} (${s.structure.criteriaPerRubric.median})`,
    ],
    ["  min – max", (s) => `${s.structure.criteriaPerRubric.min} – ${s.structure.criteriaPerRubric.max}`],
    [
      "tokens / criterion: mean (median)",
      (s) => `${s.structure.tokensPerCriterion.mean.toFixed(1)} (${s.structure.tokensPerCriterion.median})`,
    ],
    ["code : llm_judge rules", (s) => `${s.codeRules} : ${s.judgeRules}`],
    ["stopping gates", (s) => String(s.requiredGates)],
    ["stages with Σw ≠ max_points", (s) => String(s.capMismatches)],
    ["every rule met: mean score", (s) => s.allMet.mean.toFixed(4)],
    ["  rubrics that cannot reach 1", (s) => String(s.allMet.belowOne)],
    ["every rule failed: mean score", (s) => s.allFailed.mean.toFixed(4)],
    [`random verdicts: mean ± sd`, (s) => `${s.random.mean.toFixed(4)} ± ${s.random.sd.toFixed(4)}`],
    ["  95% CI of the mean (bootstrap)", (s) => `${s.random.ci95[0].toFixed(3)} – ${s.random.ci95[1].toFixed(3)}`],
    ["  stopped by a gate", (s) => `${(100 * s.random.stoppedAtGate).toFixed(1)}%`],
    ["  mean with gates ignored", (s) => s.random.meanIgnoringGates.toFixed(4)],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  console.log(
    `GDPval staged rubrics (ARCANE reference data) — seed ${seed}, ${samples} random verdict sets per rubric`,
  );
  console.log(
    `${gdpval.tasks.length} tasks; ${gdpval.train.length} train + ${gdpval.eval.length} eval gold rubrics (split seed ${gdpval.split.seed}); ${gdpval.withoutRubric.length} task without one\n`,
  );
  console.log(`${"".padEnd(width)}  ${summaries.map((s) => s.split.padStart(16)).join("  ")}`);
  for (const [label, cell] of rows)
    console.log(`${label.padEnd(width)}  ${summaries.map((s) => cell(s).padStart(16)).join("  ")}`);
  console.log(
    "\nTokens are GPT-2-style pre-tokens of each rule's description (a close lower bound on BPE tokens). The paper's",
  );
  console.log("learned rubrics have ≈ 12 criteria of 17–18 tokens; these gold staged rubrics are fewer, longer rules.");
  console.log(
    "Random verdicts are uniform fractions per rule: a baseline of how the gates cut scores, not a model's quality.",
  );
  const unreachable = summaries.flatMap((s) =>
    s.allMet.unreachable.map((u) => `  ${s.split.padEnd(5)}  ${u.taskId}  best possible ${u.best.toFixed(3)}`),
  );
  if (unreachable.length > 0) {
    console.log("\nRubrics no output can score 1 on, even with every rule met (`rubric validate` says why for each):");
    for (const line of unreachable) console.log(line);
  }
}
