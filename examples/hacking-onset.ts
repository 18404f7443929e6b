/**
 * Hacking onset in the rubric gym. Each GDPval task's simulated stakeholder holds a true utility
 * U* (a rubric of rule criteria). Its proxy is what a hasty rubric writer keeps of it: for every
 * criterion whose check names a literal term — a section heading, "we recommend", a term of the
 * brief — a presence-only `includes` criterion for that term, with the same weight; the criteria
 * about counts, length, tone and absences are dropped. hackbench audits the proxy on honest gym
 * documents before any training. Then a small log-linear worker (./document-policy.ts; it can also
 * pad its text and stuff the rubric's terms in as a bare list) is trained with @rubric/gspo's
 * `trainGspo` on reward = proxy score, and every batch logs the proxy and U* of the same outputs,
 * both scored by the real rule verifiers. Onset: the first batch from which the gap proxy − U*
 * stays above its batch-0 value (95% bootstrap interval over tasks, paired by task, above 0).
 * A simulation: the numbers describe this gym, not a language model.
 *
 * What seed 1 with the defaults measured (12 tasks, 30 batches, 8 rollouts per task): hackbench
 * flags all 12 proxies before training (keyword-stuffing and rubric-echo on all, prompt-echo on
 * 5). Training lifts the proxy from 0.41 to 1.00 and U* from 0.45 to 0.66 (gains +0.59 and +0.21
 * per task); the gap opens from batch 1. Stuffing goes from 2% to 99% of documents, yet at the end
 * it adds only 0.05 to the proxy: the worker also learned to write what the proxy pays for. U*
 * does not fall; it stops rising while the proxy saturates, because the proxy leaves out most of
 * what the stakeholder values. Padding, which the proxy does not pay, drifts (6% → 52%).
 *
 *   pnpm --filter @rubric/examples hacking-onset -- --seed 1 --out runs/hacking-onset
 *
 * Writes proxy-vs-true.svg, hacking-onset.json and hacking-onset.md into --out.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { CRITERIA_BANK, gymTask, loadGdpval, simulatedStakeholder, simulatedWorker } from "@rubric/autointeract";
import { bootstrapCI, mean, type FlatRubric } from "@rubric/core";
import { proxyScores, trainGspo, trueUtility, type GspoLogEntry } from "@rubric/gspo";
import { cardToMarkdown, rubricUtility, runHackbench, type IntegrityCard } from "@rubric/hackbench";
import { rulesRegistry } from "@rubric/verifiers";
import {
  DocumentPolicy,
  DocumentPolicyBackend,
  documentDecisions,
  presenceTerms,
  writeDocument,
  type WorkerPrompt,
} from "./document-policy.js";

/** The proxy of a true utility: a presence-only `includes` criterion for each of its criteria that names terms, same weight. */
export function presenceProxy(utility: FlatRubric): FlatRubric {
  const criteria = utility.criteria.flatMap((c) => {
    const terms = presenceTerms(c.verifier);
    return c.polarity === "reward" && terms.length > 0
      ? [
          {
            id: `mentions:${c.id}`,
            text: `Mentions ${terms.join(" and ")}`,
            weight: c.weight,
            polarity: "reward" as const,
            verifier: { kind: "includes" as const, terms },
          },
        ]
      : [];
  });
  return { id: `${utility.id}-presence-proxy`, title: "Presence-only proxy of the stakeholder's utility", criteria };
}

/** What the worker reads off a proxy: which bank criterion each proxy criterion stands for (all brief terms as one). */
function featureOf(proxyCriterionId: string): string {
  const id = proxyCriterionId.replace(/^mentions:/, "");
  return id.startsWith("brief-") ? "pays:brief" : `pays:${id}`;
}

/** Every feature a proxy can switch on: the bank criteria whose checks name terms, and the brief. */
export const PROXY_FEATURES: readonly string[] = [
  ...CRITERIA_BANK.filter((c) => presenceTerms(c.verifier).length > 0).map((c) => `pays:${c.id}`),
  "pays:brief",
];

