/**
 * Every ```ts block of the packages' READMEs (and the Python trainer's) is checked as a reader
 * would use it: each type-checks as its own module against the built packages, and each that runs
 * in seconds without a model, a server or the Python sidecar runs, printing what the README says it
 * prints. The root README's block is examples/ten-lines.test.ts's.
 *
 * Blocks are written to `.readme-snippets/` inside examples/, so `@rubric/*` resolves through this
 * package's node_modules, and run there, each in a directory of its own beside a `shared` link:
 * `../shared/data/…` in a README means what it means from the repository root.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const examples = fileURLToPath(new URL(".", import.meta.url));
const root = resolve(examples, "..");
const scratch = join(examples, ".readme-snippets");
const shared = process.env["RUBRIC_SHARED_DIR"] ?? resolve(root, "../shared");

const READMES = [
  ...readdirSync(join(root, "packages")).map((name) => `packages/${name}/README.md`),
  "python/rubric-trainer/README.md",
].filter((readme) => existsSync(join(root, readme)));

interface Snippet {
  /** `packages/core/README.md:10`, the opening fence: code line i is README line `line + i`. */
  readonly where: string;
  readonly readme: string;
  readonly line: number;
  readonly code: string;
  /** The module's file name in the scratch directory (and, without `.ts`, its run directory). */
  readonly file: string;
}

function extractSnippets(readme: string): Snippet[] {
  const lines = readFileSync(join(root, readme), "utf8").split("\n");
  const snippets: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const indent = /^( *)```ts\s*$/u.exec(lines[i]!)?.[1]?.length;
    if (indent === undefined) continue;
    const end = lines.findIndex((text, j) => j > i && /^ *```\s*$/u.test(text));
    if (end === -1) throw new Error(`${readme}:${i + 1}: a \`\`\`ts block that is never closed`);
    const file = `${readme.replace(/^(packages|python)\//u, "").replace(/\/README\.md$/u, "")}-${i + 1}.ts`;
    const code = lines.slice(i + 1, end).map((text) => text.slice(indent));
    snippets.push({ where: `${readme}:${i + 1}`, readme, line: i + 1, code: `${code.join("\n")}\n`, file });
    i = end;
  }
  return snippets;
}

const snippets = READMES.flatMap(extractSnippets);

/** A block of `readme`: the one whose code contains `marker` (a table row naming none, or two, fails). */
interface Row {
  readonly readme: string;
  readonly marker: string;
}

/** Blocks that type-check but cannot run in a test, and why. */
const NOT_RUN: readonly (Row & { readonly why: string })[] = [
  {
    readme: "packages/arco-heads/README.md",
    marker: 'RubricModel.load("models/mu")',
    why: "needs a μ export (`rubric mu init`)",
  },
  {
    readme: "packages/arco-heads/README.md",
    marker: "annotateTrajectory(teacher",
    why: "calls a teacher LLM (the OpenAI API)",
  },
  {
    readme: "packages/autointeract/README.md",
    marker: "replayRoles(result.transcript)",
    why: "the manager and stakeholder are the reader's own roles (declared)",
  },
  {
    readme: "packages/gspo/README.md",
    marker: "bestOfK(worker",
    why: "the worker, task, rubric and judge are the reader's own (declared)",
  },
  {
    readme: "packages/gspo/README.md",
    marker: "await trainGspo({",
    why: "a training run: SFT, then 12 GSPO batches of 16 prompts × 8 rollouts",
  },
  {
    readme: "packages/providers/README.md",
    marker: 'providerFromSpec("llama-cpp:models/judge.gguf"',
    why: "needs a model server on 127.0.0.1:8000",
  },
  {
    readme: "packages/report/README.md",
    marker: "buildReport([section]",
    why: "reads the reader's results.json (`rubric score --json`)",
  },
  {
    readme: "packages/repro/README.md",
    marker: "await runArcane({",
    why: "GSPO training for every method: about 20 s on 2 cores (the CLI's `repro arcane --quick` tests run it)",
  },
  { readme: "packages/rlxar/README.md", marker: "await createMu(client", why: "starts the Python sidecar (torch)" },
  {
    readme: "packages/rlxar/README.md",
    marker: "SidecarMuModel.create(remote",
    why: "a transformers μ: needs transformers and peft in the sidecar's Python and a model's weights (the GPU recipe; mu/sidecar-mu-model-transformers.test.ts runs the path on a random Llama)",
  },
  { readme: "packages/rlxar/README.md", marker: "llmPolicy(model", why: "needs a model server on 127.0.0.1:8000" },
  {
    readme: "packages/rlxar/README.md",
    marker: "await sidecarPolicy(client",
    why: "starts the Python sidecar (torch)",
  },
  {
    readme: "packages/rlxar/README.md",
    marker: "await servedPolicy(client",
    why: "needs a vLLM server and the Python sidecar",
  },
  {
    readme: "packages/rlxar/README.md",
    marker: "await trainCoEvolution({",
    why: "the Python sidecar, a μ export and a training run",
  },
  {
    readme: "packages/sidecar/README.md",
    marker: "RemotePolicy.init(client",
    why: "starts the Python sidecar (torch)",
  },
  { readme: "packages/verifiers/README.md", marker: 'fileCache(".rubric-cache")', why: "needs a judge model server" },
  {
    readme: "python/rubric-trainer/README.md",
    marker: "SidecarBackend.start({",
    why: "starts the Python sidecar (torch)",
  },
];

