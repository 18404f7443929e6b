/**
 * Benchmarks of the ARCO reproduction on HotpotQA: wall time of `repro arco --quick` (target
 * ≤ 5 min on 2 cores) and of the full run (3 seeds, every method, K ∈ {1, 3, 5}; target ≤ 30
 * min), training rollouts per second, and where training time goes (environment, policy, μ
 * inference, π update, μ training, export and reload).
 *
 *   pnpm --filter @rubric/repro run bench:arco [--append ../../BENCHMARKS.md] [--skip-full] [--out <dir>]
 *
 * Prints the BENCHMARKS.md section, or appends it to the file --append names.
 *
 * Needs /usr/bin/python3 with torch (the sidecar) and onnxruntime-node, as the CLI does.
 */
import { appendFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { SidecarClient } from "@rubric/sidecar";
import { type ArcoTable, arcoConfig, runArco } from "../src/index.js";

const { values: args } = parseArgs({
  options: { append: { type: "string" }, out: { type: "string" }, "skip-full": { type: "boolean", default: false } },
});
const shared = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../shared/", import.meta.url));
const paths = { trainPath: `${shared}/data/hotpotqa/train.jsonl`, evalPath: `${shared}/data/hotpotqa/dev.jsonl` };

function describe(name: string, table: ArcoTable, target: string): string[] {
  const t = table.timing;
  const config = table.config as { seeds: unknown[]; trainQuestions: number; evalQuestions: number };
  const shares = Object.entries(t.shares)
    .map(([key, share]) => `${key} ${(100 * share).toFixed(0)}%`)
    .join(", ");
  return [
    `${name} (${config.seeds.length} seed${config.seeds.length === 1 ? "" : "s"}, ${Object.keys(table.methods).length + Object.keys(table.ablations).length} runs per seed, ${config.trainQuestions} train / ${config.evalQuestions} dev questions): ${(t.totalMs / 1000).toFixed(0)} s wall (target ${target})`,
    `  training: ${t.rollouts} rollouts at ${t.rolloutsPerSecond.toFixed(1)} rollouts/s; time shares — ${shares}; the rest of the wall time is warm-ups (teacher, π SFT, μ SFT), evaluation and diagnostics`,
  ];
}

const client = await SidecarClient.start({ threads: os.availableParallelism() });
const lines: string[] = [];
try {
  const scratch = await mkdtemp(join(os.tmpdir(), "rubric-arco-bench-"));
  try {
    const quick = await runArco(arcoConfig({ quick: true, ...paths }), { out: join(scratch, "quick"), client });
    lines.push(...describe("`rubric repro arco --quick`", quick, "≤ 300 s"));
    if (!args["skip-full"]) {
      const full = await runArco(arcoConfig({ ...paths }), { out: args.out ?? join(scratch, "full"), client });
      lines.push(...describe("`rubric repro arco` (full)", full, "≤ 1800 s"));
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
} finally {
  await client.close();
}
// The section as BENCHMARKS.md holds it: printed (`pnpm bench` appends stdout), or appended with --append.
const section = `## @rubric/repro — the ARCO reproduction\n\nMeasured ${new Date().toISOString().slice(0, 10)} on ${os.cpus()[0]?.model ?? "unknown CPU"}, ${os.availableParallelism()} cores, Node ${process.version}, by \`pnpm --filter @rubric/repro run bench:arco\` (run through tsx; the library code is the same as the CLI's).\n\n${lines.map((l) => (l.startsWith("  ") ? `  - ${l.trim()}` : `- ${l}`)).join("\n")}\n`;
if (args.append) appendFileSync(args.append, `\n${section}`);
else console.log(section);
