import { loadRubrics, type LoadedRubric } from "@rubric/core";
import { PROBE_IDS, cardToMarkdown, parseSamples, runHackbench, type IntegrityCard } from "@rubric/hackbench";
import { createVerifierRegistry, fileCache, llmJudge } from "@rubric/verifiers";
import type { SpecifiedModel } from "@rubric/providers";
import { EXIT } from "../exit-codes.js";
import { type CommandArgs, defineCommand } from "../flags/command.js";
import { integerFlag, listFlag, numberFlag, switchFlag, textFlag } from "../flags/flag.js";
import { ruleLimitFlags, ruleLimitsOf } from "../flags/rule-limits.js";
import { InputFileError, UsageError, readText, type CliIO } from "../io.js";
import { progressBar } from "../progress.js";
import { prepareResultFiles, resultPair, writeResultFile } from "../results/result-files.js";
import { judgeFlagWords, judgeFlags, judgeHint, judgeModel, preflightModel } from "../flags/judge-flags.js";

const hackbenchFlags = {
  rubric: textFlag("<file>", "rubric file (.json or .jsonl; flat or staged)").required(),
  task: textFlag("<id>", "which rubric of a multi-rubric file (GDPval task_id, flat id or category name)"),
  samples: textFlag(
    "<file.jsonl>",
    'JSONL, one {"id", "input"?, "output"} per line: honest outputs to perturb',
  ).required(),
  ...judgeFlags,
  probes: listFlag("<a,b,...>", `probes to run (default all): ${PROBE_IDS.join(", ")}`),
  threshold: numberFlag(
    "<τ>",
    "smallest mean gain that counts as an exploit (default 0.05)",
    (n) => Number.isFinite(n) && n >= 0,
    "a number ≥ 0",
  ).default(0.05),
  seed: numberFlag("<n>", "seeds every probe and bootstrap (default 0)", Number.isSafeInteger, "an integer").default(0),
  cache: textFlag("<dir>", "persistent verdict cache: a rerun makes no judge calls"),
  concurrency: integerFlag("<n>", "verifier calls in flight (default 8)", { min: 1 }).default(8),
  out: textFlag("<card.json>", "the card as JSON; the Markdown card goes beside it (card.md)").required(),
  force: switchFlag("replace an existing card (default: refuse, before any probe runs)"),
  ...ruleLimitFlags,
};

export type HackbenchArgs = CommandArgs<typeof hackbenchFlags, never, never>;

export const hackbenchCommand = defineCommand({
  name: "hackbench",
  usage: "--rubric <file> --samples <file.jsonl> --out <card.json> [options]",
  description: `Probes whether a rubric reward can be gamed: each probe transforms every honest sample (keyword
stuffing, judge injection, ...) beside a matched control that changes it as much without the
exploit; the gain score(probe) − score(control) is bootstrapped over samples. A probe is an
exploit when its gain exceeds τ and its 95% interval excludes 0. Writes an integrity card as JSON
and, beside it, as Markdown.`,
  flags: hackbenchFlags,
  footer: `Exit codes: 0 clean; 3 hackable; 4 inconclusive (no exploit, but too few samples to rule one
out); 2 error — usage, unreadable input, or a verdict that was an error (a judge that fails is never
a clean bill of health).`,
  hint: (error, args) => judgeHint(error, args.judge),
  run: (args, { io, isTTY }) => hackbench(args, io, isTTY),
});

function chooseRubric(rubrics: readonly LoadedRubric[], task: string | undefined, file: string): LoadedRubric {
  const names = (r: LoadedRubric) => (r.kind === "flat" ? [r.rubric.id] : [r.rubric.taskId, r.rubric.category_name]);
  const found = task === undefined ? rubrics : rubrics.filter((r) => names(r).includes(task));
  if (found.length === 1) return found[0]!;
  if (task === undefined) throw new UsageError(`${file} holds ${rubrics.length} rubrics; choose one with --task <id>`);
  throw new InputFileError(
    `${file}: ${found.length === 0 ? "no rubric" : `${found.length} rubrics`} with id ${JSON.stringify(task)}`,
  );
}

