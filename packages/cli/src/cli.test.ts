import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./cli.js";
import { runRubricHere } from "./__fixtures__/run-cli.js";
import { EXIT_CODES, exitCodeTable } from "./exit-codes.js";

/**
 * `rubric validate` and `rubric score` on the real GDPval files in ../shared: once as the built
 * binary (dist/main.js in a child process; `pnpm test` builds first), then through `runCli` in
 * this process, the code the binary runs.
 */
const BIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const SHARED = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../shared/", import.meta.url));
const TRAIN = join(SHARED, "data/gdpval/rubrics-train.jsonl");
const EVAL = join(SHARED, "data/gdpval/rubrics-eval.jsonl");
const ORACLE = fileURLToPath(new URL("../../core/src/score/__fixtures__/reference_staged.py", import.meta.url));

/** `rubric <args>` as the binary, in a child process: the first test, the binary's own path. */
function rubricBinary(...args: string[]) {
  const run = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8" });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/**
 * `rubric <args>` through `runCli` in this process: what `main` runs, without a child's second of
 * start-up per call (two or three on the 2-core CI machine, for commands that take milliseconds).
 */
const rubric = (...args: string[]) => runRubricHere(args);

let dir: string;
function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "rubric-cli-"));
});

describe("rubric validate", () => {
  it("accepts all 219 shipped GDPval rubrics", async () => {
    const run = rubricBinary("validate", TRAIN, EVAL);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("175 rubric(s): 175 staged, 0 flat, 1383 criteria");
    expect(run.stdout).toContain("44 rubric(s): 44 staged, 0 flat, 349 criteria");
    // Valid but flawed rubrics are warned about, with the line and path of the flaw.
    const warnings = run.stderr.trim().split("\n");
    expect(warnings.every((w) => w.startsWith("warning: "))).toBe(true);
    expect(warnings).toContain(
      `warning: ${EVAL}:line 9: rubric.stages[0]: rule weights sum to 1, below max_points 3: the stage can never earn its maximum`,
    );
    expect(
      warnings.some((w) =>
        /rubric\.stages\[0\]: rule weights sum to 1, below min_score_to_pass 3: this gate can never pass \(zero_category: every output scores 0\)/.test(
          w,
        ),
      ),
    ).toBe(true);
  });

  it("exits 1 listing every error with its file, line and path", async () => {
    const lines = readFileSync(EVAL, "utf8").split("\n").slice(0, 3);
    const bad = JSON.parse(lines[1]!);
    bad.rubric.stages[1].rules[0].weight = -2;
    bad.rubric.stages[0].colour = "red";
    const path = file("bad.jsonl", [lines[0], JSON.stringify(bad), "{oops", lines[2]].join("\n"));
    const run = await rubric("validate", path);
    expect(run.code).toBe(1);
    // Errors first, then any lint warnings about the lines that did load.
    expect(
      run.stderr
        .trim()
        .split("\n")
        .filter((l) => l.startsWith("error:")),
    ).toEqual([
      `error: ${path}:line 2: rubric.stages[0].colour: unknown field`,
      `error: ${path}:line 2: rubric.stages[1].rules[0].weight: expected ≥ 0, got -2`,
      expect.stringMatching(new RegExp(`^error: ${path}:line 3: \\(root\\): invalid JSON: .*\\(column 2\\)$`)),
    ]);
    expect(run.stdout).toContain("FAIL");
    const json = JSON.parse((await rubric("validate", "--json", path)).stdout);
    expect(json.valid).toBe(false);
    expect(json.files[0].rubrics).toBe(2);
  });

  // Issue 13 item 12: each of these validated, and then `score` failed or lost a verdict.
  it("refuses what cannot be scored: unknown kinds, invalid specs, RE2-unsupported patterns, reserved and invisible ids", async () => {
    const criterion = (id: string, verifier: unknown) => ({ id, text: `criterion ${id}`, weight: 1, verifier });
    const path = file("unscorable.json", [
      {
        id: "r",
        criteria: [
          criterion("a", { kind: "regex", pattern: "(a)\\1" }),
          criterion("b", { kind: "length", unit: "words", colour: "red" }),
          criterion("c", { kind: "llm-judge", scale: { min: 3, max: 1 } }),
          criterion("d", { kind: "llm-judge" }),
          criterion("e", { kind: "regex", pattern: "(a)\\1", engine: "js" }),
        ],
      },
      { id: "s", criteria: [criterion("__proto__", { kind: "length" }), criterion("x\u202ey", { kind: "length" })] },
    ]);
    const run = await rubric("validate", path);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split("\n")).toEqual([
      `error: ${path}: [1].criteria[0].id: "__proto__" is reserved (__proto__, constructor, prototype have a meaning of their own in JavaScript objects, where verdicts are keyed by id); choose another id`,
      `error: ${path}: [1].criteria[1].id: holds U+202E RIGHT-TO-LEFT OVERRIDE at index 1, an invisible character; ids must read as they are`,
      `error: ${path}: [0].criteria[0].verifier.pattern: invalid regex spec: RE2 cannot run /(a)\\1/: backreference \\1 at offset 3. Rewrite it without that, or set "engine": "js" to run it with JavaScript's backtracking engine under a time limit`,
      expect.stringMatching(/: \[0\]\.criteria\[1\]\.verifier\.colour: invalid length spec: /),
      expect.stringMatching(/: \[0\]\.criteria\[2\]\.verifier\.scale\.max: invalid llm-judge spec: /),
    ]);
    // The shape alone is what --schema-only checks.
    expect((await rubric("validate", "--schema-only", path)).stderr).not.toContain("verifier");
  });

  // Issue 29 item 5: a JSON Schema's patterns run on RE2 like regex rules, so one RE2 cannot run is
  // refused here, at its path in the file, instead of running on a backtracking engine at score time.
  it("refuses a JSON Schema pattern RE2 cannot run, naming its path in the rubric", async () => {
    const schema = {
      type: "object",
      properties: { id: { type: "string", pattern: "(a)\\1" } },
      patternProperties: { "(?=a)": { type: "number" } },
    };
    const path = file("schema-patterns.json", {
      id: "r",
      criteria: [
        { id: "j", text: "JSON", weight: 1, verifier: { kind: "json-schema", schema } },
        { id: "k", text: "JSON", weight: 1, verifier: { kind: "json-schema", schema: { pattern: "^(a+)+$" } } },
      ],
    });
    const run = await rubric("validate", path);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split("\n")).toEqual([
      `error: ${path}: criteria[0].verifier.schema.properties.id.pattern: invalid json-schema spec: RE2 cannot run /(a)\\1/: backreference \\1 at offset 3. JSON Schema patterns run on RE2 alone (linear time); rewrite it without that`,
    ]);
    // One finding per criterion: the first; the lookahead is the next one to fix.
    const fixed = { ...schema, properties: {} };
    writeFileSync(
      path,
      JSON.stringify({
        id: "r",
        criteria: [{ id: "j", text: "JSON", weight: 1, verifier: { kind: "json-schema", schema: fixed } }],
      }),
    );
    expect((await rubric("validate", path)).stderr).toContain(
      "criteria[0].verifier.schema.patternProperties.(?=a): invalid json-schema spec: RE2 cannot run /(?=a)/: lookahead (?= at offset 0.",
    );
  });

  it("warns, without failing, on ids that read alike", async () => {
    const path = file("confusable.json", {
      id: "r",
      criteria: ["tone", "ｔｏｎｅ"].map((id) => ({
        id,
        text: id,
        weight: 1,
        verifier: { kind: "length", unit: "words", min: 1 },
      })),
    });
    const run = await rubric("validate", path);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`warning: ${path}: criteria[1].id: id "ｔｏｎｅ" reads like "tone" (criteria[0].id)`);
  });

  it("reports an unreadable file as input error, a missing argument as usage error", async () => {
    expect(await rubric("validate", join(dir, "nope.json"))).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("no such file"),
    });
    expect((await rubric("validate")).code).toBe(2);
    expect((await rubric("frobnicate")).code).toBe(2);
  });
});

