import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { runRubric, runRubricHere } from "./__fixtures__/run-cli.js";

/** `rubric eval hotpotqa` as a user runs it: the built binary, on the real dev file. */
const SHARED = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../shared/", import.meta.url));
const DEV = join(SHARED, "data/hotpotqa/dev.jsonl");

/** The answer half of the official `hotpot_evaluate_v1.py`, kept beside rlxar's metrics. */
const OFFICIAL = fileURLToPath(new URL("../../rlxar/src/hotpotqa/__fixtures__/hotpot_evaluate.py", import.meta.url));

interface EvalJson {
  count: number;
  em: number;
  f1: number;
  arcoEm: number;
  missing: string[];
  unknown: string[];
  perQuestion: Record<string, { em: number; f1: number; arcoEm: number }>;
}

let dir: string;
let predictionsPath: string;
let rows: { _id: string; answer: string; question: string }[];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "rubric-eval-"));
  rows = readFileSync(DEV, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as { _id: string; answer: string; question: string });
  // Real-looking answers: right, padded, wrong, a yes/no said in a sentence, and ten left out.
  const answer: Record<string, string> = {};
  rows.forEach((row, i) => {
    if (i % 40 === 39) return;
    const kind = i % 4;
    answer[row._id] =
      row.answer === "yes" || row.answer === "no"
        ? `${row.answer}, it is`
        : kind === 0
          ? row.answer
          : kind === 1
            ? `The answer is ${row.answer}.`
            : kind === 2
              ? row.answer.split(" ")[0]!
              : "Paris";
  });
  answer["not-a-question"] = "42";
  predictionsPath = join(dir, "preds.json");
  writeFileSync(predictionsPath, JSON.stringify({ answer, sp: {} }));
});

describe("rubric eval hotpotqa", () => {
  it("--json: the official script's EM and F1 on the 400 dev questions, ARCO's EM beside them", async () => {
    const run = await runRubric(["eval", "hotpotqa", "--predictions", predictionsPath, "--data", DEV, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as EvalJson;
    const python = spawnSync("/usr/bin/python3", [OFFICIAL, "eval", predictionsPath, DEV], { encoding: "utf8" });
    expect(python.status, python.stderr).toBe(0);
    const official = JSON.parse(python.stdout) as {
      metrics: { em: number; f1: number };
      per: Record<string, number[]>;
    };
    expect(result.count).toBe(400);
    expect(result.em).toBeCloseTo(official.metrics.em, 12);
    expect(result.f1).toBeCloseTo(official.metrics.f1, 12);
    expect(Object.keys(result.perQuestion)).toEqual(rows.map((row) => row._id));
    for (const [id, [em, f1]] of Object.entries(official.per)) {
      expect(result.perQuestion[id]!.em, id).toBe(em);
      expect(result.perQuestion[id]!.f1, id).toBeCloseTo(f1!, 12);
    }
    expect(result.missing).toEqual(rows.filter((_, i) => i % 40 === 39).map((row) => row._id));
    expect(result.unknown).toEqual(["not-a-question"]);
    // "yes, it is" is right only by ARCO's variant, so its EM is the higher.
    const yesNo = rows.filter((row, i) => (row.answer === "yes" || row.answer === "no") && i % 40 !== 39);
    expect(yesNo.length).toBeGreaterThan(0);
    for (const row of yesNo) expect(result.perQuestion[row._id]).toEqual({ em: 0, f1: 0, arcoEm: 1 });
    expect(result.arcoEm - result.em).toBeCloseTo(yesNo.length / 400, 12);
    expect(result.em).toBeGreaterThan(0.2);
  });

  it("prints a summary without --json", async () => {
    const run = await runRubric(["eval", "hotpotqa", "--predictions", predictionsPath, "--data", DEV]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^400 questions of .*dev\.jsonl: EM \d+\.\d\d, F1 \d+\.\d\d, ARCO's EM \d+\.\d\d \(%\)\n/,
    );
    expect(run.stdout).toContain("10 without a prediction, scored 0: ");
    expect(run.stdout).toContain("1 predicted id not in the data, not scored: not-a-question\n");
  });

  it("exits 1 naming the file and every bad field of a predictions file, and an unreadable file", async () => {
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ answer: { a: 1, b: "ok" } }));
    const run = await runRubricHere(["eval", "hotpotqa", "--predictions", bad, "--data", DEV]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`^RlxarFileError: ${bad}: answer\\.a: .*string`));
    const missing = await runRubricHere(["eval", "hotpotqa", "--predictions", join(dir, "none.json"), "--data", DEV]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("none.json: cannot read (no such file)");
  });

  it("exits 1 listing the bad lines of a data file", async () => {
    const data = join(dir, "data.jsonl");
    const line = readFileSync(DEV, "utf8").split("\n")[0]!;
    writeFileSync(data, `${line}\n{"_id": "x"}\n`);
    const run = await runRubricHere(["eval", "hotpotqa", "--predictions", predictionsPath, "--data", data]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^RlxarFileError: .*data\.jsonl: \d+ problems:\n {2}line 2: question: /);
  });

  it("exits 2 on a benchmark it does not know, or without --data", async () => {
    const other = await runRubricHere(["eval", "squad", "--predictions", predictionsPath, "--data", DEV]);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('takes hotpotqa; got "squad"');
    const none = await runRubricHere(["eval", "hotpotqa", "--predictions", predictionsPath]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("eval needs --data <file.jsonl>");
  });
});
