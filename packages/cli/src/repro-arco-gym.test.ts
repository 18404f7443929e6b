import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ArcoGymTableSchema } from "@rubric/repro";
import { beforeAll, describe, expect, it } from "vitest";
import { runRubric, runRubricHere } from "./__fixtures__/run-cli.js";

/** `rubric repro arco-gym` as a user runs it: the built binary. */
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "rubric-repro-arco-gym-"));
});

const TABLE_FILES = ["table.json", "table.md", "success.svg", "curves.svg", "credit.svg"];

const small = [
  "--hops",
  "2",
  "--seeds",
  "2",
  "--train-tasks",
  "8",
  "--eval-tasks",
  "20",
  "--budget",
  "64",
  "--mc-rollouts",
  "2",
  "--probe-rollouts",
  "4",
];

describe("rubric repro arco-gym", () => {
  it("names a setting it cannot honour by its flag, before any work", async () => {
    const budget = await runRubricHere(["repro", "arco-gym", "--out", join(dir, "x"), "--budget", "100"]);
    expect(budget.code).toBe(2);
    expect(budget.stderr).toContain("--budget: expected a multiple of 128 rollouts");
    const hops = await runRubricHere(["repro", "arco-gym", "--out", join(dir, "x"), "--hops", "2,5"]);
    expect(hops.code).toBe(2);
    expect(hops.stderr).toContain("--hops: expected an integer in [1, 4], got 5");
    const word = await runRubricHere(["repro", "arco-gym", "--out", join(dir, "x"), "--hops", "2,four"]);
    expect(word.code).toBe(2);
    expect(word.stderr).toContain('--hops: expected integers, got "four"');
    const twice = await runRubricHere(["repro", "arco-gym", "--out", join(dir, "x"), "--hops", "3,3"]);
    expect(twice.stderr).toContain("--hops: lists a hop count twice: 3,3");
    const tasks = await runRubricHere(["repro", "arco-gym", "--out", join(dir, "x"), "--train-tasks", "6"]);
    expect(tasks.stderr).toContain("--budget: expected a multiple of 24 rollouts");
    const method = await runRubricHere(["repro", "arco-gym", "--out", join(dir, "x"), "--methods", "outcome,ppo"]);
    expect(method.code).toBe(2);
    expect(method.stderr).toContain('--methods: unknown method "ppo"; known: outcome, rar, frozenMu, arco');
    const vectors = await runRubricHere([
      "repro",
      "arco-gym",
      "--out",
      join(dir, "x"),
      "--methods",
      "arco",
      "--word-vectors",
      join(dir, "no-vectors"),
      ...small,
    ]);
    expect(vectors.code).toBe(1);
    expect(vectors.stderr).toContain(join(dir, "no-vectors", "words.txt"));
    expect(vectors.stderr).not.toContain("warm-up"); // refused before any training
    const muTasks = await runRubricHere(["repro", "arco-gym", "--out", join(dir, "x"), "--mu-tasks", "0"]);
    expect(muTasks.code).toBe(2);
    expect(muTasks.stderr).toContain("--mu-tasks");
    const backbone = ["repro", "arco-gym", "--out", join(dir, "x"), "--methods", "frozenMu", "--mu-backbone"];
    const both = await runRubricHere([...backbone, join(dir, "x.gguf"), "--word-vectors", join(dir, "vectors")]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--word-vectors: a --mu-backbone llama has its own token embeddings");
    const missing = await runRubricHere([...backbone, join(dir, "absent.gguf")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`--mu-backbone: ${join(dir, "absent.gguf")}: no such file`);
    const pooling = await runRubricHere(["repro", "arco-gym", "--out", join(dir, "x"), "--mu-pooling", "max"]);
    expect(pooling.code).toBe(2);
    expect(pooling.stderr).toMatch(/--mu-pooling.*prompt\+criteria.*last/u);
    const layout = await runRubricHere([
      "repro",
      "arco-gym",
      "--out",
      join(dir, "x"),
      "--mu-prompt-layout",
      "sideways",
    ]);
    expect(layout.code).toBe(2);
    expect(layout.stderr).toMatch(/--mu-prompt-layout.*arco.*action-last/u);
  });

  it("documents itself, with a usage line that names the command once", async () => {
    const help = await runRubric(["help", "repro", "arco-gym"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: rubric repro arco-gym --out <dir>");
    expect(help.stdout).toContain("a simulation");
    expect(help.stdout).toContain("--mc-rollouts <n>");
    expect(help.stdout).toContain("--probe-rollouts <n>");
    expect(help.stdout).toContain("--mu-prompt-layout <layout>");
    expect(help.stdout).toContain("--word-vectors <dir|none>");
    expect(help.stdout).toContain("--mu-tasks <n>");
  });

  it("writes table.json, table.md and the plots, which `rubric report` renders; refuses to overwrite them without --force; --resume continues a stopped run", async () => {
    const out = join(dir, "run");
    const run = await runRubric(["repro", "arco-gym", "--out", out, ...small]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("run 6 of 6: H = 2, seed 2, trueAdvantage");
    expect(run.stdout).toMatch(
      /value of dense credit \(a simulation; .*\): H=2 outcome [\d.]+ vs true advantage [\d.]+/u,
    );
    const table = ArcoGymTableSchema.parse(JSON.parse(readFileSync(join(out, "table.json"), "utf8")));
    expect(table.config).toMatchObject({
      hops: [2],
      trainTasks: 8,
      evalTasks: 20,
      rl: { budget: 64 },
      creditProbeRollouts: 4,
    });
    expect(table.credit["teacherHindsight"]!.reference).toBeDefined();
    expect(readFileSync(join(out, "table.md"), "utf8")).toContain("## The value of dense credit");
    for (const svg of ["success.svg", "curves.svg", "credit.svg"])
      expect(readFileSync(join(out, svg), "utf8")).toContain("<svg");

    const report = await runRubric(["report", out, "--out", join(dir, "report.html")]);
    expect(report.code, report.stderr).toBe(0);
    const html = readFileSync(join(dir, "report.html"), "utf8");
    expect(html).toContain("ARCO in its gym (a simulation)");
    expect(html).toContain("The value of dense credit");

    const again = await runRubricHere(["repro", "arco-gym", "--out", out, ...small]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(join(out, "table.json"));
    // A run stopped after its first seed: its finished runs are kept, and a fresh start over them
    // is refused; --resume trains only the rest, to the same table.
    for (const name of [...TABLE_FILES, "runs/h2-s2-outcome.json", "runs/h2-s2-trueAdvantage.json"])
      rmSync(join(out, name));
    const fresh = await runRubricHere(["repro", "arco-gym", "--out", out, ...small]);
    expect(fresh.code).toBe(1);
    expect(fresh.stderr).toContain(`${join(out, "runs")}: holds an earlier run's finished runs; pass --resume`);
    const resumed = await runRubricHere(["repro", "arco-gym", "--out", out, ...small, "--resume"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain("run 4 of 6: H = 2, seed 2, outcome");
    expect(resumed.stderr).toContain("run 5 of 6: H = 2, seed 2, teacherHindsight (kept from the earlier run)");
    const after = ArcoGymTableSchema.parse(JSON.parse(readFileSync(join(out, "table.json"), "utf8")));
    expect({ ...after, timing: null }).toEqual({ ...table, timing: null });
  });

  it("runs the learned critics in the sidecar when asked for by name, μ from random embeddings with --word-vectors none", async () => {
    const out = join(dir, "mu");
    const run = await runRubric([
      "repro",
      "arco-gym",
      "--out",
      out,
      ...small.slice(0, 2),
      "--seeds",
      "1",
      "--train-tasks",
      "8",
      "--eval-tasks",
      "6",
      "--budget",
      "32",
      "--methods",
      "outcome,frozenMu",
      "--word-vectors",
      "none",
      "--mu-epochs",
      "1",
      "--mu-tasks",
      "12",
      "--mu-pretrain-tasks",
      "4",
      "--threads",
      "1",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("run 2 of 2: H = 2, seed 1, frozenMu");
    expect(run.stderr).toContain("μ's language-model pretraining for H = 2");
    const table = ArcoGymTableSchema.parse(JSON.parse(readFileSync(join(out, "table.json"), "utf8")));
    expect(table.config).toMatchObject({
      methods: ["outcome", "frozenMu"],
      mu: { wordVectors: null, sftEpochs: 1, sftTasks: 12, pretrainTasks: 4, pretrainEpochs: 1 },
    });
    expect(table.muWarmup).toEqual([
      expect.objectContaining({ hops: 2, embedded: 0, episodes: 12, pretrain: expect.objectContaining({ tasks: 4 }) }),
    ]);
    expect(readFileSync(join(out, "table.md"), "utf8")).toMatch(
      /μ was pretrained as a language model on the text of 4 tasks of its own stream \(ours, not ARCO's\): \d+ tokens/u,
    );
    expect(Object.keys(table.credit)).toEqual(["frozenMu"]);
  }, 300_000);

  it("the report refuses a gym table that does not match its schema, naming the field", async () => {
    const out = join(dir, "forged");
    mkdirSync(out);
    writeFileSync(join(out, "table.json"), JSON.stringify({ kind: "arco-gym", simulation: false }));
    const report = await runRubric(["report", out, "--out", join(dir, "forged.html")]);
    expect(report.code).toBe(1);
    expect(report.stderr).toContain("simulation");
  });
});
