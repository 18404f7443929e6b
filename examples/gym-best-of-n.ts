/**
 * The rubric gym on the 44 eval tasks of the ARCANE split: the stakeholder's true utility U* of
 * the output chosen at best-of-N, for rubrics of increasing quality — none (a random pick), the
 * rubric the default policy manager elicits in dialogue, and the oracle (U*'s own criteria and
 * weights) — with the worker unguided or guided by the same rubric. A simulation, not the paper's
 * experiment: see the package README for what the gym is and is not.
 *
 *   pnpm --filter @rubric/examples gym -- --seed 2026 --n 8
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { bootstrapCI, wilcoxonSignedRank } from "@rubric/core";
import {
  bestOfN,
  gymTask,
  loadGdpval,
  policyManager,
  runEpisode,
  simulatedStakeholder,
  simulatedWorker,
} from "@rubric/autointeract";

// pnpm passes the "--" that separates its own arguments through; it is not ours.
const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== "--"),
  options: {
    seed: { type: "string", default: "2026" },
    n: { type: "string", default: "8" },
    budget: { type: "string", default: "5" },
  },
});
const seed = Number(args.seed);
const n = Number(args.n);
const shared = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../shared/", import.meta.url));
const gdpval = await loadGdpval(`${shared}/data/gdpval`);
const worker = simulatedWorker();
const rows = {
  random: [] as number[],
  elicitedSelect: [] as number[],
  elicitedGuide: [] as number[],
  oracleSelect: [] as number[],
  oracleGuide: [] as number[],
};
for (const e of gdpval.eval) {
  const task = gymTask(e.task);
  const oracle = simulatedStakeholder(task, seed).utility;
  const episode = await runEpisode({
    task,
    manager: policyManager(),
    stakeholder: simulatedStakeholder(task, seed),
    questionBudget: Number(args.budget),
  });
  if (!episode.rubric) throw new Error(`${task.id}: ${episode.error?.message}`);
  rows.random.push((await bestOfN(task, { seed, n, worker })).utility);
  rows.elicitedSelect.push((await bestOfN(task, { seed, n, worker, selector: episode.rubric })).utility);
  rows.elicitedGuide.push(
    (await bestOfN(task, { seed, n, worker, guide: episode.rubric, selector: episode.rubric })).utility,
  );
  rows.oracleSelect.push((await bestOfN(task, { seed, n, worker, selector: oracle })).utility);
  rows.oracleGuide.push((await bestOfN(task, { seed, n, worker, guide: oracle, selector: oracle })).utility);
}
const label: Record<keyof typeof rows, string> = {
  random: "no rubric (random pick)",
  elicitedSelect: "elicited rubric, selects",
  elicitedGuide: "elicited rubric, guides + selects",
  oracleSelect: "oracle rubric, selects",
  oracleGuide: "oracle rubric, guides + selects",
};
console.log(`Rubric gym, ${gdpval.eval.length} eval tasks, best-of-${n}, seed ${seed}: mean U* (95% bootstrap CI)\n`);
for (const key of Object.keys(rows) as (keyof typeof rows)[]) {
  const ci = bootstrapCI(rows[key], { seed: `${seed}-${key}`, resamples: 4000 });
  console.log(`${label[key].padEnd(36)} ${ci.estimate.toFixed(3)}  (${ci.lower.toFixed(3)} – ${ci.upper.toFixed(3)})`);
}
const test = wilcoxonSignedRank(rows.elicitedGuide, rows.random);
console.log(
  `\nelicited (guide + select) vs random: Wilcoxon signed-rank statistic ${test.statistic}, p = ${test.pValue.toExponential(2)} (${test.method})`,
);
