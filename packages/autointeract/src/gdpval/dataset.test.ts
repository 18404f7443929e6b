import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { rubricSetStructure } from "@rubric/core";
import { InputFileNotRegularError, InputFileUnreadableError } from "@rubric/core/files";
import { describe, expect, it } from "vitest";
import { loadGdpval } from "./dataset.js";
import { parseGdpvalTasks } from "./tasks.js";

const GDPVAL = join(
  process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../shared/", import.meta.url)),
  "data/gdpval",
);

describe("loadGdpval", () => {
  it("joins the 220 tasks with the paper's 175 train / 44 eval gold rubrics", async () => {
    const gdpval = await loadGdpval(GDPVAL);
    expect([gdpval.tasks.length, gdpval.train.length, gdpval.eval.length]).toEqual([220, 175, 44]);
    expect(gdpval.split).toEqual({ seed: 42, train: 175, eval: 44 });
    // The data ships one task without a gold rubric.
    expect(gdpval.withoutRubric).toHaveLength(1);
    const example = gdpval.eval[0]!;
    expect(example.rubric.taskId).toBe(example.task.task_id);
    expect(example.task.sector.length).toBeGreaterThan(0);
    const ids = new Set([...gdpval.train, ...gdpval.eval].map((e) => e.task.task_id));
    expect(ids.size).toBe(219);
  });

  it("reports the gold rubrics' structure for both splits", async () => {
    const gdpval = await loadGdpval(GDPVAL);
    const train = rubricSetStructure(gdpval.train.map((e) => e.rubric));
    const evalStats = rubricSetStructure(gdpval.eval.map((e) => e.rubric));
    // Counts checked independently with Python over the same files.
    expect(train.byKind).toEqual({ code: 822, llm_judge: 561 });
    expect(evalStats.byKind).toEqual({ code: 206, llm_judge: 143 });
    expect(train.criteriaPerRubric.mean).toBeCloseTo(1383 / 175, 12);
    expect(evalStats.criteriaPerRubric.mean).toBeCloseTo(349 / 44, 12);
    expect(train.stoppingGates + evalStats.stoppingGates).toBe(223); // 220 zero_category + 3 skip_remaining, all required
    expect(train.tokensPerCriterion.mean).toBeGreaterThan(5);
  });

  it("refuses a rubric for an unknown task and a split that disagrees with its metadata", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gdpval-"));
    cpSync(GDPVAL, dir, { recursive: true });
    writeFileSync(
      join(dir, "tasks.jsonl"),
      readFileSync(join(GDPVAL, "tasks.jsonl"), "utf8").split("\n").slice(1).join("\n"),
    );
    await expect(loadGdpval(dir)).rejects.toThrow(/is not in tasks.jsonl/);
    cpSync(join(GDPVAL, "tasks.jsonl"), join(dir, "tasks.jsonl"));
    writeFileSync(
      join(dir, "rubrics-eval.jsonl"),
      readFileSync(join(GDPVAL, "rubrics-eval.jsonl"), "utf8").split("\n").slice(1).join("\n"),
    );
    await expect(loadGdpval(dir)).rejects.toThrow("rubrics-eval.jsonl holds 43 rubrics; split_metadata.json says 44");
    await expect(loadGdpval(join(dir, "nope"))).rejects.toThrow(InputFileUnreadableError);
    await expect(loadGdpval(join(dir, "nope"))).rejects.toThrow(`${join(dir, "nope", "tasks.jsonl")}: cannot read`);
  });

  it("refuses a data file that is not a regular file before reading it (a FIFO hung, /dev/zero ran to GBs)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gdpval-fifo-"));
    execFileSync("mkfifo", [join(dir, "tasks.jsonl")]);
    await expect(loadGdpval(dir)).rejects.toThrow(InputFileNotRegularError);
    rmSync(join(dir, "tasks.jsonl"));
    symlinkSync("/dev/zero", join(dir, "tasks.jsonl"));
    await expect(loadGdpval(dir)).rejects.toThrow(`${join(dir, "tasks.jsonl")}: is a character device`);
  }, 10_000);
});

describe("parseGdpvalTasks", () => {
  it("names every bad line", () => {
    const good = readFileSync(join(GDPVAL, "tasks.jsonl"), "utf8").split("\n")[0]!;
    const text = [good, "{bad", JSON.stringify({ ...JSON.parse(good), sector: 3 }), good].join("\n");
    expect(() => parseGdpvalTasks(text, "t.jsonl")).toThrow(
      /t.jsonl:line 2: \(root\): invalid JSON: .*\(column \d+\)[\s\S]*t.jsonl:line 3: sector: [\s\S]*t.jsonl:line 4: task_id: duplicate id .* \(first on line 1\)/,
    );
  });
});
