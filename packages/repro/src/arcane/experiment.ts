import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { loadGdpval } from "@rubric/autointeract";
import type { ArcaneRunOptions } from "./config.js";
import { evaluateSeed, type SeedResult } from "./evaluation.js";
import { arcaneTrainingSvg, scalingSvg } from "./plot.js";
import { summarize } from "./summary.js";
import { ArcaneTableSchema, arcaneMarkdown, type ArcaneTable } from "./table.js";
import { trainArcaneManagers } from "./training.js";

/**
 * The ARCANE reproduction in the rubric gym: for each seed, a world of simulated stakeholders,
 * SFT of the in-process manager on the teacher's sequences over the 175 training tasks, GSPO on
 * the stakeholders' true utility, then best-of-N on the 44 eval tasks for no rubric, SFT, GSPO
 * and the oracle rubric, NDCG@8 of each rubric's ranking, and a Wilcoxon test of GSPO vs SFT.
 * A simulation: its numbers are the gym's, measured, beside the paper's.
 */
export async function runArcane(options: ArcaneRunOptions): Promise<ArcaneTable> {
  const { config } = options;
  const started = performance.now();
  const gdpval = await loadGdpval(options.gdpvalDir);
  const results: SeedResult[] = [];
  for (const seed of config.seeds) {
    const managers = await trainArcaneManagers(seed, { ...options, gdpval });
    results.push(await evaluateSeed(managers, gdpval, options));
  }
  return summarize(results, config, (performance.now() - started) / 1000);
}

/**
 * Writes `table.json` (validated against its schema), `table.md` and `scaling.svg` into `dir`,
 * and `training.svg` when the run's seeds left training logs under `runDir` (by default
 * `<dir>/runs`, where `rubric repro arcane` keeps them); returns the paths written.
 */
export async function writeArcaneOutputs(
  table: ArcaneTable,
  dir: string,
  options: { readonly runDir?: string } = {},
): Promise<{ json: string; markdown: string; svg: string; training?: string }> {
  await mkdir(dir, { recursive: true });
  const paths = { json: join(dir, "table.json"), markdown: join(dir, "table.md"), svg: join(dir, "scaling.svg") };
  await writeFile(paths.json, `${JSON.stringify(ArcaneTableSchema.parse(table), null, 2)}\n`);
  await writeFile(paths.markdown, arcaneMarkdown(table));
  await writeFile(paths.svg, await scalingSvg(table));
  const svg = await arcaneTrainingSvg(table, options.runDir ?? join(dir, "runs"));
  if (svg === undefined) return paths;
  const training = join(dir, "training.svg");
  await writeFile(training, svg);
  return { ...paths, training };
}