describe("rubric score (staged)", () => {
  const record = JSON.parse(readFileSync(EVAL, "utf8").split("\n")[0]!);
  const ids: string[] = record.rubric.stages.flatMap((s: { rules: unknown[] }, i: number) =>
    s.rules.map((_r, j) => `s${i}.r${j}`),
  );

  it("prints {total, max, normalized, stages, stoppedAt} as JSON", async () => {
    const rubricFile = file("one.jsonl", JSON.stringify(record));
    const verdicts = file("all.json", { scores: Object.fromEntries(ids.map((id) => [id, 1])) });
    const run = await rubric("score", "--rubric", rubricFile, "--verdicts", verdicts, "--json");
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(Object.keys(out)).toEqual(["rubric", "total", "max", "normalized", "stages", "stoppedAt", "failedGate"]);
    expect(out).toMatchObject({ rubric: record.task_id, total: 10, max: 10, normalized: 1, stoppedAt: null });
    expect(out.stages.map((s: { name: string }) => s.name)).toEqual(
      record.rubric.stages.map((s: { name: string }) => s.name),
    );
    expect(Object.keys(out.stages[0])).toEqual(["name", "score", "maxPoints", "passed"]);
  });

  // The CLI's path from files to the printed total on 24 cases; the algorithm itself is checked
  // against the same reference on many more in core's score/reference.test.ts.
  it("matches the reference algorithm on GDPval rubrics for arbitrary verdicts", async () => {
    const lines = readFileSync(EVAL, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "");
    const cases = fc.sample(
      fc.record({
        line: fc.nat({ max: lines.length - 1 }),
        values: fc.array(fc.oneof(fc.constantFrom(0, 1, 0.5), fc.double({ min: 0, max: 1, noNaN: true })), {
          minLength: 20,
          maxLength: 20,
        }),
        ignoreGates: fc.boolean(),
      }),
      { seed: 99, numRuns: 24 },
    );
    const requests = cases.map((c, k) => {
      const rec = JSON.parse(lines[c.line]!);
      const ruleIds: string[] = rec.rubric.stages.flatMap((s: { rules: unknown[] }, i: number) =>
        s.rules.map((_r, j) => `s${i}.r${j}`),
      );
      const fractions = Object.fromEntries(ruleIds.map((id, i) => [id, c.values[i % c.values.length]!]));
      const args = [
        "score",
        "--rubric",
        EVAL,
        "--task",
        rec.task_id,
        "--verdicts",
        file(`v${k}.json`, { scores: fractions }),
        "--json",
      ];
      if (c.ignoreGates) args.push("--ignore-gates");
      return { args, oracle: { rubric: rec, fractions, ignore_gates: c.ignoreGates } };
    });
    const python = process.env["RUBRIC_PYTHON"] ?? "python3";
    const expected = JSON.parse(
      execFileSync(python, [ORACLE], { input: JSON.stringify({ cases: requests.map((r) => r.oracle) }) }).toString(),
    ).results;
    for (const [k, request] of requests.entries()) {
      const run = await rubric(...request.args);
      expect(run.stderr).toBe("");
      const out = JSON.parse(run.stdout);
      const ref = expected[k];
      expect([out.total, out.normalized, out.stoppedAt]).toEqual([ref.total, ref.normalized, ref.stopped_at]);
      expect(out.stages.map((s: { score: number; passed: boolean }) => [s.score, s.passed])).toEqual(
        ref.stages.map((s: { score: number; passed: boolean }) => [s.score, s.passed]),
      );
    }
  });

  it("applies --weights and --ignore-gates", async () => {
    const rubricFile = file("one-b.jsonl", JSON.stringify(record));
    // Fail the structural gate: the category drops to on_failure_score ...
    const gateFails = file("gate.json", {
      scores: Object.fromEntries(ids.map((id) => [id, id.startsWith("s0.") ? 0 : 1])),
    });
    const failed = JSON.parse(
      (await rubric("score", "--rubric", rubricFile, "--verdicts", gateFails, "--json")).stdout,
    );
    expect(failed).toMatchObject({ total: 0, stoppedAt: record.rubric.stages[0].name });
    // ... unless gates are ignored,
    const ignored = JSON.parse(
      (await rubric("score", "--rubric", rubricFile, "--verdicts", gateFails, "--ignore-gates", "--json")).stdout,
    );
    expect(ignored.stoppedAt).toBeNull();
    expect(ignored.total).toBeGreaterThan(0);
    // ... or the gate's rule is reweighted to nothing and its pass mark can no longer be met either way.
    const weights = file("w.json", { weights: { "s0.r0": 0 } });
    const reweighted = JSON.parse(
      (await rubric("score", "--rubric", rubricFile, "--verdicts", gateFails, "--weights", weights, "--json")).stdout,
    );
    expect(reweighted.stages[0].score).toBe(0);
  });

  it("never turns an error verdict into a 0 unless asked", async () => {
    const rubricFile = file("one-c.jsonl", JSON.stringify(record));
    const verdicts = file("err.json", {
      verdicts: ids.map((id) =>
        id === "s1.r0"
          ? { criterionId: id, score: null, status: "error", error: "Traceback: KeyError 'Sheet1'" }
          : { criterionId: id, score: 1, status: "ok" },
      ),
    });
    const run = await rubric("score", "--rubric", rubricFile, "--verdicts", verdicts, "--json");
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^CriterionErrorsError: .*s1\.r0 \(verifier error: Traceback: KeyError 'Sheet1'\)/);
    // The library names its option (errorsAs); the user is told the flag.
    expect(run.stderr).toContain("Pass --errors-as zero or --errors-as renormalize to score anyway.");
    expect(run.stderr).not.toContain("errorsAs");
    expect(run.stdout).toBe("");
    const zero = await rubric("score", "--rubric", rubricFile, "--verdicts", verdicts, "--errors-as", "zero", "--json");
    expect(zero.code).toBe(0);
    const maybe = await rubric("score", "--rubric", rubricFile, "--verdicts", verdicts, "--errors-as", "maybe");
    expect(maybe.code).toBe(2);
    expect(maybe.stderr).toContain('--errors-as: expected one of fail, zero, renormalize, got "maybe"');
  });

  it("names the fault in a bad verdicts file", async () => {
    const rubricFile = file("one-d.jsonl", JSON.stringify(record));
    const typo = file("typo.json", { scores: { ...Object.fromEntries(ids.map((id) => [id, 1])), "s9.r9": 1 } });
    expect((await rubric("score", "--rubric", rubricFile, "--verdicts", typo)).stderr).toMatch(
      /unknown criterion id "s9.r9"/,
    );
    const outOfRange = file("range.json", { scores: { "s0.r0": 2 } });
    expect((await rubric("score", "--rubric", rubricFile, "--verdicts", outOfRange)).stderr).toContain(
      "scores.s0.r0: expected ≤ 1, got 2",
    );
    expect((await rubric("score", "--rubric", EVAL, "--verdicts", typo)).code).toBe(2); // 44 rubrics, no --task
  });
});

