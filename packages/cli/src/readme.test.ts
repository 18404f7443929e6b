import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { RUBRIC_BIN } from "./__fixtures__/run-cli.js";
import { parseArgv } from "./cli.js";

/**
 * Every command line the READMEs show, checked (issue 32: "every README line and snippet runs as
 * written from a fresh clone"). The root README's lines are each either run here as written, in a
 * directory laid out as the repository (the cheap ones), or named in {@link ELSEWHERE} with what
 * runs them (CI, a test that runs the same command on less data); every `rubric` line of every
 * README is parsed by the CLI's own parser, and every file it names to read must exist.
 * A new command in the root README fails this test until it is run here or placed in ELSEWHERE.
 */
const TIMEOUT_MS = 300_000; // a guard for a busy 2-core machine, not a measurement

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const SHARED = process.env["RUBRIC_SHARED_DIR"] ?? join(REPO, "../shared");

interface Documented {
  /** The README, relative to the repository root. */
  readonly file: string;
  readonly line: number;
  readonly text: string;
}

/**
 * The command lines of a README: each line of a fenced `sh` block (less its `# comment`), and each
 * inline code span outside the blocks that starts with `node packages/cli/dist/main.js`, `pnpm`,
 * `pip` or `npm` (a span broken across lines is joined, as Markdown renders it). Spans that start
 * with `rubric` in prose name a command (`rubric repro arco`), they are not command lines.
 */
function documentedCommands(file: string): Documented[] {
  const lines = readFileSync(join(REPO, file), "utf8").split("\n");
  const found: Documented[] = [];
  let fence: string | undefined;
  let prose: { start: number; text: string[] } = { start: 0, text: [] };
  /** A line ending in a backslash, and the lines it continues to. */
  let continued: { line: number; text: string[] } | undefined;
  const flushProse = () => {
    const text = prose.text.join("\n");
    for (const match of text.matchAll(/`([^`]+)`/gu)) {
      const span = match[1]!.replace(/\s*\n\s*/gu, " ").trim();
      if (!/^(?:node packages\/cli\/dist\/main\.js|pnpm|pip|npm) /u.test(span)) continue;
      const line = prose.start + text.slice(0, match.index).split("\n").length - 1;
      found.push({ file, line, text: span });
    }
    prose = { start: 0, text: [] };
  };
  lines.forEach((raw, index) => {
    const fenceMatch = /^```(\w*)/u.exec(raw);
    if (fenceMatch) {
      if (fence === undefined) {
        flushProse();
        fence = fenceMatch[1] ?? "";
      } else fence = undefined;
      return;
    }
    if (fence === undefined) {
      if (raw.trim() === "") flushProse();
      else {
        if (prose.text.length === 0) prose.start = index + 1;
        prose.text.push(raw);
      }
      return;
    }
    if (fence !== "sh") return;
    const text = raw.replace(/\s+#\s.*$/u, "").trim();
    if (continued !== undefined) {
      continued.text.push(text.replace(/\\$/u, "").trim());
      if (!text.endsWith("\\")) {
        found.push({ file, line: continued.line, text: continued.text.join(" ") });
        continued = undefined;
      }
      return;
    }
    if (text === "" || text.startsWith("#")) return;
    if (text.endsWith("\\")) continued = { line: index + 1, text: [text.slice(0, -1).trim()] };
    else found.push({ file, line: index + 1, text });
  });
  flushProse();
  return found;
}

/**
 * Words of a command line as sh splits these simple ones (a quoted string is one word, without
 * its quotes); a redirection or pipe and what follows it are dropped.
 */
