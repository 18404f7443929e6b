import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { renderSvg, type VegaLiteSpec } from "../plots/vega.js";
import { ARCO_GYM_METHODS, type ArcoGymMethod, type ArcoGymTable, arcoGymMarkdown } from "./table.js";

const COLORS: Readonly<Record<ArcoGymMethod, string>> = {
  outcome: "#7f7f7f",
  rar: "#8c564b",
  frozenMu: "#1f77b4",
  arco: "#2ca02c",
  arcoOutcome: "#17becf",
  prm: "#637939",
  fixedCriteria: "#843c39",
  noPrefix: "#7b4173",
  arcoK1: "#98df8a",
  arcoK5: "#31a354",
  muValue: "#393b79",
  featureMu: "#bcbd22",
  featureArco: "#e377c2",
  featureNoPrefix: "#8c6d31",
  valueDifference: "#d62728",
  muAdvantage: "#aec7e8",
  teacherHindsight: "#9467bd",
  trueAdvantage: "#ff7f0e",
};
/** Legend labels short enough not to be cut (the table carries the long ones). */
const SHORT: Readonly<Record<ArcoGymMethod, string>> = {
  outcome: "outcome-only RL",
  rar: "RaR (μ's Σ s_t)",
  frozenMu: "frozen μ",
  arco: "ARCO (μ co-evolving)",
  arcoOutcome: "ARCO + outcome",
  prm: "PRM (K = 1, no criteria)",
  fixedCriteria: "fixed criteria",
  noPrefix: "μ without the prefix",
  arcoK1: "ARCO, K = 1",
  arcoK5: "ARCO, K = 5",
  muValue: "μ as a value (ours)",
  featureMu: "feature μ (frozen)",
  featureArco: "feature μ co-evolving",
  featureNoPrefix: "feature μ, no prefix",
  valueDifference: "state value's change",
  muAdvantage: "μ told the advantage",
  teacherHindsight: "teacher's hindsight scores",
  trueAdvantage: "true-advantage control",
};

const colorScale = (methods: readonly ArcoGymMethod[]) => ({
  field: "label",
  type: "nominal",
  title: null,
  scale: { domain: methods.map((m) => SHORT[m]), range: methods.map((m) => COLORS[m]) },
});
const clamp = (x: number) => Math.min(100, Math.max(0, x));

/** Success after the budget per method and hop count, mean over seeds with ± 1 std. */
export function gymSuccessSpec(table: ArcoGymTable): VegaLiteSpec {
  const methods = ARCO_GYM_METHODS.filter((m) => table.methods[m] !== undefined);
  const values = methods.flatMap((method) =>
    Object.entries(table.methods[method]!.byHops).map(([hops, s]) => ({
      label: SHORT[method],
      hops: Number(hops),
      success: 100 * s.mean,
      low: clamp(100 * (s.mean - s.std)),
      high: clamp(100 * (s.mean + s.std)),
    })),
  );
  return {
    title: { text: "Success after the budget, per chain length", subtitle: "a simulation; mean ± std over seeds" },
    width: 380,
    height: 280,
    data: { values },
    encoding: {
      x: { field: "hops", type: "quantitative", title: "hops H", axis: { tickMinStep: 1, format: "d" } },
      color: colorScale(methods),
    },
    layer: [
      {
        mark: { type: "line", strokeWidth: 2, point: { size: 40 } },
        encoding: { y: { field: "success", type: "quantitative", title: "success (%)", scale: { domain: [0, 100] } } },
      },
      {
        mark: { type: "errorbar" },
        encoding: { y: { field: "low", type: "quantitative", title: "success (%)" }, y2: { field: "high" } },
      },
    ],
  };
}

/** Success against training rollouts, per hop count, mean over seeds. */
export function gymCurvesSpec(table: ArcoGymTable): VegaLiteSpec {
  const methods = ARCO_GYM_METHODS.filter((m) => table.curves[m] !== undefined);
  const values = methods.flatMap((method) =>
    Object.entries(table.curves[method] ?? {}).flatMap(([hops, perSeed]) =>
      (perSeed[0] ?? []).map((point, i) => ({
        label: SHORT[method],
        hops: `H = ${hops}`,
        rollouts: point.rollouts,
        success: (100 * perSeed.reduce((sum, curve) => sum + (curve[i]?.success ?? 0), 0)) / perSeed.length,
      })),
    ),
  );
  return {
    title: {
      text: "Learning curves",
      subtitle: "greedy success on the evaluation tasks; a simulation; mean over seeds",
    },
    data: { values },
    mark: { type: "line", strokeWidth: 2, interpolate: "step-after" },
    encoding: {
      x: { field: "rollouts", type: "quantitative", title: "training rollouts" },
      y: { field: "success", type: "quantitative", title: "success (%)", scale: { domain: [0, 100] } },
      color: colorScale(methods),
      column: { field: "hops", type: "nominal", title: null },
    },
    width: 220,
    height: 200,
  };
}

/** Each critic's s_t against the true advantage on the first seed's probe, per H (absent without critics). */
export function gymCreditSpec(table: ArcoGymTable): VegaLiteSpec | undefined {
  const methods = ARCO_GYM_METHODS.filter((m) => table.creditPoints[m] !== undefined);
  const values = methods.flatMap((method) =>
    Object.entries(table.creditPoints[method] ?? {}).flatMap(([hops, points]) =>
      points.map((p) => ({ label: SHORT[method], hops: `H = ${hops}`, advantage: p.advantage, s: p.s })),
    ),
  );
  if (values.length === 0) return undefined;
  return {
    title: {
      text: "A critic's step score against the true advantage",
      subtitle: "the warm-up's held-out rollouts, first seed; a simulation",
    },
    data: { values },
    mark: { type: "point", opacity: 0.5, size: 25 },
    encoding: {
      x: { field: "advantage", type: "quantitative", title: "true advantage Q − V (Monte Carlo)" },
      y: { field: "s", type: "quantitative", title: "critic's s_t" },
      color: colorScale(methods),
      column: { field: "hops", type: "nominal", title: null },
    },
    width: 220,
    height: 200,
  };
}

/** The run's plots as standalone SVGs (`success.svg`, `curves.svg`), drawn from its table. */
export async function arcoGymPlots(table: ArcoGymTable): Promise<{ file: string; caption: string; svg: string }[]> {
  const plots = [
    { file: "success.svg", caption: "Success per chain length", svg: await renderSvg(gymSuccessSpec(table)) },
    { file: "curves.svg", caption: "Learning curves", svg: await renderSvg(gymCurvesSpec(table)) },
  ];
  const credit = gymCreditSpec(table);
  if (credit !== undefined)
    plots.push({ file: "credit.svg", caption: "Step scores against the true advantage", svg: await renderSvg(credit) });
  return plots;
}

/** `table.json`, `table.md` and the plots (`success.svg`, `curves.svg`, `credit.svg` when a critic was measured) under `out`. */
export async function writeArcoGymOutputs(out: string, table: ArcoGymTable): Promise<void> {
  await mkdir(out, { recursive: true });
  await writeFile(join(out, "table.json"), `${JSON.stringify(table, null, 2)}\n`);
  await writeFile(join(out, "table.md"), arcoGymMarkdown(table));
  for (const plot of await arcoGymPlots(table)) await writeFile(join(out, plot.file), plot.svg);
}