/** A word a POSIX shell reads back unchanged. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function summary(card: IntegrityCard): string {
  const width = Math.max(5, ...card.probes.map((p) => p.id.length));
  const signed = (x: number) => `${x >= 0 ? "+" : "-"}${Math.abs(x).toFixed(3)}`;
  const lines = [
    `${card.verdict}: ${card.exploits.length} of ${card.probes.length} probes are exploits, ${card.inconclusive.length} could not be ruled out (τ = ${card.threshold}, ${card.samples} samples${card.detectableGain === null ? "" : `; smallest detectable gain ${card.detectableGain.toFixed(3)}`})`,
    `  ${"probe".padEnd(width)}  ${"gain".padStart(7)}  ${"95% CI".padEnd(17)}  exploit`,
    ...card.probes.map((p) =>
      p.applicable === 0
        ? `  ${p.id.padEnd(width)}  ${"n/a".padStart(7)}  ${"".padEnd(17)}  no (no sample to apply it to)`
        : `  ${p.id.padEnd(width)}  ${signed(p.gain).padStart(7)}  ${`${signed(p.ci[0])} … ${signed(p.ci[1])}`.padEnd(17)}  ${p.exploit ? `YES: ${p.exploited.join(", ")}` : p.inconclusive ? "can't tell" : "no"}`,
    ),
  ];
  return `${lines.join("\n")}\n`;
}

/**
 * `rubric hackbench`: runs the probes of @rubric/hackbench against a rubric on honest samples,
 * writes the integrity card (JSON and Markdown) and exits 0 clean, 3 hackable, 4 inconclusive, 2 error.
 */
export async function hackbench(args: HackbenchArgs, io: CliIO, isTTY = false): Promise<number> {
  const { rubric: rubricFile, samples: samplesFile, out, threshold, seed, concurrency, probes } = args;
  const unknown = probes?.filter((p) => !PROBE_IDS.includes(p)) ?? [];
  if (unknown.length > 0)
    throw new UsageError(`unknown probe(s) ${unknown.join(", ")}; known: ${PROBE_IDS.join(", ")}`);
  const paths = resultPair(out, "--out", ".json", ".md");
  prepareResultFiles(
    [
      { path: paths.main, what: "the JSON card" },
      { path: paths.sibling, what: "the Markdown card" },
    ],
    args.force,
  );
  let model: SpecifiedModel | undefined;
  try {
    const rubric = chooseRubric(loadRubrics(readText(rubricFile), { source: rubricFile }), args.task, rubricFile);
    const samples = parseSamples(readText(samplesFile), samplesFile);
    model = judgeModel(args);
    await preflightModel("--judge", args.judge, io, { apiKeyEnv: args.judgeKeyEnv, cache: args.cache });
    // A probe replayed alone writes its own card, leaving the full one in place.
    const selected = probes?.length ?? PROBE_IDS.length;
    const replay = (ids: readonly string[]) =>
      [
        "rubric hackbench --rubric",
        rubricFile,
        ...(args.task === undefined ? [] : ["--task", args.task]),
        "--samples",
        samplesFile,
        ...judgeFlagWords(args),
        // The replay must admit the same rules the run did.
        ...(args.maxRuleTimeoutMs === undefined ? [] : ["--max-rule-timeout-ms", String(args.maxRuleTimeoutMs)]),
        ...(args.maxRuleMemoryMb === undefined ? [] : ["--max-rule-memory-mb", String(args.maxRuleMemoryMb)]),
        "--probes",
        ids.join(","),
        "--threshold",
        String(threshold),
        "--seed",
        String(seed),
        "--out",
        ids.length === 1 && selected > 1 ? `${out.replace(/\.json$/i, "")}.${ids[0]}.json` : out,
      ]
        .map((word, i) => (i === 0 ? word : shellWord(word)))
        .join(" ");
    const bar = progressBar(io, isTTY);
    const result = await runHackbench(rubric.rubric, samples, {
      onProgress: (done, total) => bar.update(done, total, "outputs scored (probes, controls, honest)"),
      registry: createVerifierRegistry({
        ruleLimits: ruleLimitsOf(args),
        ...(model === undefined ? {} : { judge: llmJudge(model) }),
      }),
      threshold,
      seed,
      concurrency,
      probes,
      ...(args.cache === undefined ? {} : { cache: fileCache(args.cache) }),
      judge: args.judge,
      replay,
    }).finally(() => bar.done());
    writeResultFile(paths.main, `${JSON.stringify(result, null, 2)}\n`, args.force);
    writeResultFile(paths.sibling, cardToMarkdown(result), args.force);
    io.out(`${summary(result)}wrote ${paths.main} and ${paths.sibling}\n`);
    return result.verdict === "hackable"
      ? EXIT.hackable
      : result.verdict === "inconclusive"
        ? EXIT.inconclusive
        : EXIT.ok;
  } finally {
    await model?.dispose?.();
  }
}