function words(text: string): string[] {
  const all = [...text.matchAll(/"[^"]*"|'[^']*'|\S+/gu)].map(([word]) => word.replace(/^(["'])(.*)\1$/u, "$2"));
  const redirect = all.findIndex((word) => word === ">" || word === "|" || word === "2>&1");
  return redirect === -1 ? all : all.slice(0, redirect);
}

/** The `rubric` arguments of a command line, or undefined when it does not run the CLI. */
function rubricArgs(text: string): string[] | undefined {
  const all = words(text);
  if (all[0] === "rubric") return all.slice(1);
  if (all[0] === "pnpm" && all[1] === "exec" && all[2] === "rubric") return all.slice(3);
  if (all[0] === "node" && all[1] === "packages/cli/dist/main.js") return all.slice(2);
  return undefined;
}

/**
 * The files a command line names that must exist before it runs: repository paths and the shared
 * data (`../shared/…`), a provider spec's path included (`llama-cpp:../shared/…`).
 */
function namedInputs(args: readonly string[]): string[] {
  return args
    .map((arg) => arg.replace(/^[a-z-]+:(?=\.\.?\/|[a-z])/u, ""))
    .filter((arg) => /^(?:\.\.\/shared|examples|packages|python|scripts|docs)\//u.test(arg));
}

function inputExists(path: string): boolean {
  return path.startsWith("../shared/")
    ? existsSync(join(SHARED, path.slice("../shared/".length)))
    : existsSync(join(REPO, path));
}

const where = (entry: Documented) => `${entry.file}:${entry.line}: ${entry.text}`;

const scripts = (packageJson: string) =>
  (JSON.parse(readFileSync(join(REPO, packageJson), "utf8")) as { scripts: Record<string, string> }).scripts;

/** `<a | b | c>` in a documented line stands for each of a, b and c. */
function alternatives(text: string): string[] {
  const match = /<([^>]+\|[^>]+)>/u.exec(text);
  if (!match) return [text];
  return match[1]!.split("|").map((choice) => text.replace(match[0], choice.trim()));
}

/**
 * The static checks every documented command line gets, whatever runs it: a `rubric` line parses
 * (known command, known flags, valid values) and names files that exist; a `pnpm` script exists in
 * the package that runs it. Returns the faults, each naming the README line.
 */
async function staticFaults(entry: Documented): Promise<string[]> {
  const faults: string[] = [];
  for (const part of entry.text.split(" && ").flatMap(alternatives)) {
    const args = rubricArgs(part);
    if (args !== undefined) {
      try {
        await parseArgv(args);
      } catch (error) {
        faults.push(`${where(entry)}\n  ${(error as Error).message}`);
      }
      // Paths a README's own earlier commands write are not inputs to check.
      for (const path of namedInputs(args))
        if (!path.startsWith("runs/") && !inputExists(path)) faults.push(`${where(entry)}\n  no file ${path}`);
      continue;
    }
    const [tool, first, second] = words(part);
    if (tool !== "pnpm") continue;
    if (first === "--filter") {
      const folder = second === "@rubric/examples" ? "examples" : `packages/${second?.replace("@rubric/", "")}`;
      const rest = words(part).slice(3);
      if (rest[0] === "exec") {
        // `exec tsx <file>`: the file, in the package's folder.
        const file = rest.find((word) => /\.[cm]?[jt]s$/u.test(word));
        if (file === undefined || !existsSync(join(REPO, folder, file)))
          faults.push(`${where(entry)}\n  no file ${folder}/${file ?? "(none named)"}`);
        continue;
      }
      const name = rest[0] === "run" ? rest[1] : rest[0];
      if (
        !existsSync(join(REPO, folder, "package.json")) ||
        scripts(`${folder}/package.json`)[name ?? ""] === undefined
      )
        faults.push(`${where(entry)}\n  ${second} has no script ${name}`);
    } else if (first !== "install" && first !== "exec" && first !== "changeset") {
      const name = first === "run" ? second : first;
      if (scripts("package.json")[name ?? ""] === undefined) faults.push(`${where(entry)}\n  no root script ${name}`);
    }
  }
  return faults;
}

/** Examples with a test of their own (the README's list runs the others here). */
const EXAMPLES_TESTED_ELSEWHERE: Readonly<Record<string, string>> = {
  "gdpval-summary": "examples/gdpval-rubric-summary.test.ts",
  "hacking-onset": "examples/hacking-onset.test.ts",
  "custom-kind": "examples/custom-verifier-kind.test.ts",
};

/**
 * The root README's lines that this test does not run, with what does: each is still parsed and
 * its files checked above. Keyed by the line as written.
 */
const ELSEWHERE: Readonly<Record<string, string>> = {
  "npm install -g pnpm@12.4.2 && pnpm install --frozen-lockfile && pnpm main":
    "CI installs this way on a fresh machine (.ci/run); `pnpm main` is `repro arcane --quick` (about a minute), run with one seed by packages/cli/src/repro.test.ts",
  "node packages/cli/dist/main.js repro arcane --out runs/arcane":
    "the full run, 9 minutes: repro.test.ts runs it in quick mode",
  "pnpm build": "run by `pnpm test`",
  "node packages/cli/dist/main.js repro arcane --provider llama-cpp:../shared/models/stories260K.gguf --tasks 2 --out runs/arcane-llm":
    "19 minutes: packages/cli/src/repro-provider.test.ts runs the LLM-roles pipeline on a real GDPval task",
  "node packages/cli/dist/main.js repro arcane --manager sidecar --quick --out runs/arcane-sidecar":
    "11 minutes: packages/gspo/src/trainer/train.test.ts trains the sidecar manager on fewer tasks",
  "pnpm --filter @rubric/examples run gdpval-summary": "examples/gdpval-rubric-summary.test.ts",
  "node packages/cli/dist/main.js mu train --model runs/mu --trajectories examples/data/agent-runs.jsonl":
    "minutes on 2 cores: packages/cli/src/mu-train.test.ts runs `mu train` on the same runs, from the arco-heads README",
  "pnpm arco":
    "`repro arco --quick`, 3.5 minutes: packages/cli/src/repro-arco.test.ts runs it with an LLM policy on fewer questions",
  "node packages/cli/dist/main.js eval hotpotqa --predictions runs/arco-quick/seed-1/arco/predictions.json --data runs/arco-quick/eval-questions.jsonl":
    "reads `pnpm arco`'s output: packages/cli/src/eval.test.ts scores predictions in the same format",
  "node packages/cli/dist/main.js repro arco --out runs/arco":
    "the full run, 80 minutes: packages/repro/README.md reports it",
  "node packages/cli/dist/main.js repro arco-gym --quick --out runs/arco-gym":
    "4 minutes: packages/cli/src/repro-arco-gym.test.ts runs it with fewer tasks",
  "sh scripts/install-system-packages.sh && npm install -g pnpm@12.4.2 && pnpm install --frozen-lockfile && pnpm test":
    "what CI runs (.ci/run)",
  "pip install ./python/rubric-reward": "packages/cli/src/serve.test.ts pip-installs it into a directory of its own",
  "pnpm exec rubric serve --rubric examples/data/memo-rubric.json --port 8787":
    "a server that runs until stopped: packages/cli/src/serve.test.ts serves through it",
  "pnpm test": "CI",
  "pnpm install --frozen-lockfile && pnpm pack:all": "scripts/consumer-test.mjs (run by `pnpm test`) runs `pack:all`",
  "cd ../my-project && npm i ../rubric/packed/*.tgz":
    "scripts/consumer-test.mjs installs the tarballs this way outside the workspace",
  "pnpm --filter @rubric/examples ten-lines": "examples/ten-lines.test.ts",
  "pnpm typecheck": "run by `pnpm test`",
  "pnpm lint:packages": "run by `pnpm test`",
  "pnpm bench": "writes BENCHMARKS.md; a benchmark, not a test",
  "pnpm changeset": "interactive",
  "pnpm version-packages": "applied for 0.1.0 (each package's CHANGELOG.md)",
  "pnpm pack:all": "scripts/consumer-test.mjs",
};

const READMES = [
  "README.md",
  ...readdirSync(join(REPO, "packages")).map((name) => `packages/${name}/README.md`),
  ...readdirSync(join(REPO, "python")).map((name) => `python/${name}/README.md`),
].filter((file) => existsSync(join(REPO, file)));

describe("every README's command lines", () => {
  it("parse with the CLI's own parser, name files that exist and scripts that exist", async () => {
    const all = READMES.flatMap(documentedCommands);
    // The extraction itself: the root README's blocks and spans are found.
    expect(all.filter((entry) => entry.file === "README.md").length).toBeGreaterThan(25);
    const faults = (await Promise.all(all.map(staticFaults))).flat();
    expect(faults, faults.join("\n")).toEqual([]);
  });

  it("are run here or named in ELSEWHERE with what runs them; ELSEWHERE names only lines the README has", () => {
    const root = documentedCommands("README.md").map((entry) => entry.text);
    const unaccounted = root.filter((text) => !(text in ELSEWHERE) && !RUN_HERE.some((run) => run.matches(text)));
    expect(unaccounted, `root README lines neither run here nor in ELSEWHERE:\n${unaccounted.join("\n")}`).toEqual([]);
    const stale = Object.keys(ELSEWHERE).filter((text) => !root.includes(text));
    expect(stale, "ELSEWHERE entries the README no longer has").toEqual([]);
    for (const test of Object.values(EXAMPLES_TESTED_ELSEWHERE)) expect(existsSync(join(REPO, test)), test).toBe(true);
  });

  it("rejects what it should: an unknown flag, a missing file, a missing script", async () => {
    const at = (text: string) => staticFaults({ file: "README.md", line: 1, text });
    expect((await at("pnpm exec rubric validate --nope examples/data/memo-rubric.json"))[0]).toMatch(
      /unknown flag --nope/,
    );
    expect((await at("pnpm exec rubric validate examples/data/none.json"))[0]).toMatch(
      /no file examples\/data\/none\.json/,
    );
    expect((await at("pnpm --filter @rubric/examples gdpval-sumary"))[0]).toMatch(/has no script gdpval-sumary/);
    expect((await at("pnpm nonesuch"))[0]).toMatch(/no root script nonesuch/);
    expect(await at("node packages/cli/dist/main.js mu init --out runs/mu")).toEqual([]);
  });
});

/**
 * How a root README line is run here: in `sandbox` (a directory laid out as the repository, its
 * `examples/` and `packages/` linked, `../shared` beside it, `rubric` on `pnpm exec`'s path) or in
 * the repository itself for lines that write nothing into it.
 */
interface RunHere {
  readonly matches: (text: string) => boolean;
  readonly where: "sandbox" | "repo";
}

const RUN_HERE: readonly RunHere[] = [
  {
    matches: (text) =>
      /^(?:pnpm exec rubric|node packages\/cli\/dist\/main\.js) (?:validate|score|report|mu init|mu criteria) /u.test(
        text,
      ),
    where: "sandbox",
  },
  { matches: (text) => text.startsWith("pnpm --filter @rubric/examples <"), where: "repo" },
];

interface Ran {
  readonly entry: Documented;
  readonly command: string;
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

let sandbox: string;
const ran: Ran[] = [];

beforeAll(() => {
  const top = mkdtempSync(join(tmpdir(), "rubric-readme-"));
  sandbox = join(top, "rubric");
  mkdirSync(join(sandbox, "node_modules/.bin"), { recursive: true });
  execFileSync("sh", ["-c", `printf '{"name":"readme-sandbox","private":true}\\n' > package.json`], { cwd: sandbox });
  symlinkSync(RUBRIC_BIN, join(sandbox, "node_modules/.bin/rubric"));
  symlinkSync(join(REPO, "packages"), join(sandbox, "packages"));
  symlinkSync(join(REPO, "examples"), join(sandbox, "examples"));
  symlinkSync(SHARED, join(top, "shared"));
}, TIMEOUT_MS);

describe("the root README's cheap lines, run as written", () => {
  it(
    "exit 0 in README order, and say what the README says they do",
    () => {
      for (const entry of documentedCommands("README.md")) {
        const how = RUN_HERE.find((run) => run.matches(entry.text));
        if (how === undefined) continue;
        for (const command of alternatives(entry.text)) {
          const example = /^pnpm --filter @rubric\/examples (\S+)$/u.exec(command)?.[1];
          if (example !== undefined && example in EXAMPLES_TESTED_ELSEWHERE) continue;
          const result = spawnSync("sh", ["-c", command], {
            cwd: how.where === "sandbox" ? sandbox : REPO,
            encoding: "utf8",
            // The README's lines find the shared data beside the repository, as a user's do.
            env: { ...process.env, OPENAI_API_KEY: "", HF_TOKEN: "", RUBRIC_SHARED_DIR: SHARED },
            timeout: TIMEOUT_MS,
          });
          ran.push({ entry, command, status: result.status, stdout: result.stdout, stderr: result.stderr });
          expect(result.status, `${where(entry)}\n${result.stderr}`).toBe(0);
        }
      }
      const output = (pattern: RegExp) => ran.filter((run) => pattern.test(run.command));
      // Every example of the README's list without a test of its own ran.
      expect(output(/^pnpm --filter @rubric\/examples /u).map((run) => run.command.split(" ").at(-1))).toEqual([
        "flat-rubric",
        "verify-outputs",
        "gym",
        "configurable",
        "arcane",
      ]);
      // The two backends give the same criteria and the same scores, to float32 rounding.
      const [onnx, torch] = output(/ mu criteria /u).map(
        (run) => JSON.parse(run.stdout) as { steps: { id: string; criteria: string[]; scores: number[] }[] },
      );
      expect(onnx!.steps.map((step) => step.id)).toEqual(["q1-0", "q1-1", "q1-2"]);
      expect(torch!.steps.map((step) => step.criteria)).toEqual(onnx!.steps.map((step) => step.criteria));
      torch!.steps.forEach((step, t) =>
        step.scores.forEach((score, k) => expect(score).toBeCloseTo(onnx!.steps[t]!.scores[k]!, 4)),
      );
      expect(output(/ mu criteria /u)[0]!.stderr).toContain("has taken no training step");
      // Scored from the outputs, rescored from the stored verdicts: the same totals.
      const results = JSON.parse(readFileSync(join(sandbox, "results.json"), "utf8")) as {
        results: { id: string; output?: string }[];
      };
      expect(results.results.length).toBeGreaterThan(1);
      expect(results.results.every((result) => typeof result.output === "string")).toBe(true);
      const report = readFileSync(join(sandbox, "report.html"), "utf8");
      expect(report).toContain("<html");
      expect(report).toContain(results.results[0]!.id);
      expect(existsSync(join(sandbox, "runs/mu/v0001/manifest.json"))).toBe(true);
    },
    TIMEOUT_MS,
  );
});
