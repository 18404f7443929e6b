import { describe, expect, it } from "vitest";
import { bucketScorePoints, bucketScoresSvg, learningCurvePoints, learningCurvesSvg } from "./plot.js";
import { arcoTable } from "./__fixtures__/table.js";
import { ARCO_METHOD_LABELS, ArcoTableSchema, arcoMarkdown } from "./table.js";

const table = arcoTable;

describe("arcoMarkdown", () => {
  it("lays out mean ± std over seeds, the paired tests against outcome, ARCO's number and μ's diagnostics", () => {
    const markdown = arcoMarkdown(table);
    expect(markdown).toContain("128 train questions, 400 dev questions, 2 seeds");
    expect(markdown).toContain(`| ${ARCO_METHOD_LABELS.outcome} | 11.0 ± 1.4 | 11.0 ± 1.4 | 16.0 ± 1.4 | — | — |`);
    expect(markdown).toContain(
      `| ${ARCO_METHOD_LABELS.arco} | 13.0 ± 2.8 | 13.0 ± 2.8 | 18.0 ± 2.8 | 30 / 14 (p 0.023), F1 p n/a (no question differs) | 42.8 |`,
    );
    expect(markdown).toContain("| ARCO, K = 5 | 9.5 ± 0.7 | 9.5 ± 0.7 | 14.5 ± 0.7 | 3 / 9 (p 0.15), F1 p 0.41 | — |");
    expect(markdown).toContain(
      "| arco | 1 | 0.610 (40 gold, 60 other) | 0.550 | 56 % of 200 pairs, mean Δs 0.012 | 3 of 300 |",
    );
    // A seed without diagnostics has no row; the sentence on what differs names our training set.
    expect(markdown.match(/^\| arco \| \d/gm)).toHaveLength(1);
    expect(markdown).toContain("training uses 128 questions (ARCO: 2,000)");
    expect(markdown).toContain("muTraining 60 %, muInference 40 %");
    expect(markdown).not.toContain("done so far");
    // Written after the first seed, while the second still runs:
    expect(arcoMarkdown({ ...table, warmup: [{ seed: 1 }] })).toContain("2 seeds (1 of 2 seeds done so far)");
    expect(markdown).toContain("Nothing was selected on dev");
  });

  it("says a tune-split table (`--eval-split tune`) is for choosing settings, not a dev result", () => {
    const markdown = arcoMarkdown({ ...table, config: { ...table.config, evalSplit: "tune", evalQuestions: 69 } });
    expect(markdown).toContain("128 train questions, 69 held-out training (tune) questions, 2 seeds");
    expect(markdown).toContain("not a result to report");
    expect(markdown).not.toContain("Nothing was selected on dev");
    expect(markdown).not.toContain("the dev set is the 400");
  });

  it("reads back only diagnostics it can lay out: a field of another type is refused with its path", () => {
    // `rubric report` draws the table from a run's table.json; `meanDelta: []` threw a bare TypeError there.
    const [seed] = (table.diagnostics["arco"] ?? []) as Record<string, unknown>[];
    const damaged = {
      ...table,
      diagnostics: { arco: [{ ...seed, contrast: { pairs: 200, meanDelta: [], preferred: 0.5 } }] },
    };
    const parsed = ArcoTableSchema.safeParse(JSON.parse(JSON.stringify(damaged)));
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(["diagnostics", "arco", 0, "contrast", "meanDelta"]);
    // As the run writes them: a mean that could not be taken is null in JSON, and reads back.
    const written = { ...table, diagnostics: { arco: [{ ...seed, contrast: { pairs: 0, meanDelta: null } }, null] } };
    const back = ArcoTableSchema.parse(JSON.parse(JSON.stringify(written)));
    expect(arcoMarkdown(back)).toContain("0 % of 0 pairs, mean Δs 0.000");
  });
});

describe("learningCurvesSvg", () => {
  it("draws one line per method through its seeds' mean EM per epoch", async () => {
    const points = learningCurvePoints(table);
    expect(new Set(points.map((p) => p.method)).size).toBe(2);
    // ARCO's mean over its seeds at epoch 1 is 0.13.
    expect(points.find((p) => p.method === "arco" && p.epoch === 1)!.em).toBeCloseTo(0.13, 12);
    const svg = await learningCurvesSvg(table);
    expect(svg).toMatch(/^<svg[\s\S]*<\/svg>\n$/);
    expect(svg.match(/class="mark-line/g)).toHaveLength(2);
    expect(svg).not.toMatch(/NaN|undefined/);
    expect(svg).toContain(ARCO_METHOD_LABELS.arco);
  });
});

describe("bucketScoresSvg", () => {
  it("plots μ's s_t per position bucket for the methods with diagnostics, over the seeds that have them", async () => {
    expect(bucketScorePoints(table)).toEqual([
      { method: "arco", bucket: "search_1", p10: -0.3, median: 0.1, p90: 0.5, seeds: 1, steps: 90 },
      { method: "arco", bucket: "terminal", p10: 0.1, median: 0.45, p90: 0.8, seeds: 1, steps: 60 },
    ]);
    const svg = await bucketScoresSvg(table);
    expect(svg).toMatch(/^<svg[\s\S]*<\/svg>\n$/);
    expect(svg).toContain("search_1");
    expect(svg).toContain("terminal");
    expect(svg).not.toMatch(/NaN|undefined/);
  });
});
