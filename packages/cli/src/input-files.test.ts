import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { arcoMarkdown } from "@rubric/repro";
import { describe, expect, it } from "vitest";
import { arcoTable } from "../../repro/src/arco/__fixtures__/table.js";
import { RUBRIC_BIN } from "./__fixtures__/run-cli.js";
import { runCli } from "./cli.js";

/**
 * Issue 29's "every input file" class, through the commands as users run them: every file is a
 * regular file read with a bound (a FIFO, `/dev/zero` or a directory is refused by name at once),
 * a run directory's files are never followed through a link, and standard input is read when
 * asked for by name (`-`, `/dev/stdin`).
 */
const dir = mkdtempSync(join(tmpdir(), "rubric-input-files-"));
const file = (name: string, content: string) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const fifo = (path: string) => {
  execFileSync("mkfifo", [path]); // Node has no mkfifo of its own
  return path;
};

const rubric = {
  id: "memo",
  criteria: [
    { id: "rev", text: "Mentions revenue", weight: 2, verifier: { kind: "includes", terms: ["revenue"] } },
    { id: "short", text: "Short", weight: 1, verifier: { kind: "length", max: 50, unit: "words" } },
  ],
};
const rubricFile = file("rubric.json", JSON.stringify(rubric));
const verdictsFile = file(
  "verdicts.json",
  JSON.stringify({
    verdicts: [
      { criterionId: "rev", status: "ok", score: 1 },
      { criterionId: "short", status: "ok", score: 1 },
    ],
  }),
);
const outputsFile = file("outputs.jsonl", `${JSON.stringify({ id: "a", output: "revenue rose" })}\n`);

async function inProcess(args: readonly string[]) {
  let out = "";
  let err = "";
  const started = Date.now();
  const code = await runCli(args, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err, ms: Date.now() - started };
}

/**
 * The built `rubric` in a child process, killed after `ms`: a command that hangs on a FIFO blocks
 * in open(), which no test timeout can interrupt in-process. `timedOut` says it had to be killed.
 */
function rubricWithin(args: readonly string[], options: { stdin?: string; env?: Record<string, string>; ms?: number }) {
  return new Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }>((resolve) => {
    const child = spawn(process.execPath, [RUBRIC_BIN, ...args], {
      env: { ...process.env, OPENAI_API_KEY: "", HF_TOKEN: "", ...options.env },
    });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, options.ms ?? 15_000);
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
    child.stdin.end(options.stdin ?? "");
  });
}

describe("/dev/zero as any input file (issue 29 item 24)", () => {
  // Each flag that names a file, as the issue lists them; every one read to 5–17 GB before.
  const train = file("train.jsonl", "{}\n");
  // One HotpotQA question, so that `eval` gets as far as its predictions file.
  const question = file(
    "dev.jsonl",
    `${JSON.stringify({ _id: "q1", question: "Q?", answer: "A", supporting_facts: [["T", 0]], context: [["T", ["A."]]] })}\n`,
  );
  const cases: readonly (readonly string[])[] = [
    ["validate", "/dev/zero"],
    ["score", "--rubric", "/dev/zero", "--verdicts", verdictsFile],
    ["score", "--rubric", rubricFile, "--verdicts", "/dev/zero"],
    ["score", "--rubric", rubricFile, "--verdicts", verdictsFile, "--weights", "/dev/zero"],
    ["score", "--rubric", rubricFile, "--outputs", "/dev/zero"],
    ["report", "/dev/zero", "--out", join(dir, "zero.html")],
    ["eval", "hotpotqa", "--data", "/dev/zero", "--predictions", verdictsFile],
    ["eval", "hotpotqa", "--data", question, "--predictions", "/dev/zero"],
    ["hackbench", "--rubric", rubricFile, "--samples", "/dev/zero", "--out", join(dir, "card.json")],
    ["repro", "arco", "--out", join(dir, "arco"), "--train-data", train, "--eval-data", "/dev/zero"],
    ["mu", "init", "--out", join(dir, "mu"), "--corpus", "/dev/zero"],
  ];
  it.runIf(existsSync("/dev/zero"))(
    "is refused by name at once, before anything is read",
    async () => {
      for (const args of cases) {
        const run = await inProcess(args);
        const label = args.join(" ");
        expect(run.code, `${label}: ${run.err}`).toBe(args[0] === "hackbench" ? 2 : 1);
        expect(run.err, label).toMatch(/\/dev\/zero: is a character device, not a regular file/);
        expect(run.ms, label).toBeLessThan(5_000);
      }
    },
    60_000,
  );
});

