import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runRubric, runRubricHere } from "./__fixtures__/run-cli.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
// The OpenAI-wire test server of @rubric/verifiers: a test fixture, not part of its public API.
import { chatReply, startOpenAIChatServer, type OpenAIChatServer } from "@rubric/providers/testing";
import { runCli } from "./cli.js";

/**
 * `rubric score --outputs` as a user runs it: the built binary, real verifiers, a real local
 * GGUF model, and a real HTTP judge server on 127.0.0.1.
 */
const SHARED = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../shared/", import.meta.url));

// Async so the judge server in this process can answer while the CLI runs.
const rubric = (...args: string[]) => runRubric(args);
/** The same, in this process: for refusals that come before any work. */
const here = (...args: string[]) => runRubricHere(args);

let dir: string;
let server: OpenAIChatServer;
let rubricFile: string;
let rulesOnly: string;
let outputsFile: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rubric-outputs-"));
  server = await startOpenAIChatServer();
  const criteria = [
    { id: "rev", text: "Mentions revenue", weight: 2, verifier: { kind: "includes", terms: ["revenue"] } },
    { id: "cite", text: "Cites a source", weight: 1, verifier: { kind: "citations" } },
  ];
  rulesOnly = join(dir, "rules.json");
  writeFileSync(rulesOnly, JSON.stringify({ id: "rules", criteria }));
  rubricFile = join(dir, "judged.json");
  writeFileSync(
    rubricFile,
    JSON.stringify({
      id: "judged",
      criteria: [
        ...criteria,
        { id: "clear", text: "Is clear", weight: 1, verifier: { kind: "llm-judge", scale: { min: 0, max: 4 } } },
      ],
    }),
  );
  outputsFile = join(dir, "outputs.jsonl");
  writeFileSync(
    outputsFile,
    [
      '{"id": "a", "input": "Summarise Q3", "output": "Revenue rose 4% in Q3 [1]."}',
      '{"id": "b", "output": "No idea."}',
    ].join("\n"),
  );
});
afterAll(() => server.close());
beforeEach(() => server.reset());

