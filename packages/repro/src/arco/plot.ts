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
