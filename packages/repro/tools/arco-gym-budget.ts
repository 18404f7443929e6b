/**
 * How the ARCO gym run's rollout budget was fixed, by a rule on outcome-only RL alone and on
 * training-stream tasks only: from each seed's warm-up, outcome RL for up to --max rollouts on
 * 2-hop tasks, evaluated greedily after every epoch on held-out tasks of the *training* stream;
 * the budget is the first point of the mean curve at or above 90 % (the baseline solves the easy
 * chains). The true-advantage control is never run here, and no evaluation task is generated.
 *
 *   pnpm --filter @rubric/repro exec tsx tools/arco-gym-budget.ts [--seeds 5] [--max 1024]
 */
import { parseArgs } from "node:util";
import { arcoGymConfig, runArcoGym } from "@rubric/repro";

const { values: args } = parseArgs({
  options: { seeds: { type: "string", default: "5" }, max: { type: "string", default: "1024" } },
});
const config = arcoGymConfig({
  hops: [2],
  seeds: Number(args.seeds),
  budget: Number(args.max),
  methods: ["outcome"],
  evaluationSplit: "train",
  seed: 1000,
});
const table = await runArcoGym(config);
const perSeed = table.curves["outcome"]!["2"]!;
const points = perSeed[0]!.map((point, i) => ({
  rollouts: point.rollouts,
  success: perSeed.reduce((sum, curve) => sum + curve[i]!.success, 0) / perSeed.length,
}));
console.log("rollouts  mean greedy success of outcome-only RL, H = 2, held-out training-stream tasks");
for (const p of points) console.log(`${String(p.rollouts).padStart(8)}  ${(100 * p.success).toFixed(1)} %`);
const budget = points.find((p) => p.success >= 0.9);
console.log(budget === undefined ? `never ≥ 90 % within ${args.max} rollouts` : `budget: ${budget.rollouts} rollouts`);
