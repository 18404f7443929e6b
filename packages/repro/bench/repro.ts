/**
 * Benchmarks of the ARCANE reproduction in the gym: wall time of `repro arcane --quick` (target
 * ≤ 3 min here) and of the full run (5 seeds, target ≤ 20 min), training rollouts per second, and
 * where training time goes (verifiers, the simulated worker, policy math).
 *
 *   pnpm --filter @rubric/repro run bench [--append ../../BENCHMARKS.md] [--skip-full] [--out <dir>]
 *
 * With --out, the full run's table.json / table.md / scaling.svg are written there too.
 */
import { appendFileSync } from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { arcaneConfig, runArcane, writeArcaneOutputs, type ArcaneTable } from "../src/index.js";

const { values: args } = parseArgs({
  options: { append: { type: "string" }, out: { type: "string" }, "skip-full": { type: "boolean", default: false } },
});
const shared = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../shared/", import.meta.url));
const gdpvalDir = `${shared}/data/gdpval`;

function describe(name: string, table: ArcaneTable, target: string): string[] {
  const t = table.timing;
  const seeds = (table.config["seeds"] as number[]).length;
  return [
    `${name} (${seeds} seed${seeds === 1 ? "" : "s"}, ${table.config["gspoBatches"]} GSPO batches of ${table.config["promptsPerBatch"]} tasks × ${table.config["groupSize"]} rubrics): ${t.seconds.toFixed(1)} s wall (target ${target})`,
    `  training: ${t.trainingRollouts} rollouts at ${t.rolloutsPerSecond.toFixed(0)} rollouts/s; time shares — verifiers ${(100 * t.verifierShare).toFixed(0)}%, worker ${(100 * t.workerShare).toFixed(0)}%, policy math (sampling, log-probs, gradients, Adam) ${(100 * t.policyShare).toFixed(0)}%`,
  ];
}

const lines: string[] = [];
const quick = await runArcane({ gdpvalDir, config: arcaneConfig({ quick: true }) });
lines.push(...describe("`rubric repro arcane --quick`", quick, "≤ 180 s"));
if (!args["skip-full"]) {
  const full = await runArcane({ gdpvalDir, config: arcaneConfig({ quick: false }) });
  lines.push(...describe("`rubric repro arcane` (full)", full, "≤ 1200 s"));
  if (args.out) await writeArcaneOutputs(full, args.out);
}
for (const l of lines) console.log(l);
if (args.append) {
  const header = `\n## @rubric/repro — the ARCANE reproduction\n\nMeasured ${new Date().toISOString().slice(0, 10)} on ${os.cpus()[0]?.model ?? "unknown CPU"}, ${os.availableParallelism()} cores, Node ${process.version}, by \`pnpm --filter @rubric/repro run bench --append ../../BENCHMARKS.md\` (run through tsx; the library code is the same as the CLI's). Wall time includes loading GDPval and evaluation; rollouts/s counts Stage II training only.\n\n`;
  appendFileSync(
    args.append,
    `${header}${lines.map((l) => (l.startsWith("  ") ? `  - ${l.trim()}` : `- ${l}`)).join("\n")}\n`,
  );
}