describe("rubric score (flat)", () => {
  it("prints normalised, unclipped and per-criterion contributions", async () => {
    const flat = file("flat.json", {
      id: "memo",
      criteria: [
        { id: "accurate", text: "Numbers are right", weight: 3, verifier: { kind: "numeric" } },
        { id: "cited", text: "Cites sources", weight: 1, verifier: { kind: "citations" } },
        { id: "rude", text: "Insults the reader", weight: 2, polarity: "penalty", verifier: { kind: "llm-judge" } },
      ],
    });
    const verdicts = file("flat-v.json", { scores: { accurate: 1, cited: 0.5, rude: 1 } });
    const out = JSON.parse((await rubric("score", "--rubric", flat, "--verdicts", verdicts, "--json")).stdout);
    // (3 + 0.5 − 2) / 4 = 0.375
    expect(out).toMatchObject({ total: 1.5, max: 4, normalized: 0.375, unclipped: 0.375 });
    expect(out.criteria.map((c: { contribution: number }) => c.contribution)).toEqual([0.75, 0.125, -0.5]);
    const text = (await rubric("score", "--rubric", flat, "--verdicts", verdicts)).stdout;
    expect(text).toContain("memo: normalized 0.3750");
  });
});

describe("runCli in-process", () => {
  it("prints help and JSON Schemas", async () => {
    let out = "";
    const io = { out: (t: string) => (out += t), err: () => {} };
    expect(await runCli(["help", "score"], io)).toBe(0);
    expect(out).toContain("--ignore-gates");
    out = "";
    expect(await runCli(["schema", "flat"], io)).toBe(0);
    expect(JSON.parse(out).required).toEqual(["id", "criteria"]);
    expect(await runCli(["schema", "nope"], io)).toBe(2);
  });

  it("answers `schema --help` with its help, and suggests the command a typo meant", async () => {
    let out = "";
    let err = "";
    const io = { out: (t: string) => (out += t), err: (t: string) => (err += t) };
    expect(await runCli(["schema", "--help"], io)).toBe(0);
    expect(out).toContain("rubric schema <flat|staged|staged-record>");
    expect(await runCli(["scor", "--rubric", "x"], io)).toBe(2);
    expect(err).toContain('unknown command "scor" (did you mean "score"?)');
    err = "";
    expect(await runCli(["deploy"], io)).toBe(2);
    expect(err).toContain('unknown command "deploy"');
    expect(err).not.toContain("did you mean");
  });
});

