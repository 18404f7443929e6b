import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { runRubric } from "./__fixtures__/run-cli.js";

/** `rubric eval hotpotqa` as a user runs it: the built binary, on the real dev file. */
const SHARED = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../shared/", import.meta.url));
const DEV = join(SHARED, "data/hotpotqa/dev.jsonl");

/**
 * The answer half of the official `hotpot_evaluate_v1.py` (`eval`, `update_answer`, `f1_score`,
 * `exact_match_score`, `normalize_answer`), reading the gold questions as JSON lines.
 */
const OFFICIAL_EVAL = String.raw`
import json, re, string, sys
from collections import Counter
def normalize_answer(s):
    def remove_articles(text): return re.sub(r'\b(a|an|the)\b', ' ', text)
    def white_space_fix(text): return ' '.join(text.split())
    def remove_punc(text):
        exclude = set(string.punctuation)
        return ''.join(ch for ch in text if ch not in exclude)
    return white_space_fix(remove_articles(remove_punc(s.lower())))
def f1_score(prediction, ground_truth):
    normalized_prediction = normalize_answer(prediction)
    normalized_ground_truth = normalize_answer(ground_truth)
    ZERO_METRIC = (0, 0, 0)
    if normalized_prediction in ['yes', 'no', 'noanswer'] and normalized_prediction != normalized_ground_truth:
        return ZERO_METRIC
    if normalized_ground_truth in ['yes', 'no', 'noanswer'] and normalized_prediction != normalized_ground_truth:
        return ZERO_METRIC
    prediction_tokens = normalized_prediction.split()
    ground_truth_tokens = normalized_ground_truth.split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return ZERO_METRIC
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    f1 = (2 * precision * recall) / (precision + recall)
    return f1, precision, recall
def exact_match_score(prediction, ground_truth):
    return (normalize_answer(prediction) == normalize_answer(ground_truth))
def update_answer(metrics, prediction, gold):
    em = exact_match_score(prediction, gold)
    f1, prec, recall = f1_score(prediction, gold)
    metrics['em'] += float(em)
    metrics['f1'] += f1
    return em, f1
prediction = json.load(open(sys.argv[1]))
gold = [json.loads(line) for line in open(sys.argv[2]) if line.strip()]
metrics = {'em': 0, 'f1': 0}
per = {}
for dp in gold:
    cur_id = dp['_id']
    if cur_id not in prediction['answer']:
        per[cur_id] = [0, 0]
    else:
        em, f1 = update_answer(metrics, prediction['answer'][cur_id], dp['answer'])
        per[cur_id] = [float(em), f1]
N = len(gold)
for k in metrics.keys():
    metrics[k] /= N
json.dump({'metrics': metrics, 'per': per}, sys.stdout)
`;

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
    const python = spawnSync("/usr/bin/python3", ["-c", OFFICIAL_EVAL, predictionsPath, DEV], { encoding: "utf8" });
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
    const run = await runRubric(["eval", "hotpotqa", "--predictions", bad, "--data", DEV]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`^RlxarFileError: ${bad}: answer\\.a: .*string`));
    const missing = await runRubric(["eval", "hotpotqa", "--predictions", join(dir, "none.json"), "--data", DEV]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("none.json: cannot read (no such file)");
  });

  it("exits 1 listing the bad lines of a data file", async () => {
    const data = join(dir, "data.jsonl");
    const line = readFileSync(DEV, "utf8").split("\n")[0]!;
    writeFileSync(data, `${line}\n{"_id": "x"}\n`);
    const run = await runRubric(["eval", "hotpotqa", "--predictions", predictionsPath, "--data", data]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^RlxarFileError: .*data\.jsonl: \d+ problems:\n {2}line 2: question: /);
  });

  it("exits 2 on a benchmark it does not know, or without --data", async () => {
    const other = await runRubric(["eval", "squad", "--predictions", predictionsPath, "--data", DEV]);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('takes hotpotqa; got "squad"');
    const none = await runRubric(["eval", "hotpotqa", "--predictions", predictionsPath]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("eval needs --data <file.jsonl>");
  });
});
