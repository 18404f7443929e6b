import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ArcaneLlmTableSchema, ArcaneTableSchema } from "@rubric/repro";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatReply, startOpenAIChatServer, type OpenAIChatServer } from "@rubric/providers/testing";
import { runRubric } from "./__fixtures__/run-cli.js";

/** `rubric repro arcane` as a user runs it: the built binary on the real GDPval data. */
const SHARED = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../shared/", import.meta.url));
const GDPVAL = join(SHARED, "data/gdpval");

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "rubric-repro-"));
});

const gspoBatches = (out: string) =>
  readFileSync(join(out, "runs", "seed-1", "gspo", "log.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

/** A stage's `checkpoints/` of seed 1, in name order. */
const checkpointsOf = (out: string, stage: "sft" | "gspo") =>
  readdirSync(join(out, "runs", "seed-1", stage, "checkpoints")).sort();

describe("rubric repro arcane (gym)", () => {
  it("trains, evaluates and writes table.json / table.md / scaling.svg; --resume continues the same run", {
    timeout: 300_000,
  }, async () => {
    const out = join(dir, "quick");
    const run = await runRubric([
      "repro",
      "arcane",
      "--quick",
      "--seeds",
      "1",
      "--batches",
      "3",
      "--gdpval",
      GDPVAL,
      "--out",
      out,
    ]);
    expect(run.code, run.stderr).toBe(0);
    // Progress reaches a piped stderr as plain lines.
    expect(run.stderr).toMatch(/seed 1 GSPO batches: 3\/3 {2}reward \d\.\d{3} clipped \d+%/);
    expect(run.stdout).toMatch(/wrote .*table\.json/);

    const table = ArcaneTableSchema.parse(JSON.parse(readFileSync(join(out, "table.json"), "utf8")));
    for (const m of ["noRubric", "sft", "gspo", "oracle"] as const)
      for (const n of ["n1", "n8"] as const) {
        expect(table.meanReturn[m][n].mean).toBeGreaterThan(0);
        expect(table.meanReturn[m][n].mean).toBeLessThanOrEqual(1);
      }
    expect(table.tasks).toEqual({ train: 175, eval: 44 });
    expect(table.scaling.ns).toEqual([1, 2, 4, 8, 16]);
    // Selecting by the oracle rubric can only help as N grows; at N=1 every method is one output.
    const oracle = table.scaling.curves.oracle.map((c) => c.mean);
    expect(oracle.at(-1)!).toBeGreaterThan(oracle[0]!);
    expect(table.wilcoxon.gspoVsSft.pValue).toBeGreaterThan(0);
    expect(table.perSector.reduce((n, s) => n + s.tasks, 0)).toBe(44);
    expect(table.rubricStats.sft.questionsAsked).toBeGreaterThanOrEqual(0);

    const markdown = readFileSync(join(out, "table.md"), "utf8");
    expect(markdown).toContain("| No Rubric |");
    expect(markdown).toContain("| 0.58 | 0.58 |"); // the paper's column beside ours
    expect(markdown).toContain("0.8722");
    expect(markdown).toMatch(/simulat/i);
    // The controls, the value of information and the summary that calls the run a simulation.
    for (const c of ["gspoNoQuestions", "gspoUninformative", "fixedRubric", "sftOracle", "oracleNoisy"] as const)
      expect(table.meanReturn[c].n8.mean).toBeGreaterThan(0);
    expect(Object.keys(table.wilcoxon.gspoVsControls).sort()).toEqual(
      ["fixedRubric", "gspoNoQuestions", "gspoUninformative", "sftOracle"].sort(),
    );
    const voi = table.valueOfInformation.n8;
    expect(voi.fullPreferences).toBe(table.meanReturn.oracle.n8.mean);
    expect(voi.noDialogue).toBe(table.meanReturn.fixedRubric.n8.mean);
    expect(voi.gap).toBeCloseTo(voi.fullPreferences - voi.noDialogue, 12);
    expect(table.fixedRubrics).toHaveLength(1);
    // The ε table: the run's band first, then the sweep's; the wide band clips far less.
    expect(table.epsSensitivity.map((e) => [e.epsLow, e.epsHigh])).toEqual([
      [3e-4, 4e-4],
      [3e-3, 4e-3],
      [0.2, 0.28],
    ]);
    expect(table.epsSensitivity[0]!.n8).toEqual(table.meanReturn.gspo.n8);
    expect(table.epsSensitivity[2]!.clippedFraction).toBeLessThan(table.epsSensitivity[0]!.clippedFraction);
    expect(markdown).toContain("## Sensitivity to the clipping band");
    expect(markdown).toContain("## Controls: does the dialogue help?");
    expect(markdown).toContain("## Value of information");
    expect(run.stdout).toMatch(/^Rubric gym, a simulation — mean return/m);
    expect(run.stdout).toMatch(/value of information \d\.\d{3}/);
    expect(run.stderr).toMatch(/seed 1 SFT-on-oracle epochs \(control\)/);
    const svg = readFileSync(join(out, "scaling.svg"), "utf8");
    expect(svg.startsWith("<svg")).toBe(true);
    // Drawn by vega-lite: one line per method, the paper's marks beside them, the slope in each legend entry.
    expect(svg.match(/class="mark-line/g)?.length).toBe(4);
    expect(svg).toMatch(/GSPO \([+-]\d\.\d{3}\/×2\)/);
    expect(svg).toContain("hollow marks: the paper");

    const first = gspoBatches(out);
    expect(first.map((e) => e.batch)).toEqual([0, 1, 2]);
    // By default each stage keeps only its latest checkpoint.
    expect(checkpointsOf(out, "sft")).toEqual(["latest.json", "sft-00006"]);
    expect(checkpointsOf(out, "gspo")).toEqual(["gspo-00003", "latest.json"]);
    // Two more batches, resumed from the checkpoint after batch 2: the first three lines are kept as they were.
    const resumed = await runRubric([
      "repro",
      "arcane",
      "--quick",
      "--seeds",
      "1",
      "--batches",
      "5",
      "--resume",
      "--keep-checkpoints",
      "all",
      "--gdpval",
      GDPVAL,
      "--out",
      out,
    ]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).not.toMatch(/\d\/6 seed 1 SFT epochs/);
    const after = gspoBatches(out);
    expect(after.map((e) => e.batch)).toEqual([0, 1, 2, 3, 4]);
    expect(after.slice(0, 3)).toEqual(first);
    // --keep-checkpoints all: the resumed batches' checkpoints join the one it resumed from.
    expect(checkpointsOf(out, "gspo")).toEqual(["gspo-00003", "gspo-00004", "gspo-00005", "latest.json"]);

    // A fresh run into the same directory is refused before it trains, and the tables are kept.
    const tableBefore = readFileSync(join(out, "table.json"), "utf8");
    const again = await runRubric(["repro", "arcane", "--quick", "--seeds", "1", "--gdpval", GDPVAL, "--out", out]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(
      `${join(out, "table.json")}: already exists (a table of an earlier run (table.json)); pass --force`,
    );
    expect(again.stderr).not.toMatch(/SFT epochs/);
    expect(readFileSync(join(out, "table.json"), "utf8")).toBe(tableBefore);
  });

  it("usage errors exit 2 and bad input exits 1, with a clear message", { timeout: 120_000 }, async () => {
    // `rubric repro arcane <flags> --gdpval … --out <dir>/<out>`
    const arcane = (out: string, ...flags: string[]) =>
      runRubric(["repro", "arcane", ...flags, "--gdpval", GDPVAL, "--out", join(dir, out)]);
    const bad = await arcane("x", "--objective", "ppo");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--objective: expected one of gspo, grpo, dr-grpo, got "ppo"/);
    const band = await arcane("e", "--eps-sweep", "0.2:x");
    expect(band.code).toBe(2);
    expect(band.stderr).toContain('--eps-sweep: expected lo:hi pairs of positive numbers (or none), got "0.2:x"');
    const keep = await arcane("k", "--keep-checkpoints", "3");
    expect(keep.code).toBe(2);
    expect(keep.stderr).toMatch(/--keep-checkpoints: expected one of latest, all, got "3"/);
    const manager = await arcane("m", "--manager", "gpt");
    expect(manager.code).toBe(2);
    expect(manager.stderr).toMatch(/--manager: expected one of bank, sidecar, got "gpt"/);
    const both = await arcane("b", "--manager", "sidecar", "--provider", "llama-cpp:x.gguf");
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--manager sidecar trains its manager in the gym; it does not take --provider");
    const seeds = await arcane("s", "--manager", "sidecar", "--seeds", "3");
    expect(seeds.code).toBe(2);
    expect(seeds.stderr).toContain("--manager sidecar trains one seed (seed 1)");
    const model = await arcane("g", "--model", "Qwen/Qwen2.5-0.5B");
    expect(model.code).toBe(2);
    expect(model.stderr).toContain("--model is for --manager sidecar");
    expect((await runRubric(["repro", "arcane", "--gdpval", GDPVAL])).stderr).toMatch(/needs --out/);
    expect((await runRubric(["repro", "other", "--out", join(dir, "y")])).code).toBe(2);
    const missing = await runRubric([
      "repro",
      "arcane",
      "--quick",
      "--gdpval",
      join(dir, "nowhere"),
      "--out",
      join(dir, "z"),
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/nowhere/);
  });

  it("--model where the sidecar's Python has no transformers: a named error, no table", {
    timeout: 120_000,
  }, async () => {
    // Debian's python3 has torch but not transformers: the sidecar says so when the model is asked for.
    const out = join(dir, "no-transformers");
    const run = await runRubric([
      "repro",
      "arcane",
      "--manager",
      "sidecar",
      "--quick",
      "--model",
      join(dir, "some-model"),
      "--gdpval",
      GDPVAL,
      "--out",
      out,
    ]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("transformers is not installed in this interpreter");
    expect(run.stderr).toContain("the transformers model");
    expect(existsSync(join(out, "table.json"))).toBe(false);
  });
});

/**
 * A minimal valid instance of a JSON schema (objects, arrays, enums, strings, numbers), with
 * enum choices drawn by a counter so that judges' scores vary: enough for every structured
 * reply the roles ask for (questions, rubrics, per-criterion verdicts).
 */
function instance(schema: Record<string, unknown>, counter: { n: number }): unknown {
  if (Array.isArray(schema["enum"])) {
    const values = schema["enum"] as unknown[];
    return values[counter.n++ % values.length];
  }
  switch (schema["type"]) {
    case "object": {
      const properties = (schema["properties"] ?? {}) as Record<string, Record<string, unknown>>;
      return Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, instance(s, counter)]));
    }
    case "array":
      return Array.from({ length: Math.max(1, Number(schema["minItems"] ?? 1)) + (counter.n++ % 2) }, () =>
        instance(schema["items"] as Record<string, unknown>, counter),
      );
    case "number":
    case "integer":
      return Number(schema["minimum"] ?? 1);
    default:
      return `The report covers the schedule, the budget and the main risks of item ${counter.n++}.`;
  }
}

describe("rubric repro arcane --provider (OpenAI-compatible server)", () => {
  let server: OpenAIChatServer;
  beforeAll(async () => {
    const counter = { n: 0 };
    server = await startOpenAIChatServer({
      handler: (request) => {
        const schema = request.body?.response_format?.json_schema?.schema as Record<string, unknown> | undefined;
        if (schema) return chatReply.json(instance(schema, counter));
        return chatReply.completion(
          `# Report ${counter.n++}\n\n| Item | Cost |\n|---|---|\n| Staff | $1,200 |\n\nWe recommend proceeding; see [1].`,
        );
      },
    });
  });
  afterAll(() => server.close());

  it("trains the managers in the gym, then runs the LLM-roles pipeline on a real GDPval task: dialogue, guided best-of-N, gold-rubric U*", {
    timeout: 300_000,
  }, async () => {
    const out = join(dir, "llm");
    const run = await runRubric([
      "repro",
      "arcane",
      "--provider",
      `openai-compatible:${server.url}#judge-model`,
      "--quick",
      "--batches",
      "2",
      "--task-ids",
      "b57efde3",
      "--max-n",
      "4",
      "--gdpval",
      GDPVAL,
      "--out",
      out,
    ]);
    const table = ArcaneLlmTableSchema.parse(JSON.parse(readFileSync(join(out, "table.json"), "utf8")));
    const errors = table.tasks.flatMap((t) => t.errors);
    // Scores that could not be computed are listed and make the exit code 2; nothing else does.
    expect(run.code, run.stderr).toBe(errors.length > 0 ? 2 : 0);
    expect(run.stderr).toMatch(/seed 1 GSPO batches/);
    expect(table.training).toMatchObject({ seed: 1, gspoBatches: 2, objective: "gspo" });
    expect(table.ns).toEqual([1, 2, 4]);
    expect(table.tasks.map((t) => t.taskId.slice(0, 8))).toEqual(["b57efde3"]);
    const [task] = table.tasks;
    expect(task!.questions.manager).toBe(2);
    expect(task!.rubrics.manager).not.toBeNull();
    // The gym-trained managers wrote rubrics over the criteria bank for this real task.
    for (const method of ["sft", "gspo"] as const)
      expect((task!.rubrics[method] as { criteria: unknown[] } | null)?.criteria.length).toBeGreaterThan(0);
    for (const method of ["noRubric", "manager", "sft", "gspo", "oracle"] as const)
      expect(task!.returns[method]).toHaveLength(3);
    // The trained managers' rubrics are rules: their NDCG needs no judge and is always computed here.
    expect(task!.ndcg8.sft).not.toBeNull();
    // Every role was played by the server: manager, stakeholder (also answering the trained managers' repertoire), worker, judge.
    const systems = server.requests.map((r) => r.body?.messages?.[0]?.content ?? "");
    expect(systems.some((s) => s.startsWith("You are a manager."))).toBe(true);
    expect(systems.filter((s) => s.startsWith("You commissioned a piece of work")).length).toBeGreaterThanOrEqual(
      2 + 6,
    );
    expect(systems.some((s) => s.startsWith("You are a careful professional."))).toBe(true);
    expect(systems.some((s) => s.startsWith("You are a strict, fair evaluator."))).toBe(true);
    expect(readFileSync(join(out, "table.md"), "utf8")).toContain("| GSPO (gym-trained) |");
    // A task id that matches nothing is bad input, named.
    const unknown = await runRubric([
      "repro",
      "arcane",
      "--provider",
      `openai-compatible:${server.url}#judge-model`,
      "--quick",
      "--batches",
      "1",
      "--task-ids",
      "zzzz",
      "--gdpval",
      GDPVAL,
      "--out",
      join(dir, "llm-unknown"),
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/--task-ids: no GDPval eval task "zzzz"/);
    // Caught before any training, and as one line, not a stack trace.
    expect(unknown.stderr).not.toMatch(/GSPO batches|Training the managers|\n\s+at /);
    const policy = await runRubric([
      "repro",
      "arcane",
      "--provider",
      `openai-compatible:${server.url}#judge-model`,
      "--errors-as",
      "zero",
      "--gdpval",
      GDPVAL,
      "--out",
      join(dir, "llm-zero"),
    ]);
    expect(policy.code).toBe(2);
    expect(policy.stderr).toMatch(
      /--errors-as: expected one of fail, renormalize, got "zero" \(an error is never counted as 0\)/,
    );
  });

  it("a judge that always fails yields exit 2 and listed errors, never zeros", { timeout: 300_000 }, async () => {
    const counter = { n: 0 };
    server.setHandler((request) => {
      const schema = request.body?.response_format?.json_schema?.schema as Record<string, unknown> | undefined;
      const judging = request.body?.messages?.[0]?.content?.startsWith("You are a strict, fair evaluator.") ?? false;
      if (judging) return chatReply.error(400, "judge refused");
      if (schema) return chatReply.json(instance(schema, counter));
      return chatReply.completion("A plain report.");
    });
    const out = join(dir, "llm-failing");
    const run = await runRubric([
      "repro",
      "arcane",
      "--provider",
      `openai-compatible:${server.url}#judge-model`,
      "--quick",
      "--batches",
      "1",
      "--tasks",
      "1",
      "--max-n",
      "2",
      "--gdpval",
      GDPVAL,
      "--out",
      out,
    ]);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/could not be computed.*never counted as 0/);
    const table = ArcaneLlmTableSchema.parse(JSON.parse(readFileSync(join(out, "table.json"), "utf8")));
    expect(table.tasks[0]!.errors.length).toBeGreaterThan(0);
    // Every gold score needs the judge: no method has a return, and none is a 0.
    for (const method of ["noRubric", "manager", "sft", "gspo", "oracle"] as const)
      expect(table.tasks[0]!.returns[method].every((r) => r === null)).toBe(true);
    expect(table.pairedTasks).toEqual({ n1: 0, n8: 0 });
    // Renormalising cannot score a gate made only of judge criteria either: still no U*, still listed.
    const renormalized = await runRubric([
      "repro",
      "arcane",
      "--provider",
      `openai-compatible:${server.url}#judge-model`,
      "--quick",
      "--batches",
      "1",
      "--tasks",
      "1",
      "--max-n",
      "2",
      "--errors-as",
      "renormalize",
      "--gdpval",
      GDPVAL,
      "--out",
      join(dir, "llm-renormalize"),
    ]);
    expect(renormalized.code, renormalized.stderr).toBe(2);
    const again = ArcaneLlmTableSchema.parse(
      JSON.parse(readFileSync(join(dir, "llm-renormalize", "table.json"), "utf8")),
    );
    expect(again.errorsAs).toBe("renormalize");
    expect(again.tasks[0]!.returns.oracle).toEqual([null, null]);
    expect(again.tasks[0]!.errors.join("\n")).toMatch(/nothing to renormalise/);
  });
});
