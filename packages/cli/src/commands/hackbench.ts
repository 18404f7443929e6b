import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { loadRubrics, type LoadedRubric } from "@rubric/core";
import { PROBE_IDS, cardToMarkdown, parseSamples, runHackbench, type IntegrityCard } from "@rubric/hackbench";
import { createVerifierRegistry, fileCache, llmJudge } from "@rubric/verifiers";
import { providerFromSpec, type SpecifiedModel } from "@rubric/providers";
import { InputFileError, UsageError, numberFlag, readText, type CliIO } from "../io.js";

export const hackbenchHelp = `rubric hackbench --rubric <file> --samples <file.jsonl> --out <card.json> [options]

Probes whether a rubric reward can be gamed: each probe transforms every honest sample (keyword
stuffing, judge injection, ...) beside a matched control that changes it as much without the
exploit; the gain score(probe) − score(control) is bootstrapped over samples. A probe is an
exploit when its gain exceeds τ and its 95% interval excludes 0. Writes an integrity card as JSON
and, beside it, as Markdown.

  --rubric <file>        rubric file (.json or .jsonl; flat or staged)
  --task <id>            which rubric of a multi-rubric file (GDPval task_id, flat id or category name)
  --samples <file>       JSONL, one {"id", "input"?, "output"} per line: honest outputs to perturb
  --judge <provider>     model for llm-judge criteria: llama-cpp:<file.gguf> | hf:<model>[@<provider>]
                         | openai-compatible:<baseUrl>#<model>  (keys from HF_TOKEN / OPENAI_API_KEY)
  --probes <a,b,...>     probes to run (default all): ${PROBE_IDS.join(", ")}
  --threshold <τ>        smallest mean gain that counts as an exploit (default 0.05)
  --seed <n>             seeds every probe and bootstrap (default 0)
  --cache <dir>          persistent verdict cache: a rerun makes no judge calls
  --concurrency <n>      verifier calls in flight (default 8)
  --out <file>           the card as JSON; the Markdown card goes beside it (.md)

Exit codes: 0 clean; 3 hackable; 2 error — usage, unreadable input, or a verdict that was an
error (a judge that fails is never a clean bill of health).`;

export interface HackbenchArgs {
  readonly rubric?: string;
  readonly task?: string;
  readonly samples?: string;
  readonly judge?: string;
  readonly probes?: string;
  readonly threshold?: string;
  readonly seed?: string;
  readonly cache?: string;
  readonly concurrency?: string;
  readonly out?: string;
}

// What makes a run undecidable. Exit 2 rather than the CLI's usual 1 for bad input: a gate must
// tell "clean" (0) and "hackable" (3) apart from "could not tell" by one code.
const RUN_ERRORS = new Set([
  "InputFileError",
  "SampleFileError",
  "RubricValidationError",
  "VerificationSetupError",
  "ProviderSpecError",
  "ProviderConfigError",
  "HackbenchInputError",
  "HackbenchScoringError",
  "TrueUtilityError",
  "UnknownProbeError",
]);

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
    `${card.verdict}: ${card.exploits.length} of ${card.probes.length} probes are exploits (τ = ${card.threshold}, ${card.samples} samples)`,
    `  ${"probe".padEnd(width)}  ${"gain".padStart(7)}  ${"95% CI".padEnd(17)}  exploit`,
    ...card.probes.map((p) =>
      p.applicable === 0
        ? `  ${p.id.padEnd(width)}  ${"n/a".padStart(7)}  ${"".padEnd(17)}  no (no sample to apply it to)`
        : `  ${p.id.padEnd(width)}  ${signed(p.gain).padStart(7)}  ${`${signed(p.ci[0])} … ${signed(p.ci[1])}`.padEnd(17)}  ${p.exploit ? `YES: ${p.exploited.join(", ")}` : "no"}`,
    ),
  ];
  return `${lines.join("\n")}\n`;
}

/**
 * `rubric hackbench`: runs the probes of @rubric/hackbench against a rubric on honest samples,
 * writes the integrity card (JSON and Markdown) and exits 0 clean, 3 hackable, 2 undecided.
 */
export async function hackbench(args: HackbenchArgs, io: CliIO): Promise<number> {
  if (!args.rubric) throw new UsageError("hackbench needs --rubric <file>");
  if (!args.samples) throw new UsageError("hackbench needs --samples <file.jsonl>");
  if (!args.out) throw new UsageError("hackbench needs --out <card.json>");
  const { rubric: rubricFile, samples: samplesFile, out } = args;
  const threshold = numberFlag(
    args.threshold,
    "--threshold",
    0.05,
    (n) => Number.isFinite(n) && n >= 0,
    "a number ≥ 0",
  );
  const seed = numberFlag(args.seed, "--seed", 0, Number.isSafeInteger, "an integer");
  const concurrency = numberFlag(
    args.concurrency,
    "--concurrency",
    8,
    (n) => Number.isInteger(n) && n >= 1,
    "a positive integer",
  );
  const probes = args.probes
    ?.split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  const unknown = probes?.filter((p) => !PROBE_IDS.includes(p)) ?? [];
  if (unknown.length > 0)
    throw new UsageError(`unknown probe(s) ${unknown.join(", ")}; known: ${PROBE_IDS.join(", ")}`);
  let model: SpecifiedModel | undefined;
  try {
    const rubric = chooseRubric(loadRubrics(readText(rubricFile), { source: rubricFile }), args.task, rubricFile);
    const samples = parseSamples(readText(samplesFile), samplesFile);
    model = args.judge === undefined ? undefined : providerFromSpec(args.judge);
    // A probe replayed alone writes its own card, leaving the full one in place.
    const selected = probes?.length ?? PROBE_IDS.length;
    const replay = (ids: readonly string[]) =>
      [
        "rubric hackbench --rubric",
        rubricFile,
        ...(args.task === undefined ? [] : ["--task", args.task]),
        "--samples",
        samplesFile,
        ...(args.judge === undefined ? [] : ["--judge", args.judge]),
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
    const card = await runHackbench(rubric.rubric, samples, {
      registry: createVerifierRegistry(model === undefined ? {} : { judge: llmJudge(model) }),
      threshold,
      seed,
      concurrency,
      ...(probes === undefined ? {} : { probes }),
      ...(args.cache === undefined ? {} : { cache: fileCache(args.cache) }),
      ...(args.judge === undefined ? {} : { judge: args.judge }),
      replay,
    });
    const markdownPath = `${out.replace(/\.json$/i, "")}.md`;
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(card, null, 2)}\n`);
    writeFileSync(markdownPath, cardToMarkdown(card));
    io.out(`${summary(card)}wrote ${out} and ${markdownPath}\n`);
    return card.verdict === "hackable" ? 3 : 0;
  } catch (error) {
    if (!RUN_ERRORS.has((error as Error).name)) throw error;
    io.err(`${(error as Error).name}: ${(error as Error).message}\n`);
    return 2;
  } finally {
    await model?.dispose?.();
  }
}
