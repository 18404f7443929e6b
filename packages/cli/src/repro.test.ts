import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ArcaneTableSchema } from "@rubric/repro";
import { beforeAll, describe, expect, it } from "vitest";
import { runRubric, runRubricHere } from "./__fixtures__/run-cli.js";

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
  it("trains, evaluates and writes table.json / table.md / scaling.svg / training.svg; --resume continues the same run", {
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
    // training.svg: the seed's logs under runs/ drawn, one line per seed in each of SFT loss per
    // epoch, GSPO mean reward per batch and GSPO KL per batch.
    const training = readFileSync(join(out, "training.svg"), "utf8");
    expect(training.startsWith("<svg")).toBe(true);
    expect(training.match(/class="mark-line/g)?.length).toBe(3);
    for (const text of ["SFT loss (NLL per token)", "GSPO mean reward", "GSPO KL to the SFT policy", "seed 1"])
      expect(training).toContain(text);
    expect(run.stdout).toMatch(/wrote .*scaling\.svg, .*training\.svg/);

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
      runRubricHere(["repro", "arcane", ...flags, "--gdpval", GDPVAL, "--out", join(dir, out)]);
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
    expect((await runRubricHere(["repro", "arcane", "--gdpval", GDPVAL])).stderr).toMatch(/needs --out/);
    expect((await runRubricHere(["repro", "other", "--out", join(dir, "y")])).code).toBe(2);
    const missing = await runRubricHere([
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