export interface HackingOnsetConfig {
  readonly seed: number;
  /** The first GDPval eval tasks whose proxy has at least one criterion. */
  readonly tasks: number;
  readonly batches: number;
  readonly groupSize: number;
  /** The initial probability of each exploit (padding, stuffing). */
  readonly exploitPrior: number;
  /** Honest gym documents per task that hackbench probes. */
  readonly honestSamples: number;
  /** Bootstrap resamples of every interval (hackbench's and the onset's). */
  readonly resamples: number;
}

export const DEFAULT_CONFIG: HackingOnsetConfig = {
  seed: 1,
  tasks: 12,
  batches: 30,
  groupSize: 8,
  exploitPrior: 0.05,
  honestSamples: 8,
  resamples: 4000,
};

export const SHARED_DIR = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../shared/", import.meta.url));

/** The worker's prompts: GDPval eval tasks in order, each with its stakeholder (world seed `seed`) and the proxy of its U*. */
export async function onsetPrompts(
  config: Pick<HackingOnsetConfig, "seed" | "tasks">,
  gdpvalDir = `${SHARED_DIR}/data/gdpval`,
): Promise<WorkerPrompt[]> {
  const gdpval = await loadGdpval(gdpvalDir);
  const prompts: WorkerPrompt[] = [];
  for (const example of gdpval.eval) {
    if (prompts.length === config.tasks) break;
    const task = gymTask(example.task);
    const proxy = presenceProxy(simulatedStakeholder(task, config.seed).utility);
    if (proxy.criteria.length > 0)
      prompts.push({
        task,
        replies: [],
        stakeholderSeed: config.seed,
        proxy,
        features: [...new Set(proxy.criteria.map((c) => featureOf(c.id)))],
      });
  }
  return prompts;
}

/** hackbench on a task's proxy, with honest documents of the gym's unguided worker and U* beside the proxy. */
export async function auditProxy(
  prompt: WorkerPrompt,
  config: Pick<HackingOnsetConfig, "seed" | "honestSamples" | "resamples">,
): Promise<IntegrityCard> {
  const honest = await simulatedWorker().produce(prompt.task, undefined, config.honestSamples, { seed: config.seed });
  const utility = simulatedStakeholder(prompt.task, prompt.stakeholderSeed).utility;
  const samples = honest.map((output, k) => ({
    id: `${prompt.task.id}:${k}`,
    input: prompt.task.prompt,
    output: output.text,
  }));
  return runHackbench(prompt.proxy, samples, {
    registry: rulesRegistry(),
    seed: config.seed,
    resamples: config.resamples,
    trueUtility: rubricUtility(() => utility),
  });
}

/**
 * One training batch: mean proxy and U* of its rollouts (overall and per task, in prompt order),
 * the same of each rollout's document without its exploits, and how often each exploit was taken.
 */
export interface BatchRecord {
  readonly batch: number;
  readonly proxy: number;
  readonly trueUtility: number;
  readonly withoutExploits: { readonly proxy: number; readonly trueUtility: number };
  readonly stuffed: number;
  readonly padded: number;
  readonly tasks: { readonly proxy: readonly number[]; readonly trueUtility: readonly number[] };
}

/**
 * Trains a fresh worker (the gym's worker plus the two exploits) with GSPO on reward = the proxy
 * score of the document it writes; U* of the same document is recorded, never rewarded.
 */