describe("rubric help", () => {
  const COMMANDS = ["validate", "score", "schema", "elicit", "repro", "hackbench", "eval"];
  const capture = () => {
    const seen = { out: "", err: "" };
    return { seen, io: { out: (t: string) => (seen.out += t), err: (t: string) => (seen.err += t) } };
  };

  it("lists every command and prints the exit-code table", async () => {
    const { seen, io } = capture();
    expect(await runCli(["--help"], io)).toBe(0);
    for (const command of COMMANDS) expect(seen.out).toMatch(new RegExp(`^ {2}${command} +\\S`, "m"));
    expect(seen.out).toContain(exitCodeTable());
    expect(exitCodeTable().split("\n")).toHaveLength(EXIT_CODES.length + 1);
    const { seen: plain, io: io2 } = capture();
    expect(await runCli([], io2)).toBe(0);
    expect(plain.out).toBe(seen.out);
  });

  it("gives each command one help, whether asked by `help <command>`, --help or -h", async () => {
    for (const command of COMMANDS) {
      const routes = [
        ["help", command],
        [command, "--help"],
        [command, "-h"],
      ];
      const texts: string[] = [];
      for (const argv of routes) {
        const { seen, io } = capture();
        expect(await runCli(argv, io), argv.join(" ")).toBe(0);
        texts.push(seen.out);
      }
      expect(texts[1]).toBe(texts[0]);
      expect(texts[2]).toBe(texts[0]);
      expect(texts[0]).toMatch(new RegExp(`^Usage: rubric ${command} `));
      expect(texts[0]).toContain("-h, --help");
    }
  });

  it("describes every flag a command declares", async () => {
    const { seen, io } = capture();
    await runCli(["help", "repro"], io);
    for (const flag of [
      "--eps-low <x>",
      "--task-ids <a,b,…>",
      "--max-n <n>",
      "--errors-as <policy>",
      "--context-size <n>",
      "--threads <n>",
      "--quick",
    ])
      expect(seen.out).toContain(flag);
  });

  it("refuses an unknown flag with a suggestion, and help for an unknown command", async () => {
    const { seen, io } = capture();
    expect(await runCli(["score", "--rubric", "r.json", "--ignore-gate"], io)).toBe(2);
    expect(seen.err).toBe(
      "rubric: score: unknown flag --ignore-gate (did you mean --ignore-gates?)\nRun `rubric help score` for usage.\n",
    );
    const other = capture();
    expect(await runCli(["help", "scor"], other.io)).toBe(2);
    expect(other.seen.err).toContain('unknown command "scor" (did you mean "score"?)');
  });

  it("makes a missing required flag and a rejected value usage errors naming the flag", async () => {
    const { seen, io } = capture();
    expect(await runCli(["hackbench", "--rubric", "r.json", "--out", "card.json"], io)).toBe(2);
    expect(seen.err).toContain("hackbench needs --samples <file.jsonl>");
    const bad = capture();
    expect(
      await runCli(
        ["elicit", "--task", "x", "--manager", "policy:default", "--out", "t.jsonl", "--budget", "-1"],
        bad.io,
      ),
    ).toBe(2);
    expect(bad.seen.err).toContain('--budget: expected an integer ≥ 0, got "-1"');
  });
});