describe("rubric score --outputs", () => {
  it("runs rule verifiers with no judge", async () => {
    const run = await rubric("score", "--rubric", rulesOnly, "--outputs", outputsFile, "--json");
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.results.map((r: { id: string; normalized: number }) => [r.id, r.normalized])).toEqual([
      ["a", 1],
      ["b", 0],
    ]);
    expect(report.results[0].verdicts[0]).toEqual({
      criterionId: "rev",
      score: 1,
      status: "ok",
      rationale: "all terms present",
    });
    // Not a terminal: no bar, no escape codes, one plain line for the stage; stdout stays pure JSON.
    expect(run.stderr).toMatch(/^outputs: 2\/2 \(\d+\.\d s\)\n$/);
    // Plain output ends with one summary line: mean and quantiles (numpy's linear) of the scores.
    const plain = await rubric("score", "--rubric", rulesOnly, "--outputs", outputsFile);
    expect(plain.stdout.trimEnd().split("\n").at(-1)).toBe(
      "summary: 2 output(s), 2 scored: mean 0.5000, p10 0.1000, median 0.5000, p90 0.9000; 0 unscored, 0 error verdict(s)",
    );
  });

  it("refuses judge criteria without a judge, before doing any work", async () => {
    const run = await here("score", "--rubric", rubricFile, "--outputs", outputsFile);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/clear: no verifier for kind "llm-judge" \(configure a judge model/);
    // The verifiers say it in library terms; the CLI names the flag that configures a judge.
    expect(run.stderr).toContain("Pass --judge <provider> to judge the llm-judge criteria.");
  });

  it("judges with a real local GGUF model: grammar-valid verdicts (their judgement is meaningless)", async () => {
    const run = await rubric(
      "score",
      "--rubric",
      rubricFile,
      "--outputs",
      outputsFile,
      "--judge",
      `llama-cpp:${join(SHARED, "models/stories260K.gguf")}`,
      "--json",
    );
    expect(run.code, run.stderr).toBe(0);
    for (const result of JSON.parse(run.stdout).results) {
      const clear = result.verdicts.find((v: { criterionId: string }) => v.criterionId === "clear");
      expect(clear.status).toBe("ok");
      // On the 0–4 scale in halves, as a fraction.
      expect([0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1]).toContain(clear.score);
      expect(typeof clear.rationale).toBe("string");
    }
  });

  it("judges through an OpenAI-compatible server, one call per output, and caches", async () => {
    server.setHandler(() => chatReply.json({ rationale: "Clear enough.", score: 3 }));
    const cache = join(dir, "cache");
    const args = [
      "score",
      "--rubric",
      rubricFile,
      "--outputs",
      outputsFile,
      "--judge",
      `openai-compatible:${server.url}#judge-model`,
      "--cache",
      cache,
      "--json",
    ];
    const first = await rubric(...args);
    expect(first.code, first.stderr).toBe(0);
    expect(server.chatRequests).toHaveLength(2);
    expect(server.chatRequests[0]!.body!.model).toBe("judge-model");
    const a = JSON.parse(first.stdout).results[0];
    // rev 2 + cite 1 + clear 3/4 → 3.75 / 4
    expect(a.normalized).toBeCloseTo(3.75 / 4, 12);
    const second = await rubric(...args);
    expect(server.chatRequests).toHaveLength(2);
    expect(JSON.parse(second.stdout)).toEqual(JSON.parse(first.stdout));
  });

  it("a judge that always fails: exit 2, error verdicts, never zeros, and no score by default", async () => {
    server.setHandler(() => chatReply.serverError(500));
    const args = ["score", "--rubric", rubricFile, "--outputs", outputsFile];
    const judge = ["--judge", `openai-compatible:${server.url}#judge-model`, "--judge-retries", "0"];
    const run = await rubric(...args, ...judge, "--json");
    expect(run.code).toBe(2);
    const report = JSON.parse(run.stdout);
    expect(report.errors).toBe(2);
    expect(report.errorsAs).toBe("fail");
    for (const result of report.results) {
      const clear = result.verdicts.find((v: { criterionId: string }) => v.criterionId === "clear");
      expect(clear).toMatchObject({ status: "error", score: null });
      expect(clear.error).toMatch(/500/);
      // With the judge down, no output is scored on its rule criteria alone.
      expect(result).toMatchObject({ normalized: null, errorsAs: "fail" });
    }
    expect(run.stderr).toMatch(/2 verdict\(s\) were errors/);

    // Renormalising is there when asked for, and every result says it was renormalised.
    const renormalized = await rubric(...args, ...judge, "--errors-as", "renormalize", "--json");
    expect(renormalized.code).toBe(2);
    const again = JSON.parse(renormalized.stdout);
    expect(again.results[0]).toMatchObject({ normalized: 1, errors: 1, errorsAs: "renormalize" });
    const text = await rubric(...args, ...judge, "--errors-as", "renormalize");
    expect(text.stdout).toMatch(/^a\s+1\.0000\s+1\s+\(renormalize: 1 criteria left out\)$/m);
    // Plain output names the first error's cause, not only how many there were.
    expect(text.stderr).toMatch(/first error \(output "a", criterion "clear"\): .*500/u);
    const unscored = await rubric(...args, ...judge);
    expect(unscored.stdout.trimEnd().split("\n").at(-1)).toBe(
      "summary: 2 output(s), none scored; 2 unscored, 2 error verdict(s)",
    );
    server.setHandler(undefined);
  }, 60_000);

  it("bounds a judge that never answers by --judge-timeout, --judge-retries and --judge-deadline", async () => {
    server.setHandler(() => chatReply.hang());
    const base = ["score", "--rubric", rubricFile, "--outputs", outputsFile, "--json"];
    const judge = ["--judge", `openai-compatible:${server.url}#judge-model`];
    const timedOut = await rubric(...base, ...judge, "--judge-timeout", "100", "--judge-retries", "1");
    expect(timedOut.code).toBe(2);
    const verdict = JSON.parse(timedOut.stdout).results[0].verdicts.find(
      (v: { criterionId: string }) => v.criterionId === "clear",
    );
    expect(verdict.error).toMatch(/timed out after 100 ms \(attempt 2 of 2\)/);
    // Two outputs, two attempts each.
    expect(server.chatRequests).toHaveLength(4);

    server.reset();
    server.setHandler(() => chatReply.hang());
    const deadline = await rubric(...base, ...judge, "--judge-timeout", "60000", "--judge-deadline", "300");
    expect(deadline.code).toBe(2);
    expect(deadline.stdout).toMatch(/ran past its 300 ms deadline after 1 attempt/);
    server.setHandler(undefined);
  }, 60_000);

  it("sends the judge a key only from the variable --judge-key-env names", async () => {
    server.setHandler(() => chatReply.json({ rationale: "ok", score: 4 }));
    const base = ["score", "--rubric", rubricFile, "--outputs", outputsFile, "--json"];
    const judge = ["--judge", `openai-compatible:${server.url}#judge-model`];
    const env = { OPENAI_API_KEY: "sk-ambient", JUDGE_KEY: "sk-judge" };
    expect((await runRubric([...base, ...judge], "", env)).code).toBe(0);
    expect((await runRubric([...base, ...judge, "--judge-key-env", "JUDGE_KEY"], "", env)).code).toBe(0);
    expect(server.chatRequests.map((r) => r.headers.authorization)).toEqual([
      undefined,
      undefined,
      "Bearer sk-judge",
      "Bearer sk-judge",
    ]);
    // The preflight before each run sent the key the run sends, and no other.
    expect(
      server.requests.filter((r) => r.method === "GET").map((r) => `${r.path} ${r.headers.authorization}`),
    ).toEqual(["/v1/models undefined", "/v1/models Bearer sk-judge"]);
    const unset = await runRubric([...base, ...judge, "--judge-key-env", "NOT_SET_ANYWHERE"], "", env);
    expect(unset.code).toBe(1);
    expect(unset.stderr).toMatch(/NOT_SET_ANYWHERE is not set/);
    server.setHandler(undefined);
  });

  it("checks the judge before scoring: a server that refuses the key or cannot be reached stops the run (exit 1) with no verdict; with --cache it is a warning", async () => {
    const keyed = await startOpenAIChatServer({ models: ["judge-model"], requireKey: "sk-right" });
    try {
      const base = ["score", "--rubric", rubricFile, "--outputs", outputsFile, "--json"];
      const spec = `openai-compatible:${keyed.url}#judge-model`;
      const refused = await runRubric([...base, "--judge", spec, "--judge-key-env", "JUDGE_KEY"], "", {
        JUDGE_KEY: "sk-wrong",
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe(
        `ProviderPreflightError: --judge ${spec}: ${keyed.url}/v1/models answered HTTP 401: the key in $JUDGE_KEY was refused\n`,
      );
      expect(refused.stdout).toBe("");
      expect(keyed.chatRequests).toHaveLength(0);
      // The right key: checked, then judged.
      const judged = await runRubric([...base, "--judge", spec, "--judge-key-env", "JUDGE_KEY"], "", {
        JUDGE_KEY: "sk-right",
      });
      expect(judged.stderr).not.toContain("warning");
      expect(keyed.chatRequests.length).toBeGreaterThan(0);
    } finally {
      await keyed.close();
    }
    // Nothing listens there any more.
    const gone = `openai-compatible:${keyed.url}#judge-model`;
    const unreachable = await rubric("score", "--rubric", rubricFile, "--outputs", outputsFile, "--judge", gone);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(
      new RegExp(
        `^ProviderPreflightError: --judge ${gone.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&")}: cannot reach .*/v1/models: .*ECONNREFUSED`,
        "u",
      ),
    );
    const cached = await rubric(
      ...["score", "--rubric", rubricFile, "--outputs", outputsFile, "--judge", gone],
      ...["--cache", join(dir, "preflight-cache"), "--judge-retries", "0"],
    );
    expect(cached.stderr).toMatch(
      /^warning: --judge .*: cannot reach .*; the verdicts in --cache .* are used, any other is an error$/mu,
    );
    // An empty cache: every judged verdict is an error (exit 2), never a score of 0.
    expect(cached.code).toBe(2);
  });

  it("refuses a --cache that is a file before scoring anything (exit 1, naming it)", async () => {
    const run = await here("score", "--rubric", rulesOnly, "--outputs", outputsFile, "--cache", outputsFile);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`verdict cache ${outputsFile}: is a file, not a directory`);
    expect(run.stdout).toBe("");
  });

  it("refuses judge flags without --outputs, naming them", async () => {
    const run = await here("score", "--rubric", rubricFile, "--verdicts", outputsFile, "--judge-timeout", "5");
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--judge-timeout need --outputs/);
  });

  it("draws a progress bar on a terminal", async () => {
    let err = "";
    const code = await runCli(
      ["score", "--rubric", rulesOnly, "--outputs", outputsFile, "--json"],
      { out: () => {}, err: (t) => (err += t) },
      { isTTY: true },
    );
    expect(code).toBe(0);
    // Drawn by cli-progress: the first update starts the bar, the last leaves it full on its own line.
    expect(err).toContain("[###############...............] 1/2 outputs");
    expect(err).toMatch(/\[#{30}\] 2\/2 outputs[^\n]*\n$/);
  });

  describe("output files and sandbox limits", () => {
    // A python rule that quotes its files back: a file it should not see would show up in the rationale.
    const echo = {
      id: "echo",
      criteria: [
        {
          id: "content",
          text: "Quotes its files",
          weight: 1,
          verifier: {
            kind: "python",
            code: "def evaluate(workflow, context):\n    return 1, ''.join(open(r.file_path).read() for r in context.get_all_outputs())\n",
          },
        },
      ],
    };
    let echoFile: string;
    let runDir: string;
    let secret: string;
    beforeAll(() => {
      echoFile = join(dir, "echo.json");
      writeFileSync(echoFile, JSON.stringify(echo));
      runDir = join(dir, "run");
      mkdirSync(runDir, { recursive: true });
      writeFileSync(join(runDir, "report.csv"), "a,b\n");
      secret = join(dir, "secret.txt");
      writeFileSync(secret, "not for rules\n");
    });

    it("keeps outputs' files to the outputs file's directory: others are that output's error, not the run's end", async () => {
      const outputs = join(runDir, "outputs.jsonl");
      writeFileSync(
        outputs,
        [
          JSON.stringify({ id: "abs", output: "", files: [{ name: "s.txt", path: secret }] }),
          JSON.stringify({ id: "up", output: "", files: [{ name: "s.txt", path: "../secret.txt" }] }),
          JSON.stringify({ id: "ok", output: "", files: [{ name: "report.csv", path: "report.csv" }] }),
        ].join("\n"),
      );
      const run = await rubric("score", "--rubric", echoFile, "--outputs", outputs, "--json");
      expect(run.code).toBe(2);
      expect(run.stdout).not.toContain("not for rules");
      const report = JSON.parse(run.stdout) as {
        results: { id: string; normalized: number | null; verdicts: { status: string; error?: string }[] }[];
      };
      expect(report.results.map((r) => [r.id, r.normalized, r.verdicts[0]!.status])).toEqual([
        ["abs", null, "error"],
        ["up", null, "error"],
        ["ok", 1, "ok"],
      ]);
      expect(report.results[0]!.verdicts[0]!.error).toContain(`OutputFileOutsideRootError: output file ${secret}`);
      expect(report.results[1]!.verdicts[0]!.error).toContain(`is outside the files root ${runDir}`);
      // An operator who means it names a wider root.
      const wider = await rubric("score", "--rubric", echoFile, "--outputs", outputs, "--files-root", dir, "--json");
      expect(wider.code).toBe(0);
      expect(wider.stdout).toContain("not for rules");
    });

    it("refuses a rule that asks for more than --max-rule-timeout-ms / --max-rule-memory-mb, before any work", async () => {
      const greedy = join(dir, "greedy.json");
      const criterion = echo.criteria[0]!;
      writeFileSync(
        greedy,
        JSON.stringify({
          id: "greedy",
          criteria: [{ ...criterion, verifier: { ...criterion.verifier, memoryMb: 8192 } }],
        }),
      );
      const byDefault = await here("score", "--rubric", greedy, "--outputs", outputsFile);
      expect(byDefault.code).toBe(1);
      expect(byDefault.stderr).toMatch(
        /content: invalid python spec at verifier\.memoryMb: asks for 8192 MiB, above the operator's maximum of 2048 MiB/,
      );
      const allowed = await rubric(
        "score",
        "--rubric",
        greedy,
        "--outputs",
        outputsFile,
        "--max-rule-memory-mb",
        "8192",
        "--json",
      );
      expect(allowed.code).toBe(0);
      const stricter = await rubric(
        "score",
        "--rubric",
        echoFile,
        "--outputs",
        outputsFile,
        "--max-rule-timeout-ms",
        "1",
      );
      expect(stricter.code).toBe(0); // the rule names no limit of its own: only what it asks for is checked
    });
  });

  it("scores outputs with edited weights (--weights), records them, and the report rescores with them", async () => {
    const partial = join(dir, "partial.jsonl");
    writeFileSync(partial, '{"id": "c", "output": "Revenue grew."}\n');
    const plain = JSON.parse((await rubric("score", "--rubric", rulesOnly, "--outputs", partial, "--json")).stdout);
    expect(plain.results[0].normalized).toBeCloseTo(2 / 3, 12); // rev (2) met, cite (1) not
    const weightsFile = join(dir, "weights.json");
    writeFileSync(weightsFile, JSON.stringify({ weights: { cite: 2 } }));
    const run = await rubric("score", "--rubric", rulesOnly, "--outputs", partial, "--weights", weightsFile, "--json");
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.results[0].normalized).toBeCloseTo(2 / 4, 12);
    expect(report.weights).toEqual({ cite: 2 });
    // The page rescores every output from the results file: with the weights it was scored with.
    const resultsFile = join(dir, "weighted-results.json");
    writeFileSync(resultsFile, run.stdout);
    const page = await rubric("report", resultsFile, "--out", join(dir, "weighted.html"));
    expect(page.code, page.stderr).toBe(0);
    // A weight for a criterion the rubric lacks is refused before any verifier runs, naming the file.
    writeFileSync(weightsFile, JSON.stringify({ weights: { cites: 2 } }));
    const typo = await rubric("score", "--rubric", rulesOnly, "--outputs", partial, "--weights", weightsFile);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain(`${weightsFile}: weights.cites: unknown criterion id`);
    expect(typo.stderr).not.toContain("outputs:");

    // The results file is accepted wherever verdicts are: every output rescored, no verifier called.
    writeFileSync(weightsFile, JSON.stringify({ weights: { cite: 0.5 } }));
    const plainResults = join(dir, "plain-results.json");
    writeFileSync(plainResults, JSON.stringify(plain));
    const rescored = await rubric(
      "score",
      "--rubric",
      rulesOnly,
      "--verdicts",
      plainResults,
      "--weights",
      weightsFile,
      "--json",
    );
    expect(rescored.code, rescored.stderr).toBe(0);
    const again = JSON.parse(rescored.stdout);
    expect(again.results[0]).toMatchObject({ id: "c", errorsAs: "fail" });
    expect(again.results[0].normalized).toBeCloseTo(2 / 2.5, 12);
    expect(again.weights).toEqual({ cite: 0.5 });
    // Without --weights, a file scored under weights is rescored under its own.
    const kept = await rubric("score", "--rubric", rulesOnly, "--verdicts", resultsFile, "--json");
    expect(JSON.parse(kept.stdout).results[0].normalized).toBeCloseTo(2 / 4, 12);
    const table = await rubric("score", "--rubric", rulesOnly, "--verdicts", plainResults);
    expect(table.stdout).toMatch(/^c\s+0\.6667\s+0$/m);
    expect(table.stdout).toContain("summary: 1 output(s), 1 scored: mean 0.6667");
    // A results file that does not read is named with its field, under its real name.
    writeFileSync(plainResults, JSON.stringify({ ...plain, errorsAs: "never" }));
    const bad = await rubric("score", "--rubric", rulesOnly, "--verdicts", plainResults);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`${plainResults}: errorsAs`);
  });

  it("names the line of a bad outputs file", async () => {
    const bad = join(dir, "bad.jsonl");
    writeFileSync(bad, '{"id": "a", "output": "x"}\n{"id": "b"}\n{"id": "a", "output": "y"}\n');
    const run = await here("score", "--rubric", rulesOnly, "--outputs", bad);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${bad}:line 2: output:`);
    expect(run.stderr).toContain(`${bad}:line 3: id: duplicate id "a"`);
  });
});
