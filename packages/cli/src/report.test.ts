import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { scoreRubric, type FlatRubric, type Verdict } from "@rubric/core";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { arcoMarkdown } from "@rubric/repro";
import { gymSamples, presenceRubric } from "../../hackbench/src/__fixtures__/gym.js";
import { arcoTable } from "../../repro/src/arco/__fixtures__/table.js";
import { gatedReport } from "../../verifiers/src/engine/__fixtures__/gated-report.js";
import { runRubric } from "./__fixtures__/run-cli.js";

const SHARED = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../shared/", import.meta.url));
const GDPVAL = join(SHARED, "data/gdpval");

// Debian's chromium, installed by scripts/install-system-packages.sh (never a downloaded browser).
const CHROMIUM = "/usr/bin/chromium";
// Screenshots of each view, for a person to look at: <repo>/runs/screenshots/report/.
const SHOTS = fileURLToPath(new URL("../../../runs/screenshots/report/", import.meta.url));

const rubric: FlatRubric = {
  id: "q3-memo",
  criteria: [
    {
      id: "terms",
      text: "Mentions revenue and margin",
      weight: 2,
      polarity: "reward",
      verifier: { kind: "includes", terms: ["revenue", "margin"] },
    },
    { id: "short", text: "At most 12 words", weight: 1, polarity: "reward", verifier: { kind: "length", max: 12 } },
    {
      id: "quarter",
      text: "Names a quarter",
      weight: 1,
      polarity: "reward",
      verifier: { kind: "regex", pattern: "\\bQ[1-4]\\b" },
    },
    // A backtracking pattern on the js engine: on "aaa…!" it runs past its limit, an error verdict.
    {
      id: "shape",
      text: "Is a run of a's",
      weight: 1,
      polarity: "reward",
      verifier: { kind: "regex", pattern: "^(a+)+$", engine: "js" },
    },
    {
      id: "hype",
      text: "Says 'guaranteed'",
      weight: 1,
      polarity: "penalty",
      verifier: { kind: "includes", terms: ["guaranteed"] },
    },
  ],
} as FlatRubric;

const outputs = [
  { id: "tight", output: "Revenue and margin rose in Q3." },
  { id: "long", output: "Revenue is guaranteed to grow, and margin too, in every quarter of the coming year." },
  { id: "bare", output: "Margin held; see Q4 for revenue." },
  { id: "hostile", output: 'Nothing to report <img src=x onerror="document.title=1"> </script>' },
  { id: "stalls", output: `${"a".repeat(28)}! revenue` },
];

let dir: string;
let browser: Browser;
let results: { results: { id: string; total: number | null; verdicts: Verdict[] }[] };

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: run scripts/install-system-packages.sh (Debian's chromium)`);
  dir = mkdtempSync(join(tmpdir(), "rubric-report-"));
  mkdirSync(SHOTS, { recursive: true });
  writeFileSync(join(dir, "rubric.json"), JSON.stringify(rubric));
  writeFileSync(join(dir, "outputs.jsonl"), outputs.map((o) => JSON.stringify(o)).join("\n"));
  const scored = await runRubric([
    "score",
    "--rubric",
    join(dir, "rubric.json"),
    "--outputs",
    join(dir, "outputs.jsonl"),
    "--errors-as",
    "renormalize",
    "--json",
  ]);
  expect(scored.code).toBe(2); // one error verdict: reported, never a 0
  writeFileSync(join(dir, "results.json"), scored.stdout);
  results = JSON.parse(scored.stdout);
  const written = await runRubric([
    "report",
    join(dir, "results.json"),
    "--out",
    join(dir, "report.html"),
    "--title",
    "Q3 memos",
  ]);
  expect(written.stderr).toBe("");
  expect(written.code).toBe(0);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

/** The page's ranking as it shows it: ids in order, and each total's text. */
async function ranking(page: Page) {
  return page.$$eval("tr.output", (rows) =>
    rows.map((r) => ({
      id: r.getAttribute("data-output-id")!,
      total: r.querySelector('[data-testid="total"]')!.textContent!,
    })),
  );
}

/** What the page should show under `weights`: core's scores, ranked as the page ranks (normalized, total, id). */
function expected(weights: Record<string, number>) {
  const scored = results.results.map((r) => ({
    id: r.id,
    score: scoreRubric(rubric, r.verdicts, { errorsAs: "renormalize", weights }),
  }));
  scored.sort(
    (a, b) => b.score.normalized - a.score.normalized || b.score.total - a.score.total || a.id.localeCompare(b.id),
  );
  return scored.map((s) => ({ id: s.id, total: s.score.total.toFixed(4) }));
}

async function open(file = "report.html"): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
  const problems: string[] = [];
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  // Self-contained: any request but the file itself is a fault.
  page.on("request", (r) => r.url().startsWith("file:") || problems.push(`request: ${r.url()}`));
  await page.goto(`file://${join(dir, file)}`);
  await page.waitForFunction(
    () => (globalThis as unknown as { __rubricReport?: { ready: boolean } }).__rubricReport?.ready,
  );
  return { page, problems };
}