export async function trainAgainstProxy(
  prompts: readonly WorkerPrompt[],
  config: Pick<HackingOnsetConfig, "seed" | "batches" | "groupSize" | "exploitPrior">,
  onBatch?: (record: BatchRecord) => void,
) {
  const policy = new DocumentPolicy({ decisions: documentDecisions(config.exploitPrior), features: PROXY_FEATURES });
  const index = new Map(prompts.map((p, i) => [p, i]));
  let rollouts: {
    task: number;
    proxy: number;
    trueUtility: number;
    honest: { proxy: number; trueUtility: number };
    stuffed: boolean;
    padded: boolean;
  }[] = [];
  const score = async (prompt: WorkerPrompt, text: string) => ({
    proxy: (await proxyScores(prompt.proxy, prompt, [text]))[0]!,
    trueUtility: await trueUtility(prompt, text),
  });
  const batches: BatchRecord[] = [];
  const log = await trainGspo({
    backend: new DocumentPolicyBackend(policy),
    prompts,
    seed: config.seed,
    batches: config.batches,
    groupSize: config.groupSize,
    async reward(prompt, tokens, { seed }) {
      const { pad, stuff } = policy.writing(prompt, tokens);
      const scored = await score(prompt, writeDocument(policy, prompt, tokens, seed));
      const honest =
        pad || stuff ? await score(prompt, writeDocument(policy, prompt, tokens, seed, { exploits: false })) : scored;
      rollouts.push({ task: index.get(prompt)!, ...scored, honest, stuffed: stuff, padded: pad });
      return scored.proxy;
    },
    onLog(entry) {
      if (entry.stage !== "gspo") return;
      const perTask = (pick: (r: (typeof rollouts)[number]) => number) =>
        prompts.map((_, i) => mean(rollouts.filter((r) => r.task === i).map(pick)));
      const record: BatchRecord = {
        batch: entry.batch,
        proxy: mean(rollouts.map((r) => r.proxy)),
        trueUtility: mean(rollouts.map((r) => r.trueUtility)),
        withoutExploits: {
          proxy: mean(rollouts.map((r) => r.honest.proxy)),
          trueUtility: mean(rollouts.map((r) => r.honest.trueUtility)),
        },
        stuffed: mean(rollouts.map((r) => (r.stuffed ? 1 : 0))),
        padded: mean(rollouts.map((r) => (r.padded ? 1 : 0))),
        tasks: { proxy: perTask((r) => r.proxy), trueUtility: perTask((r) => r.trueUtility) },
      };
      rollouts = [];
      batches.push(record);
      onBatch?.(record);
    },
  });
  return { policy, batches, log };
}

/** A mean change over tasks with its 95% bootstrap interval. */
export interface Change {
  readonly mean: number;
  readonly ci: readonly [number, number];
}

function change(differences: readonly number[], seed: string, resamples: number): Change {
  const ci = bootstrapCI(differences, { seed, resamples });
  return { mean: ci.estimate, ci: [ci.lower, ci.upper] };
}

export interface Divergence {
  /** Per batch b ≥ 1: the change of the gap proxy − U* since batch 0, per task, averaged over tasks. */
  readonly gap: readonly (Change & { readonly batch: number })[];
  /** The first batch from which every later gap change has its interval above 0; null when none. */
  readonly onset: number | null;
  /** Last batch − first batch, per task. */
  readonly proxyGain: Change;
  readonly trueGain: Change;
}

/** Where the proxy and U* part ways, from the per-task batch means (paired by task). */
export function divergence(
  batches: readonly BatchRecord[],
  options: { readonly seed: number; readonly resamples: number },
): Divergence {
  const first = batches[0]!;
  const last = batches.at(-1)!;
  const gapOf = (b: BatchRecord, i: number) => b.tasks.proxy[i]! - b.tasks.trueUtility[i]!;
  const gap = batches.slice(1).map((b) => ({
    batch: b.batch,
    ...change(
      b.tasks.proxy.map((_, i) => gapOf(b, i) - gapOf(first, i)),
      `${options.seed}:gap:${b.batch}`,
      options.resamples,
    ),
  }));
  let onset: number | null = null;
  for (let k = gap.length - 1; k >= 0 && gap[k]!.ci[0] > 0; k--) onset = gap[k]!.batch;
  const gain = (pick: (b: BatchRecord) => readonly number[], label: string) =>
    change(
      pick(last).map((v, i) => v - pick(first)[i]!),
      `${options.seed}:${label}`,
      options.resamples,
    );
  return {
    gap,
    onset,
    proxyGain: gain((b) => b.tasks.proxy, "proxy-gain"),
    trueGain: gain((b) => b.tasks.trueUtility, "true-gain"),
  };
}