describe("standard input and FIFOs (issue 29 items 14 and 18)", () => {
  it("reads --rubric /dev/stdin fed from a pipe, and `-`, where /dev/stdin crashed with ERR_MODULE_NOT_FOUND", async () => {
    // A shell's pipe, as in the issue: standard input is a FIFO. --outputs loads the scoring code
    // after the rubric is read: the import that failed.
    const shell = spawnSync(
      "sh",
      [
        "-c",
        'cat "$1" | "$2" "$3" score --rubric /dev/stdin --outputs "$4" --json',
        "sh",
        rubricFile,
        process.execPath,
        RUBRIC_BIN,
        outputsFile,
      ],
      { encoding: "utf8", timeout: 30_000 },
    );
    expect(shell.stderr).not.toContain("ERR_MODULE_NOT_FOUND");
    expect(shell.status, shell.stderr).toBe(0);
    expect(JSON.parse(shell.stdout).results[0]).toMatchObject({ id: "a", normalized: 1 });
    // Node's own pipes to a child are sockets, which cannot be opened by name at all (ENXIO).
    const text = JSON.stringify(rubric);
    const piped = await rubricWithin(["score", "--rubric", "/dev/stdin", "--outputs", outputsFile, "--json"], {
      stdin: text,
    });
    expect(piped.code, piped.stderr).toBe(0);
    expect(JSON.parse(piped.stdout).results[0]).toMatchObject({ id: "a", normalized: 1 });
    const dash = await rubricWithin(["validate", "-"], { stdin: text });
    expect(dash.code, dash.stderr).toBe(0);
    expect(dash.stdout).toContain("1 rubric(s)");
    const outputs = await rubricWithin(["score", "--rubric", rubricFile, "--outputs", "-", "--json"], {
      stdin: readFileSync(outputsFile, "utf8"),
    });
    expect(outputs.code, outputs.stderr).toBe(0);
  }, 60_000);

  it("refuses a FIFO named as an input by name, at once, instead of waiting for a writer", async () => {
    const pipe = fifo(join(dir, "rubric-fifo.json"));
    const run = await rubricWithin(["validate", pipe], { ms: 10_000 });
    expect(run.timedOut).toBe(false);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `InputFileNotRegularError: ${pipe}: is a FIFO (named pipe), not a regular file; name a regular file, or - to read standard input`,
    );
  }, 30_000);
});

describe("score --outputs: one line too long (issue 29 item 15)", () => {
  it("is a named error with the file and line, from the default bound (64 MiB)", async () => {
    const long = file("long.jsonl", "");
    // Sparse: one line of 64 MiB + 1 zero bytes, no disk spent. A 600 MB line threw a bare
    // `RangeError: Invalid string length`; this one, under that size, was read whole before.
    truncateSync(long, 64 * 2 ** 20 + 1);
    const run = await inProcess(["score", "--rubric", rubricFile, "--outputs", long, "--json"]);
    expect(run.code).toBe(1);
    expect(run.out).toBe("");
    expect(run.err).toBe(
      `InputLineTooLongError: ${long}:line 1: longer than 64 MiB, the most one line may hold; nothing was read past it\n`,
    );
  }, 30_000);
});