async function setWeight(page: Page, id: string, value: number) {
  const renders = await page.evaluate(
    () => (globalThis as unknown as { __rubricReport: { renders: number } }).__rubricReport.renders,
  );
  await page.locator(`.weights tr[data-criterion="${id}"] input[type=number]`).fill(String(value));
  await page.waitForFunction(
    (before) => (globalThis as unknown as { __rubricReport: { renders: number } }).__rubricReport.renders > before,
    renders,
  );
}

describe("rubric report in Chromium", () => {
  it("shows every output's total as core computes it, and reranks at once when a weight moves", async () => {
    const { page, problems } = await open();
    const defaults = Object.fromEntries(rubric.criteria.map((c) => [c.id, c.weight]));
    expect(await ranking(page)).toEqual(expected(defaults));
    await page.screenshot({ path: join(SHOTS, "ranking.png"), fullPage: true });

    await setWeight(page, "short", 0);
    await setWeight(page, "quarter", 0);
    await setWeight(page, "hype", 0);
    const moved = { ...defaults, short: 0, quarter: 0, hype: 0 };
    expect(await ranking(page)).toEqual(expected(moved));
    // The weights changed the order, not only the numbers: the test would pass on a page that ignored them otherwise.
    expect((await ranking(page)).map((r) => r.id)).not.toEqual(expected(defaults).map((r) => r.id));
    await page.screenshot({ path: join(SHOTS, "reweighted.png"), fullPage: true });

    await page.getByTestId("reset-weights").click();
    await expect.poll(() => page.locator(".weights tr.changed").count()).toBe(0);
    await page.waitForTimeout(50);
    expect(await ranking(page)).toEqual(expected(defaults));
    expect(problems).toEqual([]);
    await page.close();
  });

  it("marks an error verdict as an error, never a 0, and shows text from outputs as text", async () => {
    const { page, problems } = await open();
    await page.locator('tr.output[data-output-id="stalls"]').click();
    const shape = page.locator('tr[data-details-for="stalls"] tr[data-criterion="shape"]');
    await expect.poll(() => shape.locator("td").nth(1).textContent()).toBe("error");
    expect(await shape.locator("td").nth(2).textContent()).toBe("—");
    expect(await shape.locator("td").nth(5).textContent()).toMatch(/time limit|ms/);
    await page.screenshot({ path: join(SHOTS, "verdicts.png"), fullPage: true });
    // The hostile output's markup stayed text: no element was made from it, its handler never ran.
    await page.locator('tr.output[data-output-id="hostile"]').click();
    expect(await page.locator("img").count()).toBe(0);
    expect(await page.title()).toBe("Q3 memos");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("shows each output's text beside its verdicts, finds outputs by text, colours pass and fail, and compares two", async () => {
    // score --outputs --json carries what was scored.
    expect(results.results.find((r) => r.id === "bare")).toMatchObject({ output: "Margin held; see Q4 for revenue." });
    const { page, problems } = await open();
    await page.locator('tr.output[data-output-id="bare"] td.preview').click();
    const details = page.locator('tr[data-details-for="bare"]');
    expect(await details.getByTestId("output-text").textContent()).toBe("Margin held; see Q4 for revenue.");
    // "quarter" passed (Q4) and is green; "hype" (a penalty) did not fire, so it passes too; "short" passed.
    const verdict = (id: string) => details.locator(`tr[data-criterion="${id}"] td`).nth(2);
    expect(await verdict("quarter").getAttribute("class")).toContain("pass");
    expect(await verdict("hype").getAttribute("class")).toContain("pass");
    // "long" says "guaranteed": the penalty fired, a fail.
    await page.locator('tr.output[data-output-id="long"] td.preview').click();
    const hype = page.locator('tr[data-details-for="long"] tr[data-criterion="hype"] td').nth(2);
    expect(await hype.getAttribute("class")).toContain("fail");

    // Search reaches the text, not only ids: "guaranteed" is in one output.
    await page.getByTestId("search").fill("GUARANTEED");
    await expect.poll(async () => (await ranking(page)).map((r) => r.id)).toEqual(["long"]);
    expect(await page.getByTestId("ranking-note").textContent()).toContain("1 of 5 match the filter");
    await page.getByTestId("search").fill("");
    await page.getByTestId("show").selectOption("unscored");
    await expect.poll(async () => (await ranking(page)).length).toBe(0);
    await page.getByTestId("show").selectOption("all");
    await expect.poll(async () => (await ranking(page)).length).toBe(5);

    // Tick two: their texts side by side, and the criteria on which they differ marked.
    await page.locator('tr.output[data-output-id="tight"] [data-testid="compare-tick"]').click();
    await page.locator('tr.output[data-output-id="long"] [data-testid="compare-tick"]').click();
    const compare = page.getByTestId("compare");
    await expect.poll(() => compare.locator("h3").textContent()).toBe("Compare tight and long");
    expect(await compare.getByTestId("output-text").allTextContents()).toEqual([
      "Revenue and margin rose in Q3.",
      outputs[1]!.output,
    ]);
    const differs = await compare
      .locator("tr.differs")
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-criterion")));
    // tight: short, names Q3, no hype; long: too long, no quarter, says guaranteed.
    expect(differs).toEqual(["short", "quarter", "hype"]);
    await page.screenshot({ path: join(SHOTS, "compare.png"), fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  });

  it("compares two results files on the same rubric output by output, the largest change first", async () => {
    // A second run: "bare" rewritten to pass "short" and "quarter" no longer; "hostile" left out.
    const second = outputs
      .filter((o) => o.id !== "hostile")
      .map((o) =>
        o.id === "bare"
          ? { ...o, output: "Margin held this year and revenue followed it, says the finance team today." }
          : o,
      );
    writeFileSync(join(dir, "outputs-2.jsonl"), second.map((o) => JSON.stringify(o)).join("\n"));
    const rescored = await runRubric([
      "score",
      "--rubric",
      join(dir, "rubric.json"),
      "--outputs",
      join(dir, "outputs-2.jsonl"),
      "--errors-as",
      "renormalize",
      "--json",
    ]);
    writeFileSync(join(dir, "results-2.json"), rescored.stdout);
    const written = await runRubric([
      "report",
      join(dir, "results.json"),
      join(dir, "results-2.json"),
      "--out",
      join(dir, "compare.html"),
    ]);
    expect(written.code, written.stderr).toBe(0);
    const { page, problems } = await open("compare.html");
    const table = page.getByTestId("file-comparison-table");
    const rows = await table
      .locator("tr.output")
      .evaluateAll((trs) =>
        trs.map((tr) => [tr.getAttribute("data-output-id"), tr.querySelector('[data-testid="delta"]')!.textContent]),
      );
    // Only "bare" changed: it lost "short" (now 13 words) and "quarter"; it comes first.
    expect(rows[0]).toEqual(["bare", expect.stringMatching(/^-0\.\d{4}$/)]);
    expect(rows.map(([id]) => id).sort()).toEqual(["bare", "long", "stalls", "tight"]);
    expect(rows.slice(1).every(([, d]) => d === "0.0000")).toBe(true);
    const summary = await page.getByTestId("file-comparison-summary").textContent();
    expect(summary).toContain(
      "4 outputs in both, on the same rubric; the second scores higher on 0, lower on 1, the same on 3",
    );
    expect(summary).toContain("1 only in the first, 0 only in the second");
    await table.locator('tr.output[data-output-id="bare"]').click();
    const both = table.locator('tr[data-details-for="bare"]');
    expect(await both.getByTestId("output-text").allTextContents()).toEqual([
      "Margin held; see Q4 for revenue.",
      second.find((o) => o.id === "bare")!.output,
    ]);
    expect(
      await both.locator("tr.differs").evaluateAll((trs) => trs.map((t) => t.getAttribute("data-criterion"))),
    ).toEqual(["short", "quarter"]);
    await page.screenshot({ path: join(SHOTS, "compare-files.png"), fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  });

  it("exports weights that `rubric score --weights` reads, giving the page's totals", async () => {
    const { page, problems } = await open();
    await setWeight(page, "short", 3.5);
    await setWeight(page, "quarter", 0.5);
    const shown = await ranking(page);
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("export-weights").click()]);
    const weightsFile = join(dir, "weights.json");
    await download.saveAs(weightsFile);
    expect(JSON.parse(readFileSync(weightsFile, "utf8")).weights).toMatchObject({ short: 3.5, quarter: 0.5 });
    for (const result of results.results) {
      const verdictsFile = join(dir, `verdicts-${result.id}.json`);
      writeFileSync(verdictsFile, JSON.stringify({ verdicts: result.verdicts }));
      const cli = await runRubric([
        "score",
        "--rubric",
        join(dir, "rubric.json"),
        "--verdicts",
        verdictsFile,
        "--weights",
        weightsFile,
        "--errors-as",
        "renormalize",
        "--json",
      ]);
      expect(cli.code).toBe(0);
      expect(JSON.parse(cli.stdout).total.toFixed(4)).toBe(shown.find((r) => r.id === result.id)!.total);
    }
    expect(problems).toEqual([]);
    await page.close();
  });
});

describe("rubric report in Chromium: what a user types", () => {
  it("refuses a negative weight where it was typed and keeps the weight in use; says why all-zero weights leave outputs unscored", async () => {
    const { page, problems } = await open();
    const defaults = Object.fromEntries(rubric.criteria.map((c) => [c.id, c.weight]));
    const box = page.locator('.weights tr[data-criterion="short"] input[type=number]');
    await box.fill("-3");
    await expect
      .poll(() => box.evaluate((input) => (input as unknown as { validity: { valid: boolean } }).validity.valid))
      .toBe(false);
    expect(await box.getAttribute("title")).toBe(`a weight is ≥ 0; short stays at ${defaults.short}`);
    expect(await box.evaluate((input) => input.classList.contains("invalid"))).toBe(true);
    await page.waitForTimeout(50);
    expect(await ranking(page)).toEqual(expected(defaults));
    await setWeight(page, "short", 2);
    expect(await box.evaluate((input) => (input as unknown as { validity: { valid: boolean } }).validity.valid)).toBe(
      true,
    );

    // Every weight 0: nothing can be scored, and the caption says so rather than blaming verdicts.
    for (const c of rubric.criteria) await setWeight(page, c.id, 0);
    const note = await page.getByTestId("ranking-note").first().textContent();
    expect(note).toMatch(/unscored \(.*\d+: .*weight/u);
    expect(note).not.toMatch(/^[^(]*\(\d+ with an error verdict[^;]*\) last/u);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("fits the weights in a 420 px window: every control inside it", async () => {
    const { page, problems } = await open();
    await page.setViewportSize({ width: 420, height: 900 });
    await page.waitForTimeout(50);
    let overflow = 0;
    for (const input of await page.locator(".weights input[type=number]").all()) {
      const box = await input.boundingBox();
      if (box === null || box.x + box.width > 420) overflow++;
    }
    expect(overflow).toBe(0);
    await page.screenshot({ path: join(SHOTS, "narrow.png"), fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  });
});

describe("rubric report: a staged rubric", () => {
  it("shows each output's stages and, where a gate stopped it, which stage and why", async () => {
    // A code gate (3 of its 4 points to pass, else the category scores 0), then a judged stage.
    const stagedRubric = gatedReport();
    const verdictsOf: Record<string, Verdict[]> = {
      passes: [
        { criterionId: "s0.r0", score: 1, status: "ok", rationale: "the expected shape" },
        { criterionId: "s1.r0", score: 0.5, status: "ok", rationale: "thin analysis" },
      ],
      // Below the gate's pass mark: scoring stops there, the judged stage is never verified.
      stopped: [{ criterionId: "s0.r0", score: 0.5, status: "ok", rationale: "half the shape" }],
    };
    const file = {
      errorsAs: "fail",
      errors: 0,
      ignoreGates: false,
      rubric: stagedRubric,
      results: Object.entries(verdictsOf).map(([id, verdicts]) => {
        const score = scoreRubric(stagedRubric, verdicts);
        return { id, total: score.total, normalized: score.normalized, errors: 0, verdicts };
      }),
    };
    writeFileSync(join(dir, "staged.json"), JSON.stringify(file));
    const written = await runRubric(["report", join(dir, "staged.json"), "--out", join(dir, "staged.html")]);
    expect(written.code).toBe(0);
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(e.message));
    await page.goto(`file://${join(dir, "staged.html")}`);
    expect(await ranking(page)).toEqual([
      { id: "passes", total: "7.0000" },
      { id: "stopped", total: "0.0000" },
    ]);
    await page.locator('tr.output[data-output-id="stopped"]').click();
    await expect
      .poll(() => page.locator('tr[data-details-for="stopped"] [data-testid="gate"]').textContent())
      .toContain("Stopped at stage “gate”: it scored below its pass mark");
    expect(
      await page.locator('tr[data-details-for="stopped"] tr[data-criterion="s1.r0"] td').nth(1).textContent(),
    ).toBe("not verified");
    await page.locator('tr.output[data-output-id="passes"]').click();
    await expect.poll(() => page.locator('tr[data-details-for="passes"] [data-testid="gate"]').count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, "staged.png"), fullPage: true });
    // Lowering the gate rule's points below the pass mark stops "passes" too.
    await setWeight(page, "s0.r0", 2);
    expect(await ranking(page)).toEqual([
      { id: "passes", total: "0.0000" },
      { id: "stopped", total: "0.0000" },
    ]);
    expect(problems).toEqual([]);
    await page.close();
  });
});

describe("rubric report: a reproduction run and an integrity card", () => {
  it("lays out a repro run's tables (paper column beside ours) with its plot, and a hackbench card", async () => {
    // A one-seed, one-batch gym run: the same files `pnpm main` writes, in a few seconds.
    const run = join(dir, "arcane");
    const repro = await runRubric([
      "repro",
      "arcane",
      "--quick",
      "--seeds",
      "1",
      "--batches",
      "1",
      "--eps-sweep",
      "none",
      "--gdpval",
      GDPVAL,
      "--out",
      run,
    ]);
    expect(repro.code, repro.stderr).toBe(0);
    const { samples } = await gymSamples(12);
    writeFileSync(join(dir, "samples.jsonl"), `${samples.map((x) => JSON.stringify(x)).join("\n")}\n`);
    writeFileSync(join(dir, "presence.json"), JSON.stringify(presenceRubric));
    const card = await runRubric([
      "hackbench",
      "--rubric",
      join(dir, "presence.json"),
      "--samples",
      join(dir, "samples.jsonl"),
      "--probes",
      "keyword-stuffing,pleasantry",
      "--out",
      join(dir, "card.json"),
    ]);
    expect([0, 3, 4]).toContain(card.code);
    // An ARCO run directory as `repro arco` writes it (a real run takes minutes): its table and table.md.
    const arco = join(dir, "arco");
    mkdirSync(arco, { recursive: true });
    writeFileSync(join(arco, "table.json"), JSON.stringify(arcoTable));
    writeFileSync(join(arco, "table.md"), arcoMarkdown(arcoTable));
    const inputs = [run, join(dir, "card.json"), join(dir, "results.json"), arco];
    const written = await runRubric(["report", ...inputs, "--out", join(dir, "all.html")]);
    expect(written.stderr).toBe("");
    expect(written.stdout).toContain("4 section(s) (document, document, scores, document)");

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(e.message));
    page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
    await page.goto(`file://${join(dir, "all.html")}`);
    const arcane = page.locator('section[data-kind="document"]').nth(0);
    expect(await arcane.locator("h2").textContent()).toBe("ARCANE in the rubric gym");
    // The mean-return table keeps the paper's column; the scaling plot and the training curves
    // (drawn from the run's logs under runs/) are images that loaded.
    const header = await arcane.locator("table").first().locator("th").allTextContents();
    expect(header.some((h) => /paper/i.test(h))).toBe(true);
    expect(await arcane.locator("figcaption").allTextContents()).toEqual(["Best-of-N scaling", "Training curves"]);
    for (const img of await arcane.locator("img").all())
      expect(await img.evaluate((i: { naturalWidth: number }) => i.naturalWidth)).toBeGreaterThan(100);
    const integrity = page.locator('section[data-kind="document"]').nth(1);
    expect(await integrity.locator("h2").textContent()).toBe("Reward-hacking integrity card");
    expect(await integrity.textContent()).toContain("keyword-stuffing");
    // ARCO: its tables, and both plots drawn from its table (learning curves, μ's per-bucket scores).
    const arcoSection = page.locator('section[data-kind="document"]').nth(2);
    expect(await arcoSection.locator("h2").textContent()).toBe("ARCO on HotpotQA");
    expect(await arcoSection.locator("figcaption").allTextContents()).toEqual([
      "Learning curves",
      "μ's step scores per position bucket",
    ]);
    for (const img of await arcoSection.locator("img").all())
      expect(await img.evaluate((i: { naturalWidth: number }) => i.naturalWidth)).toBeGreaterThan(100);
    expect(await page.locator("section").count()).toBe(4);
    await page.screenshot({ path: join(SHOTS, "reproduction-and-card.png"), fullPage: true });
    expect(problems).toEqual([]);
    await page.close();

    // A run directory without training logs (its table alone) still renders, without the training
    // figure; a log line its schema refuses is named by file and line.
    const bare = join(dir, "arcane-table-only");
    mkdirSync(bare, { recursive: true });
    writeFileSync(join(bare, "table.json"), readFileSync(join(run, "table.json")));
    const withoutLogs = await runRubric(["report", bare, "--out", join(dir, "table-only.html")]);
    expect(withoutLogs.code, withoutLogs.stderr).toBe(0);
    const bareHtml = readFileSync(join(dir, "table-only.html"), "utf8");
    expect(bareHtml).toContain("Best-of-N scaling");
    expect(bareHtml).not.toContain("Training curves");
    const damagedLog = join(bare, "runs", "seed-1", "gspo", "log.jsonl");
    mkdirSync(join(bare, "runs", "seed-1", "gspo"), { recursive: true });
    writeFileSync(damagedLog, '{"stage":"gspo","batch":0}\n');
    const damaged = await runRubric(["report", bare, "--out", join(dir, "damaged.html")]);
    expect(damaged.code).toBe(1);
    expect(damaged.stderr).toContain(`${damagedLog}:line 1: `);
    expect(existsSync(join(dir, "damaged.html"))).toBe(false);
  }, 180_000);
});

describe("rubric report: what it refuses", () => {
  it("names the file and output whose recorded total the rubric does not give, and usage errors exit 2", async () => {
    const other = { ...rubric, criteria: rubric.criteria.map((c) => (c.id === "terms" ? { ...c, weight: 5 } : c)) };
    const withOther = join(dir, "results-other.json");
    writeFileSync(withOther, JSON.stringify({ ...results, rubric: other }));
    const mismatch = await runRubric(["report", withOther, "--out", join(dir, "other.html")]);
    expect(mismatch.code).toBe(1);
    expect(mismatch.stderr).toContain(`${withOther}: results[0] (tight): the run recorded a total of`);
    expect(existsSync(join(dir, "other.html"))).toBe(false);
    // Results without their rubric: named with --rubric.
    const bare = join(dir, "results-bare.json");
    writeFileSync(bare, JSON.stringify({ ...results, rubric: undefined }));
    expect((await runRubric(["report", bare, "--out", join(dir, "bare.html")])).stderr).toContain(
      "give the rubric with --rubric <file>",
    );
    const named = await runRubric([
      "report",
      bare,
      "--rubric",
      join(dir, "rubric.json"),
      "--out",
      join(dir, "bare.html"),
    ]);
    expect(named.code).toBe(0);
    expect(named.stdout).toContain("1 section(s) (scores), 5 scored outputs");
    expect(
      (await runRubric(["report", bare, "--rubric", join(dir, "rubric.json"), "--out", join(dir, "bare.html")])).code,
    ).toBe(1); // exists: --force
    expect((await runRubric(["report", bare, "--out", join(dir, "r.txt")])).code).toBe(2);
    expect((await runRubric(["report", bare, "--task", "x", "--out", join(dir, "t.html")])).code).toBe(2);
  });
});