export interface HackingOnsetReport {
  readonly config: HackingOnsetConfig;
  readonly tasks: readonly {
    readonly id: string;
    readonly sector: string;
    readonly proxyCriteria: number;
    readonly utilityCriteria: number;
  }[];
  readonly cards: readonly IntegrityCard[];
  readonly batches: readonly BatchRecord[];
  readonly training: readonly GspoLogEntry[];
  readonly divergence: Divergence;
}

/** The whole experiment: prompts, the audit before training, training, and where the curves part. */
export async function runHackingOnset(
  config: HackingOnsetConfig,
  progress: {
    onCard?: (prompt: WorkerPrompt, card: IntegrityCard) => void;
    onBatch?: (record: BatchRecord) => void;
  } = {},
): Promise<HackingOnsetReport> {
  const prompts = await onsetPrompts(config);
  const cards: IntegrityCard[] = [];
  for (const prompt of prompts) {
    cards.push(await auditProxy(prompt, config));
    progress.onCard?.(prompt, cards.at(-1)!);
  }
  const { batches, log } = await trainAgainstProxy(prompts, config, progress.onBatch);
  return {
    config,
    tasks: prompts.map((p) => ({
      id: p.task.id,
      sector: p.task.sector,
      proxyCriteria: p.proxy.criteria.length,
      utilityCriteria: simulatedStakeholder(p.task, p.stakeholderSeed).utility.criteria.length,
    })),
    cards,
    batches,
    training: log,
    divergence: divergence(batches, config),
  };
}

const fixed = (v: number) => v.toFixed(3);
const interval = (c: Change) => `${c.mean >= 0 ? "+" : ""}${fixed(c.mean)} [${fixed(c.ci[0])}, ${fixed(c.ci[1])}]`;

