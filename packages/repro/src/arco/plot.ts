import { z } from "zod";
import { renderSvg, type VegaLiteSpec } from "../plots/vega.js";
import { ARCO_METHODS, ARCO_METHOD_LABELS, type ArcoMethod, type ArcoTable } from "./table.js";

const COLORS: Readonly<Record<ArcoMethod, string>> = {
  outcome: "#7f7f7f",
  rar: "#8c564b",
  frozenMu: "#1f77b4",
  prm: "#9467bd",
  fixedCriteria: "#bcbd22",
  noPrefix: "#17becf",
  arco: "#d62728",
  arcoOutcome: "#2ca02c",
  teacherMu: "#ff7f0e",
};

/** Each method's dev EM after each epoch, averaged over its seeds (methods without curves are left out). */
export function learningCurvePoints(table: ArcoTable): { method: ArcoMethod; epoch: number; em: number }[] {
  return ARCO_METHODS.flatMap((method) => {
    const runs = table.curves[method];
    if (runs === undefined || runs.length === 0) return [];
    return runs[0]!.map((point, i) => ({
      method,
      epoch: point.epoch,
      em: runs.reduce((sum, run) => sum + (run[i]?.em ?? 0), 0) / runs.length,
    }));
  });
}

/** Learning curves as a Vega-Lite spec: dev EM (%) after each epoch per method, averaged over seeds. */
export function learningCurvesSpec(table: ArcoTable): VegaLiteSpec {
  const points = learningCurvePoints(table).map((p) => ({ ...p, label: ARCO_METHOD_LABELS[p.method], em: 100 * p.em }));
  const methods = ARCO_METHODS.filter((m) => points.some((p) => p.method === m));
  return {
    title: { text: "Dev EM after each epoch", subtitle: "epoch 0: the SFT policy; mean over seeds" },
    width: 380,
    height: 300,
    data: { values: points },
    mark: { type: "line", strokeWidth: 2, point: { size: 30 } },
    encoding: {
      x: { field: "epoch", type: "quantitative", title: "epoch", axis: { tickMinStep: 1, format: "d" } },
      y: { field: "em", type: "quantitative", title: "dev EM (%)" },
      color: {
        field: "label",
        type: "nominal",
        title: null,
        scale: { domain: methods.map((m) => ARCO_METHOD_LABELS[m]), range: methods.map((m) => COLORS[m]) },
      },
    },
  };
}

/** {@link learningCurvesSpec} drawn as a standalone SVG (`curves.svg`). */
export function learningCurvesSvg(table: ArcoTable): Promise<string> {
  return renderSvg(learningCurvesSpec(table));
}

/** One position bucket's s_t distribution as `bucketScores` (rlxar) records it in a method's diagnostics. */
const BucketSchema = z.object({
  count: z.number(),
  mean: z.number(),
  p10: z.number(),
  median: z.number(),
  p90: z.number(),
});
const DiagnosticsBucketsSchema = z.object({ buckets: z.record(z.string(), BucketSchema) });

/**
 * μ's step scores per position bucket (search_1..3, terminal) for each method with diagnostics:
 * the 10th percentile, median and 90th percentile of s_t on the final policy's dev rollouts, each
 * the mean over the seeds that have them. Seeds without diagnostics are left out.
 */
export function bucketScorePoints(
  table: ArcoTable,
): { method: string; bucket: string; p10: number; median: number; p90: number; seeds: number; steps: number }[] {
  return Object.entries(table.diagnostics).flatMap(([method, perSeed]) => {
    const seeds = perSeed.flatMap((d) => {
      const parsed = DiagnosticsBucketsSchema.safeParse(d);
      return parsed.success ? [parsed.data.buckets] : [];
    });
    const buckets = [...new Set(seeds.flatMap((b) => Object.keys(b)))].sort();
    return buckets.map((bucket) => {
      const rows = seeds.flatMap((b) => (b[bucket] === undefined ? [] : [b[bucket]!]));
      const mean = (f: (r: z.output<typeof BucketSchema>) => number) =>
        rows.reduce((a, r) => a + f(r), 0) / rows.length;
      return {
        method,
        bucket,
        p10: mean((r) => r.p10),
        median: mean((r) => r.median),
        p90: mean((r) => r.p90),
        seeds: rows.length,
        steps: rows.reduce((a, r) => a + r.count, 0),
      };
    });
  });
}

/** {@link bucketScorePoints} as a Vega-Lite spec: per bucket, each method's median s_t with its 10–90 % range. */
export function bucketScoresSpec(table: ArcoTable): VegaLiteSpec {
  const label = (method: string) => ARCO_METHOD_LABELS[method as ArcoMethod] ?? method;
  const points = bucketScorePoints(table).map((p) => ({ ...p, label: label(p.method) }));
  const methods = [...new Set(points.map((p) => p.method))];
  const color = {
    field: "label",
    type: "nominal",
    title: null,
    scale: {
      domain: methods.map(label),
      range: methods.map((m) => COLORS[m as ArcoMethod] ?? "#555"),
    },
  };
  const x = { field: "bucket", type: "nominal", title: "step position (ARCO's buckets)", sort: null };
  return {
    title: {
      text: "μ's step scores s_t per position bucket",
      subtitle: "median, with the 10th–90th percentile; dev rollouts of the final policy",
    },
    width: 380,
    height: 260,
    data: { values: points },
    layer: [
      {
        mark: { type: "rule", strokeWidth: 2 },
        encoding: {
          x,
          xOffset: { field: "label" },
          y: { field: "p10", type: "quantitative", title: "s_t" },
          y2: { field: "p90" },
          color,
        },
      },
      {
        mark: { type: "point", filled: true, size: 60 },
        encoding: { x, xOffset: { field: "label" }, y: { field: "median", type: "quantitative" }, color },
      },
    ],
  };
}

/** {@link bucketScoresSpec} drawn as a standalone SVG (`buckets.svg`). */
export function bucketScoresSvg(table: ArcoTable): Promise<string> {
  return renderSvg(bucketScoresSpec(table));
}

/**
 * An ARCO run's plots, each with the file name a run writes it under: the learning curves, and μ's
 * per-bucket step scores when some method was diagnosed. What `writeArcoOutputs` writes and
 * `rubric report` shows.
 */
export async function arcoPlots(table: ArcoTable): Promise<{ file: string; caption: string; svg: string }[]> {
  const plots = [{ file: "curves.svg", caption: "Learning curves", svg: await learningCurvesSvg(table) }];
  if (bucketScorePoints(table).length > 0)
    plots.push({
      file: "buckets.svg",
      caption: "μ's step scores per position bucket",
      svg: await bucketScoresSvg(table),
    });
  return plots;
}
