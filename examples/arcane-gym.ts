/**
 * The ARCANE reproduction of @rubric/repro, small enough to watch: one world seed, the manager
 * trained by SFT then a few GSPO batches on part of the GDPval training split, and best-of-N on
 * part of the eval split for No Rubric / SFT / GSPO / Oracle. The full tables are
 * `rubric repro arcane [--quick] --out <dir>`; this is the same library call with a smaller config.
 *
 *   pnpm --filter @rubric/examples arcane -- --out runs/arcane-small
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { ARCANE_METHODS, arcaneConfig, methodLabels, runArcane, writeArcaneOutputs } from "@rubric/repro";

// pnpm passes the "--" that separates its own arguments through; it is not ours.
const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== "--"),
  options: { out: { type: "string" } },
});
const shared = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../shared/", import.meta.url));

// 40 training and 12 eval tasks, 1 seed, 4 GSPO batches: seconds rather than the quick run's minute.
const config = arcaneConfig({ quick: true, seeds: 1, gspoBatches: 4, trainTasks: 40, evalTasks: 12, ns: [1, 8] });
const table = await runArcane({ gdpvalDir: `${shared}/data/gdpval`, config });
const labels = methodLabels(table);
console.log(`Mean U* of the pick over ${config.evalTasks} eval tasks (N=1 → N=8), seed 1:`);
for (const method of ARCANE_METHODS) {
  const { n1, n8 } = table.meanReturn[method];
  console.log(`  ${labels[method].padEnd(16)} ${n1.mean.toFixed(3)} → ${n8.mean.toFixed(3)}`);
}
if (args.out) console.log(`wrote ${Object.values(await writeArcaneOutputs(table, args.out)).join(", ")}`);