/**
 * What a block that runs must show: `prints`, its stdout lines in order (a pattern where the README
 * states no exact text); `values`, the README's `expression; // value` notes, each expression
 * evaluated after the block and compared as JSON.
 */
const EXPECTED: readonly (Row & {
  readonly prints?: readonly (string | RegExp)[];
  readonly values?: Readonly<Record<string, unknown>>;
})[] = [
  {
    readme: "packages/autointeract/README.md",
    marker: "rubricSetStructure(",
    values: { "[gdpval.train.length, gdpval.eval.length]": [175, 44] },
  },
  {
    readme: "packages/hackbench/README.md",
    marker: "runHackbench(rubric, samples, { registry: rulesRegistry(), seed: 0 })",
    values: {
      "card.verdict": "hackable",
      "card.exploits": ["keyword-stuffing", "rubric-echo"],
      'card.probes.find((p) => p.id === "keyword-stuffing")?.gain.toFixed(3)': "0.667",
      'card.probes.find((p) => p.id === "keyword-stuffing")?.exploited': ["revenue", "risk", "timeline"],
    },
  },
  {
    readme: "packages/hackbench/README.md",
    marker: "trueUtility: rubricUtility(",
    values: { "card.probes[0]!.gain.toFixed(2)": "0.65", "card.probes[0]!.trueGain": { gain: 0, ci: [0, 0] } },
  },
  {
    readme: "packages/hackbench/README.md",
    marker: "biasedJudgeModel({ biases",
    values: {
      "card.exploits": ["judge-injection", "judge-injection-html-comment", "judge-injection-invisible", "pleasantry"],
      "[...BIAS_PROBES.tone, ...BIAS_PROBES.injection].sort()": [
        "judge-injection",
        "judge-injection-html-comment",
        "judge-injection-invisible",
        "pleasantry",
      ],
    },
  },
  {
    readme: "packages/providers/README.md",
    marker: "startOpenAIChatServer(",
    values: { "server.requests.length": 2 },
  },
  {
    readme: "packages/rlxar/README.md",
    marker: 'episode.step("Finish[1755]")',
    values: {
      "dev[0]!.question":
        "In what year was the university where Sergei Aleksandrovich Tokarev was a professor founded?",
    },
  },
  {
    readme: "packages/rlxar/README.md",
    marker: "extractivePolicy(); // all weights 0",
    prints: [/^\d+ candidates$/u, /^Finish\[Chief of Protocol\] \d\.\d\d$/u],
  },
  {
    readme: "packages/rlxar/README.md",
    marker: "trueStepAdvantages(env",
    prints: [
      "In which city was the mentor of Theiva Noxvrin born?",
      "0.047",
      "Search[Theiva]: -0.01 ± 0.01",
      "Search[Theiva]: -0.01 ± 0.01",
      "Search[Theiva]: 0.00 ± 0.00",
      "Finish[Theiva Noxvrin]: 0.00 ± 0.00",
    ],
  },
  {
    readme: "packages/verifiers/README.md",
    marker: "scoreOutputsSync(rubric",
    values: { "scored?.score?.normalized": 1 },
  },
];

/** The blocks a table row names. */
const named = (row: Row) => snippets.filter((s) => s.readme === row.readme && s.code.includes(row.marker));
const notRun = (snippet: Snippet) => NOT_RUN.find((row) => named(row).includes(snippet));
const expected = (snippet: Snippet) => EXPECTED.find((row) => named(row).includes(snippet));

/** Marks the lines the value checks print, apart from the block's own output. */
const VALUE_LINE = "\u001fREADME-VALUE ";

function runnableCode(snippet: Snippet): string {
  const values = Object.keys(expected(snippet)?.values ?? {});
  const checks = values.map((expr) => `console.log(${JSON.stringify(VALUE_LINE)} + JSON.stringify([${expr}]));`);
  return [snippet.code, ...checks].join("\n");
}

interface Outcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function runSnippet(snippet: Snippet): Promise<Outcome> {
  const cwd = join(scratch, snippet.file.replace(/\.ts$/u, ""));
  mkdirSync(cwd);
  const script = join(scratch, snippet.file.replace(/\.ts$/u, ".run.ts"));
  writeFileSync(script, runnableCode(snippet));
  return new Promise((done) => {
    execFile(
      process.execPath,
      ["--import", "tsx", script],
      { cwd, timeout: 60_000, maxBuffer: 16 * 2 ** 20, env: { ...process.env, NO_COLOR: "1" } },
      (error, stdout, stderr) =>
        done(
          error === null
            ? { code: 0, stdout, stderr }
            : {
                code: typeof error.code === "number" ? error.code : null,
                stdout,
                stderr: error.killed ? `${error.message}(killed: past the 60 s limit)` : error.message,
              },
        ),
    );
  });
}