describe("report on a run directory (issue 29 items 2, 10 and 14)", () => {
  /** An ARCO run directory as `repro arco` writes it: its table.json and table.md. */
  function runDirectory(name: string): string {
    const run = join(dir, name);
    mkdirSync(run);
    writeFileSync(join(run, "table.json"), JSON.stringify(arcoTable));
    writeFileSync(join(run, "table.md"), arcoMarkdown(arcoTable));
    return run;
  }
  const SECRET = "sk-issue-29-secret";

  it("never puts a linked file's contents into the page: table.md is not read, table.json not followed", async () => {
    const run = runDirectory("linked-md");
    execFileSync("ln", ["-sf", "/proc/self/environ", join(run, "table.md")]);
    const page = join(dir, "linked-md.html");
    const written = await rubricWithin(["report", run, "--out", page], { env: { OPENAI_API_KEY: SECRET } });
    expect(written.code, written.stderr).toBe(0);
    expect(readFileSync(page, "utf8")).not.toContain(SECRET);

    for (const target of ["/proc/self/environ", "/etc/passwd"]) {
      const linked = runDirectory(`linked-json-${target.replaceAll("/", "-")}`);
      execFileSync("ln", ["-sf", target, join(linked, "table.json")]);
      const out = join(dir, `linked-json${target.replaceAll("/", "-")}.html`);
      const refused = await rubricWithin(["report", linked, "--out", out], { env: { OPENAI_API_KEY: SECRET } });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        `InputFileSymlinkError: ${join(linked, "table.json")}: is a symbolic link (to ${target})`,
      );
      expect(refused.stderr).not.toContain(SECRET);
      expect(refused.stderr).not.toContain("root:");
      expect(existsSync(out)).toBe(false);
    }
  }, 60_000);

  it("draws the tables from table.json, so an edited table.md cannot contradict the plots", async () => {
    const run = runDirectory("edited");
    writeFileSync(join(run, "table.md"), "# Edited\n\n| method | EM |\n| --- | --- |\n| rar | 99.9 (edited) |\n");
    const page = join(dir, "edited.html");
    const written = await inProcess(["report", run, "--out", page]);
    expect(written.code, written.err).toBe(0);
    const html = readFileSync(page, "utf8");
    expect(html).not.toContain("99.9 (edited)");
    // A line of the table as table.json gives it: its first table row.
    const firstRow = arcoMarkdown(arcoTable)
      .split("\n")
      .find((line) => line.startsWith("| ") && !line.startsWith("| ---"))!;
    const firstCell = firstRow.split("|")[1]!.trim();
    expect(html).toContain(JSON.stringify(firstCell).slice(1, -1));
  });

  it("is not hung by a FIFO or /dev/zero in a run directory: refused by name, or not read at all", async () => {
    const mdFifo = runDirectory("fifo-md");
    execFileSync("rm", [join(mdFifo, "table.md")]);
    fifo(join(mdFifo, "table.md"));
    const md = await rubricWithin(["report", mdFifo, "--out", join(dir, "fifo-md.html")], { ms: 15_000 });
    expect(md.timedOut).toBe(false);
    expect(md.code, md.stderr).toBe(0);

    const jsonFifo = runDirectory("fifo-json");
    execFileSync("rm", [join(jsonFifo, "table.json")]);
    fifo(join(jsonFifo, "table.json"));
    const json = await rubricWithin(["report", jsonFifo, "--out", join(dir, "fifo-json.html")], { ms: 15_000 });
    expect(json.timedOut).toBe(false);
    expect(json.code).toBe(1);
    expect(json.stderr).toContain(`${join(jsonFifo, "table.json")}: is a FIFO (named pipe), not a regular file`);

    const zero = runDirectory("zero-json");
    execFileSync("ln", ["-sf", "/dev/zero", join(zero, "table.json")]);
    const refused = await inProcess(["report", zero, "--out", join(dir, "zero.html")]);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`${join(zero, "table.json")}: is a symbolic link (to /dev/zero)`);
  }, 60_000);
});
