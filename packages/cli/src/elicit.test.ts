import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runRubric, runRubricHere } from "./__fixtures__/run-cli.js";
import { beforeAll, describe, expect, it } from "vitest";

/** `rubric elicit` as a user runs it: the built binary, the real GDPval data, a real local model. */
const SHARED = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../shared/", import.meta.url));
const GDPVAL = join(SHARED, "data/gdpval");
const MODEL = join(SHARED, "models/stories260K.gguf");
const TASK = JSON.parse(readFileSync(join(GDPVAL, "rubrics-eval.jsonl"), "utf8").split("\n")[0]!).task_id as string;

const rubric = (args: string[], stdin?: string) => runRubric(args, stdin);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "rubric-elicit-"));
});

async function validates(json: string): Promise<void> {
  const path = join(dir, `rubric-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(JSON.parse(json).rubric));
  const run = await rubric(["validate", path]);
  expect(run.code, run.stderr).toBe(0);
}

describe("rubric elicit", () => {
  it("sim stakeholder + policy manager: one JSON object on stdout whose rubric validates; the transcript on disk", async () => {
    const out = join(dir, "sim.jsonl");
    const run = await rubric([
      "elicit",
      "--task",
      TASK,
      "--manager",
      "policy:default",
      "--budget",
      "3",
      "--seed",
      "2",
      "--gdpval",
      GDPVAL,
      "--out",
      out,
      "--json",
    ]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(Object.keys(report)).toEqual(["rubric", "questions", "costs"]);
    expect(report.questions).toBe(3);
    await validates(run.stdout);
    const turns = readFileSync(out, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).type);
    expect(turns).toEqual(["task", "question", "answer", "question", "answer", "question", "answer", "rubric", "end"]);
    // Same seed, same dialogue; the task named by a unique prefix of its id.
    const again = await rubric([
      "elicit",
      "--task",
      TASK.slice(0, 8),
      "--manager",
      "policy:default",
      "--budget",
      "3",
      "--seed",
      "2",
      "--gdpval",
      GDPVAL,
      "--out",
      join(dir, "sim2.jsonl"),
      "--json",
    ]);
    expect(again.stdout).toBe(run.stdout);
    // A prefix shared by several ids is refused, naming them.
    const ambiguous = await rubric([
      "elicit",
      "--task",
      TASK.slice(0, 1),
      "--manager",
      "policy:default",
      "--gdpval",
      GDPVAL,
      "--out",
      join(dir, "x.jsonl"),
    ]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toMatch(/is a prefix of \d+ task ids .*give more of it/);
  });

  it("refuses to append a second dialogue to a transcript; --force replaces it; missing directories are made", async () => {
    const out = join(dir, "new", "dir", "once.jsonl");
    const args = [
      "elicit",
      "--task",
      TASK,
      "--manager",
      "policy:default",
      "--budget",
      "1",
      "--gdpval",
      GDPVAL,
      "--out",
      out,
    ];
    const first = await rubric(args);
    expect(first.code, first.stderr).toBe(0);
    const transcript = readFileSync(out, "utf8");
    const second = await rubric(args);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`${out}: already exists (a transcript); pass --force to replace it`);
    expect(readFileSync(out, "utf8")).toBe(transcript);
    const forced = await rubric([...args, "--force"]);
    expect(forced.code, forced.stderr).toBe(0);
    // One dialogue, not two.
    expect(readFileSync(out, "utf8")).toBe(transcript);
    expect(transcript.split("\n").filter((l) => l.includes('"type":"task"'))).toHaveLength(1);
  });

  it("llm manager on the real local model, with the default context (GDPval prompts exceed 2048 tokens)", async () => {
    const run = await rubric([
      "elicit",
      "--task",
      TASK,
      "--manager",
      `llm:llama-cpp:${MODEL}`,
      "--budget",
      "1",
      "--gdpval",
      GDPVAL,
      "--out",
      join(dir, "llm.jsonl"),
      "--json",
    ]);
    expect(run.code, run.stderr).toBe(0);
    await validates(run.stdout);
  });

  it("llm stakeholder holding the gold rubric, on the real local model", async () => {
    const run = await rubric([
      "elicit",
      "--task",
      TASK,
      "--stakeholder",
      `llm:llama-cpp:${MODEL}`,
      "--manager",
      "policy:default",
      "--budget",
      "1",
      "--context-size",
      "8192",
      "--gdpval",
      GDPVAL,
      "--out",
      join(dir, "llm-s.jsonl"),
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Q1: /);
    expect(run.stdout).toMatch(/\nA1: /);
  });

  it("terminal stakeholder answering on stdin", async () => {
    const out = join(dir, "terminal.jsonl");
    const run = await rubric(
      [
        "elicit",
        "--task",
        TASK,
        "--stakeholder",
        "terminal",
        "--manager",
        "policy:default",
        "--budget",
        "2",
        "--gdpval",
        GDPVAL,
        "--out",
        out,
        "--json",
      ],
      "Essential: it opens with the Summary section.\nNice to have: it has no tables.\n",
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("Question 1: ");
    const report = JSON.parse(run.stdout);
    expect(report.rubric.criteria.map((c: { id: string; weight: number }) => [c.id, c.weight])).toEqual([
      ["summary-first", 5],
      ["no-tables", 2],
    ]);
    await validates(run.stdout);
  });

  it("keeps the transcript when the stakeholder fails, and says so", async () => {
    const out = join(dir, "closed.jsonl");
    const run = await rubric(
      [
        "elicit",
        "--task",
        TASK,
        "--stakeholder",
        "terminal",
        "--manager",
        "policy:default",
        "--budget",
        "2",
        "--gdpval",
        GDPVAL,
        "--out",
        out,
      ],
      "only one answer\n",
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /\(stakeholder\): the terminal closed before an answer was given\nThe transcript so far is in /,
    );
    expect(
      readFileSync(out, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).type),
    ).toEqual(["task", "question", "answer", "question", "error", "end"]);
  });

  it("refuses bad arguments", async () => {
    expect((await runRubricHere(["elicit", "--task", TASK, "--out", join(dir, "x.jsonl")])).code).toBe(2);
    expect(
      (
        await runRubricHere([
          "elicit",
          "--task",
          "nope",
          "--manager",
          "policy:default",
          "--gdpval",
          GDPVAL,
          "--out",
          join(dir, "x.jsonl"),
        ])
      ).stderr,
    ).toMatch(/no GDPval task "nope"/);
    writeFileSync(join(dir, "bad-policy.json"), '{"questions": []}');
    const bad = await runRubricHere([
      "elicit",
      "--task",
      TASK,
      "--manager",
      `policy:${join(dir, "bad-policy.json")}`,
      "--gdpval",
      GDPVAL,
      "--out",
      join(dir, "x.jsonl"),
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/bad-policy.json: questions: /);
  });
});