/** How often each probe flagged a task's proxy, most often first. */
export function exploitCounts(cards: readonly IntegrityCard[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const card of cards) for (const id of card.exploits) counts.set(id, (counts.get(id) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

/** The proxy and U* curves over batches, with the exploit rates and the onset, as a standalone SVG. */
export function onsetSvg(report: HackingOnsetReport): string {
  const [width, height] = [740, 420];
  const m = { left: 56, right: 230, top: 52, bottom: 52 };
  const [plotW, plotH] = [width - m.left - m.right, height - m.top - m.bottom];
  const last = Math.max(1, report.batches.length - 1);
  const x = (b: number) => Math.round((m.left + (b / last) * plotW) * 10) / 10;
  const y = (v: number) => Math.round((m.top + (1 - v) * plotH) * 10) / 10;
  const curves = [
    { label: "proxy reward (trained on)", color: "#d62728", dash: "", pick: (b: BatchRecord) => b.proxy },
    {
      label: "proxy, exploits removed",
      color: "#d62728",
      dash: "3 3",
      pick: (b: BatchRecord) => b.withoutExploits.proxy,
    },
    { label: "true utility U*", color: "#2ca02c", dash: "", pick: (b: BatchRecord) => b.trueUtility },
    { label: "keyword stuffing rate", color: "#7f7f7f", dash: "6 4", pick: (b: BatchRecord) => b.stuffed },
    { label: "padding rate (unpaid)", color: "#9467bd", dash: "2 3", pick: (b: BatchRecord) => b.padded },
  ];
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${m.left}" y="22" font-size="15" font-weight="bold">Proxy reward vs true utility under GSPO (rubric gym, seed ${report.config.seed})</text>`,
    `<text x="${m.left}" y="40" fill="#555">${report.tasks.length} GDPval tasks × ${report.config.groupSize} rollouts per batch — simulation</text>`,
  ];
  for (let k = 0; k <= 5; k++)
    parts.push(
      `<line x1="${m.left}" x2="${m.left + plotW}" y1="${y(k / 5)}" y2="${y(k / 5)}" stroke="#e5e5e5"/>`,
      `<text x="${m.left - 8}" y="${y(k / 5) + 4}" text-anchor="end">${(k / 5).toFixed(1)}</text>`,
    );
  for (let b = 0; b <= last; b += Math.max(1, Math.ceil(last / 10)))
    parts.push(`<text x="${x(b)}" y="${m.top + plotH + 18}" text-anchor="middle">${b}</text>`);
  parts.push(
    `<line x1="${m.left}" x2="${m.left + plotW}" y1="${m.top + plotH}" y2="${m.top + plotH}" stroke="#333"/>`,
    `<line x1="${m.left}" x2="${m.left}" y1="${m.top}" y2="${m.top + plotH}" stroke="#333"/>`,
  );
  parts.push(`<text x="${m.left + plotW / 2}" y="${height - 12}" text-anchor="middle">GSPO batch</text>`);
  const onset = report.divergence.onset;
  if (onset !== null)
    parts.push(
      `<line x1="${x(onset)}" x2="${x(onset)}" y1="${m.top}" y2="${m.top + plotH}" stroke="#ff7f0e" stroke-dasharray="4 3"/>`,
      `<text x="${x(onset) + 4}" y="${m.top + plotH - 8}" fill="#ff7f0e">onset: batch ${onset}</text>`,
    );
  curves.forEach((c, i) => {
    const points = report.batches.map((b) => `${x(b.batch)},${y(c.pick(b))}`).join(" ");
    const dash = c.dash ? ` stroke-dasharray="${c.dash}"` : "";
    const ly = m.top + 10 + i * 22;
    const lx = m.left + plotW + 14;
    parts.push(
      `<polyline points="${points}" fill="none" stroke="${c.color}" stroke-width="2"${dash}/>`,
      `<line x1="${lx}" x2="${lx + 22}" y1="${ly}" y2="${ly}" stroke="${c.color}" stroke-width="2"${dash}/>`,
      `<text x="${lx + 28}" y="${ly + 4}">${c.label}</text>`,
    );
  });
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}

/** What the run measured, in sentences: the gains, what the exploits account for at the end, U*'s course, the onset. */
export function findings(report: HackingOnsetReport): string[] {
  const d = report.divergence;
  const end = report.batches.at(-1)!;
  const peak = report.batches.reduce((best, b) => (b.trueUtility > best.trueUtility ? b : best));
  return [
    `Proxy gain (last − first batch, per task, 95% bootstrap CI): ${interval(d.proxyGain)}; U* gain: ${interval(d.trueGain)}.`,
    `At the last batch (stuffing rate ${fixed(end.stuffed)}, padding rate ${fixed(end.padded)}) the exploits account for ${fixed(end.proxy - end.withoutExploits.proxy)} of the proxy (${fixed(end.proxy)} vs ${fixed(end.withoutExploits.proxy)} without them) and ${fixed(end.trueUtility - end.withoutExploits.trueUtility)} of U* (${fixed(end.trueUtility)} vs ${fixed(end.withoutExploits.trueUtility)}).`,
    `U* is highest at batch ${peak.batch} (${fixed(peak.trueUtility)}) and ends at ${fixed(end.trueUtility)}.`,
    d.onset === null
      ? "No onset: the gap proxy − U* never stays above its batch-0 value."
      : `Onset at batch ${d.onset}: from there on, the gap proxy − U* stays above its batch-0 value (95% bootstrap CI over tasks, paired by task).`,
  ];
}

/** The report as Markdown: the audit, the per-batch numbers, the onset, and the first task's integrity card in full. */
export function onsetMarkdown(report: HackingOnsetReport): string {
  const { config, divergence: d } = report;
  const hackable = report.cards.filter((c) => c.verdict === "hackable").length;
  const lines = [
    "# Hacking onset in the rubric gym",
    "",
    `Seed ${config.seed}; ${report.tasks.length} GDPval eval tasks; ${config.batches} GSPO batches of ${config.groupSize} rollouts per task; exploits start at p = ${config.exploitPrior}. A simulation: the numbers describe this gym.`,
    "",
    "## Before training: hackbench on the proxy",
    "",
    `${hackable} of ${report.cards.length} task proxies are hackable (${config.honestSamples} honest gym documents each). Probes that flagged them: ${
      exploitCounts(report.cards)
        .map(([id, n]) => `${id} (${n})`)
        .join(", ") || "none"
    }.`,
    "",
    "| task | sector | proxy / U* criteria | verdict | keyword-stuffing gain [95% CI] | its U* gain |",
    "| --- | --- | --- | --- | --- | --- |",
    ...report.cards.map((card, i) => {
      const t = report.tasks[i]!;
      const s = card.probes.find((p) => p.id === "keyword-stuffing");
      const gain = s ? `${fixed(s.gain)} [${fixed(s.ci[0])}, ${fixed(s.ci[1])}]` : "—";
      return `| ${t.id.slice(0, 8)} | ${t.sector} | ${t.proxyCriteria} / ${t.utilityCriteria} | ${card.verdict} | ${gain} | ${s?.trueGain ? fixed(s.trueGain.gain) : "—"} |`;
    }),
    "",
    "## Training against the proxy",
    "",
    "Proxy and U* of the documents written; in brackets, of the same documents without their padding and stuffed terms.",
    "",
    "| batch | proxy | U* | stuffed | padded | gap change since batch 0 [95% CI] |",
    "| --- | --- | --- | --- | --- | --- |",
    ...report.batches.map((b) => {
      const g = d.gap.find((x) => x.batch === b.batch);
      return `| ${b.batch} | ${fixed(b.proxy)} (${fixed(b.withoutExploits.proxy)}) | ${fixed(b.trueUtility)} (${fixed(b.withoutExploits.trueUtility)}) | ${fixed(b.stuffed)} | ${fixed(b.padded)} | ${g ? interval(g) : "—"} |`;
    }),
    "",
    ...findings(report).flatMap((line) => [line, ""]),
    "",
    `## Integrity card of task ${report.tasks[0]!.id}`,
    "",
    cardToMarkdown(report.cards[0]!),
  ];
  return `${lines.join("\n")}\n`;
}

export async function writeHackingOnset(report: HackingOnsetReport, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "hacking-onset.json"), `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(join(dir, "hacking-onset.md"), onsetMarkdown(report));
  await writeFile(join(dir, "proxy-vs-true.svg"), onsetSvg(report));
}

async function main(): Promise<void> {
  // pnpm passes the "--" that separates its own arguments through; it is not ours.
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((a) => a !== "--"),
    options: {
      seed: { type: "string" },
      out: { type: "string", default: "runs/hacking-onset" },
      tasks: { type: "string" },
      batches: { type: "string" },
      group: { type: "string" },
      "exploit-prior": { type: "string" },
    },
  });
  const number = (v: string | undefined, fallback: number) => (v === undefined ? fallback : Number(v));
  const config: HackingOnsetConfig = {
    ...DEFAULT_CONFIG,
    seed: number(values.seed, DEFAULT_CONFIG.seed),
    tasks: number(values.tasks, DEFAULT_CONFIG.tasks),
    batches: number(values.batches, DEFAULT_CONFIG.batches),
    groupSize: number(values.group, DEFAULT_CONFIG.groupSize),
    exploitPrior: number(values["exploit-prior"], DEFAULT_CONFIG.exploitPrior),
  };
  console.log(
    `Hackbench on each task's presence-only proxy, before training (${config.honestSamples} honest gym documents per task):`,
  );
  const report = await runHackingOnset(config, {
    onCard: (prompt, card) =>
      console.log(
        `  ${prompt.task.id.slice(0, 8)} ${prompt.task.sector.padEnd(44)} ${card.verdict.padEnd(8)} ${card.exploits.join(", ")}`,
      ),
    onBatch: (b) =>
      console.log(
        `batch ${String(b.batch).padStart(3)}  proxy ${fixed(b.proxy)} (${fixed(b.withoutExploits.proxy)})  U* ${fixed(b.trueUtility)} (${fixed(b.withoutExploits.trueUtility)})  stuffed ${fixed(b.stuffed)}  padded ${fixed(b.padded)}`,
      ),
  });
  console.log(`\n${findings(report).join("\n")}`);
  const out = resolve(values.out);
  await writeHackingOnset(report, out);
  console.log(`wrote ${join(out, "proxy-vs-true.svg")}, hacking-onset.json, hacking-onset.md`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) await main();
