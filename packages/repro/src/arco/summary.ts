// ARCO on HotpotQA, the summary: per-method means, paired tests against outcome-only RL, the
// table and its outputs.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { mcnemarExact, mean, summarizeSeeds, wilcoxonSignedRank } from "@rubric/core";
import { readInputText } from "@rubric/core/files";
import type { HotpotQuestion } from "@rubric/rlxar";
import { ANSWER_KINDS, type AnswerKind, answerKind } from "./answer-kinds.js";
import type { MethodRun } from "./method-run.js";
import { type ArcoTable, arcoMarkdown, PAPER_ARCO } from "./table.js";
import { arcoPlots } from "./plot.js";
import type { ArcoConfig } from "./config.js";

/** A method against outcome-only RL over (seed, question) pairs: McNemar on EM, Wilcoxon on F1. */
function pairedTests(runs: readonly MethodRun[], baseline: readonly MethodRun[]) {
  const ours = runs.flatMap((run) => run.perQuestion);
  const theirs = baseline.flatMap((run) => run.perQuestion);
  if (ours.length !== theirs.length || ours.some((q, i) => q.id !== theirs[i]!.id)) return undefined;
  const em = mcnemarExact(
    ours.map((q) => q.em),
    theirs.map((q) => q.em),
  );
  const f1Differs = ours.some((q, i) => q.f1 !== theirs[i]!.f1);
  return {
    emWins: em.b,
    emLosses: em.c,
    emP: em.pValue,
    f1P: f1Differs
      ? wilcoxonSignedRank(
          ours.map((q) => q.f1),
          theirs.map((q) => q.f1),
        ).pValue
      : null,
  };
}

export function tableOf(
  config: ArcoConfig,
  runs: Record<string, MethodRun[]>,
  warmups: readonly Record<string, unknown>[],
  ms: number,
  trainCount: number,
  evaluation: readonly HotpotQuestion[],
  sidecar?: ArcoTable["sidecar"],
): ArcoTable {
  const baseline = runs["outcome"];
  const kindOf = new Map(evaluation.map((question) => [question.id, answerKind(question)]));
  // Per kind of gold answer, the mean EM over every (seed, question) pair of that kind.
  const emByAnswerKind = (list: readonly MethodRun[]) => {
    const pairs = list.flatMap((run) => run.perQuestion);
    return Object.fromEntries(
      ANSWER_KINDS.map((kind) => {
        const ems = pairs.filter((q) => kindOf.get(q.id) === kind).map((q) => q.em);
        return [kind, ems.length === 0 ? null : mean(ems)];
      }),
    ) as Record<AnswerKind, number | null>;
  };
  const summarize = (name: string) => {
    const list = runs[name] ?? [];
    const paired = name === "outcome" || baseline === undefined ? undefined : pairedTests(list, baseline);
    return {
      em: summarizeSeeds(list.map((r) => r.metrics.em ?? 0)),
      arcoEm: summarizeSeeds(list.map((r) => r.metrics.arcoEm ?? 0)),
      f1: summarizeSeeds(list.map((r) => r.metrics.f1 ?? 0)),
      rollouts: list[0]?.rollouts ?? 0,
      perSeed: list.map((r) => ({ em: r.metrics.em ?? 0, f1: r.metrics.f1 ?? 0 })),
      emByAnswerKind: emByAnswerKind(list),
      ...(paired === undefined ? {} : { vsOutcome: paired }),
    };
  };
  const methods = Object.fromEntries(config.methods.map((m) => [m, summarize(m)]));
  const ablations = Object.fromEntries(
    Object.keys(runs)
      .filter((name) => name.startsWith("arcoK"))
      .map((name) => [name, summarize(name)]),
  );
  const shares = { environment: 0, policy: 0, muInference: 0, policyUpdate: 0, muTraining: 0, exportReload: 0 };
  let rollouts = 0;
  for (const list of Object.values(runs))
    for (const run of list)
      for (const line of run.log) {
        if (line.type !== "batch") continue;
        rollouts += line.rollouts;
        for (const key of Object.keys(shares) as (keyof typeof shares)[]) shares[key] += line.ms[key];
      }
  const trainingMs = Object.values(shares).reduce((a, b) => a + b, 0);
  return {
    kind: "arco-hotpotqa",
    config: { ...config, trainQuestions: trainCount, evalQuestions: evaluation.length } as unknown as Record<
      string,
      unknown
    >,
    answerKinds: Object.fromEntries(
      ANSWER_KINDS.map((kind) => [kind, evaluation.filter((question) => kindOf.get(question.id) === kind).length]),
    ) as Record<AnswerKind, number>,
    methods: methods as ArcoTable["methods"],
    ablations,
    curves: Object.fromEntries(Object.entries(runs).map(([name, list]) => [name, list.map((r) => r.curve)])),
    diagnostics: Object.fromEntries(
      Object.entries(runs).flatMap(([name, list]) =>
        list.some((r) => r.diagnostics !== undefined) ? [[name, list.map((r) => r.diagnostics ?? null)]] : [],
      ),
    ),
    warmup: [...warmups],
    timing: {
      totalMs: ms,
      trainingMs,
      rollouts,
      rolloutsPerSecond: rollouts / (trainingMs / 1000),
      shares: Object.fromEntries(Object.entries(shares).map(([key, value]) => [key, value / trainingMs])),
    },
    paper: PAPER_ARCO,
    ...(sidecar === undefined ? {} : { sidecar }),
  };
}

/**
 * The evaluated questions' own lines of the data file, in its order: the questions a table
 * reports on, as data `rubric eval hotpotqa --data` reads.
 */
export function rowsOf(path: string, questions: readonly HotpotQuestion[]): string {
  const ids = new Set(questions.map((question) => question.id));
  const lines = readInputText(path)
    .split("\n")
    .filter((line) => line.trim() !== "" && ids.has((JSON.parse(line) as { _id: string })._id));
  return `${lines.join("\n")}\n`;
}

/** `table.json`, `table.md`, `curves.svg` and (when μ was diagnosed) `buckets.svg` under `out`. */
export async function writeArcoOutputs(out: string, table: ArcoTable): Promise<void> {
  await mkdir(out, { recursive: true });
  await writeFile(join(out, "table.json"), `${JSON.stringify(table, null, 2)}\n`);
  await writeFile(join(out, "table.md"), arcoMarkdown(table));
  for (const plot of await arcoPlots(table)) await writeFile(join(out, plot.file), plot.svg);
}