/** Starts `tasks` at most `width` at a time, in order: more processes than cores only thrash. */
function pooled<T>(tasks: readonly (() => Promise<T>)[], width: number): Promise<T>[] {
  let active = 0;
  const waiting: (() => void)[] = [];
  const acquire = async () => {
    if (active < width) active++;
    else await new Promise<void>((go) => waiting.push(go)); // the slot passes straight to it
  };
  const release = () => {
    const next = waiting.shift();
    if (next === undefined) active--;
    else next();
  };
  return tasks.map(async (task) => {
    await acquire();
    try {
      return await task();
    } finally {
      release();
    }
  });
}

/** One compiler program over every block, with examples/tsconfig.json's options: messages per block. */
function typeCheck(): Map<Snippet, string[]> {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(examples, "tsconfig.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      },
    },
  );
  if (config === undefined) throw new Error("examples/tsconfig.json could not be read");
  const byFile = new Map(snippets.map((s) => [join(scratch, s.file), s]));
  const program = ts.createProgram({
    rootNames: [...byFile.keys()],
    options: { ...config.options, noEmit: true, moduleDetection: ts.ModuleDetectionKind.Force },
  });
  const messages = new Map(snippets.map((s): [Snippet, string[]] => [s, []]));
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
    const snippet = diagnostic.file === undefined ? undefined : byFile.get(resolve(diagnostic.file.fileName));
    if (snippet === undefined || diagnostic.start === undefined) {
      // Not in a block (the options, a declaration file): every block is suspect.
      for (const list of messages.values()) list.push(`TS${diagnostic.code}: ${text}`);
      continue;
    }
    const { line, character } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start);
    messages
      .get(snippet)!
      .push(`${snippet.readme}:${snippet.line + line + 1}:${character + 1} TS${diagnostic.code}: ${text}`);
  }
  return messages;
}

const runnable = snippets.filter((s) => notRun(s) === undefined);
let diagnostics: Map<Snippet, string[]>;
let outcomes: Map<Snippet, Promise<Outcome>>;

beforeAll(() => {
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch);
  symlinkSync(shared, join(scratch, "shared"), "dir");
  for (const snippet of snippets) writeFileSync(join(scratch, snippet.file), snippet.code);
  // The first runs start before the compiler holds this thread, and use the other cores meanwhile.
  const runs = pooled(
    runnable.map((s) => () => runSnippet(s)),
    Math.max(2, availableParallelism()),
  );
  outcomes = new Map(runnable.map((s, i) => [s, runs[i]!]));
  diagnostics = typeCheck();
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(outcomes?.values() ?? []);
  rmSync(scratch, { recursive: true, force: true });
});

describe("the READMEs' ts blocks", () => {
  it("are found, and every table row names exactly one of them", () => {
    expect(snippets.length).toBeGreaterThanOrEqual(30);
    const rows = [...NOT_RUN, ...EXPECTED].map((row) => ({
      row: `${row.readme} ${JSON.stringify(row.marker)}`,
      blocks: named(row).map((s) => s.where),
    }));
    expect(rows.filter((r) => r.blocks.length !== 1)).toEqual([]);
    const unrun = EXPECTED.filter((row) => named(row).some((s) => notRun(s) !== undefined));
    expect(
      unrun.map((row) => row.marker),
      "expectations of a block that is not run",
    ).toEqual([]);
  });

  it.each(snippets.map((s) => [s.where, s] as const))("%s type-checks", (_, snippet) => {
    expect(diagnostics.get(snippet)).toEqual([]);
  });

  it.concurrent.each(runnable.map((s) => [s.where, s] as const))(
    "%s runs",
    { timeout: 180_000 },
    async (_, snippet) => {
      const outcome = await outcomes.get(snippet)!;
      expect(outcome.code, `${snippet.where} exited with ${outcome.code}:\n${outcome.stderr}`).toBe(0);
      const lines = outcome.stdout === "" ? [] : outcome.stdout.replace(/\n$/u, "").split("\n");
      const printed = lines.filter((line) => !line.startsWith(VALUE_LINE));
      const values = lines
        .filter((line) => line.startsWith(VALUE_LINE))
        .map((line) => JSON.parse(line.slice(VALUE_LINE.length))[0]);
      const want = expected(snippet);
      if (want?.prints !== undefined)
        expect(printed).toEqual(
          want.prints.map((line) => (typeof line === "string" ? line : expect.stringMatching(line))),
        );
      const notes = Object.entries(want?.values ?? {});
      expect(Object.fromEntries(notes.map(([expr], i) => [expr, values[i]]))).toEqual(Object.fromEntries(notes));
    },
  );
});
