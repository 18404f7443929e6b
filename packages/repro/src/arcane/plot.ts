import { renderSvg, type VegaLiteSpec } from "../plots/vega.js";
import { ARCANE_METHODS, PAPER, methodLabels, type ArcaneTable } from "./table.js";

const COLORS = { noRubric: "#7f7f7f", sft: "#1f77b4", gspo: "#d62728", oracle: "#2ca02c" } as const;

/**
 * The best-of-N scaling curves as a Vega-Lite spec: mean return against N (log2 axis) per
 * method, ± one standard deviation over seeds as bars, and the paper's N=1 / N=8 numbers as
 * hollow marks. Each method's legend entry carries its slope per doubling of N.
 */
export function scalingSpec(table: ArcaneTable): VegaLiteSpec {
  const labels = methodLabels(table);
  const legend = (m: (typeof ARCANE_METHODS)[number]) => {
    const slope = table.scaling.slopePerDoubling[m];
    return `${labels[m]} (${slope >= 0 ? "+" : ""}${slope.toFixed(3)}/×2)`;
  };
  const ns = table.scaling.ns;
  const ours = ARCANE_METHODS.flatMap((m) =>
    table.scaling.curves[m].map((c, k) => ({
      method: legend(m),
      n: ns[k]!,
      mean: c.mean,
      low: c.mean - c.std,
      high: c.mean + c.std,
    })),
  );
  const paper = ARCANE_METHODS.flatMap((m) =>
    ([1, 8] as const)
      .filter((n) => ns.includes(n))
      .map((n) => ({ method: legend(m), n, mean: n === 1 ? PAPER.meanReturn[m].n1 : PAPER.meanReturn[m].n8 })),
  );
  const color = {
    field: "method",
    type: "nominal",
    title: null,
    scale: { domain: ARCANE_METHODS.map(legend), range: ARCANE_METHODS.map((m) => COLORS[m]) },
  };
  const x = {
    field: "n",
    type: "quantitative",
    title: "N (candidates, log scale)",
    scale: { type: "log", base: 2, domain: [ns[0], ns.at(-1)] },
    axis: { values: ns, format: "d" },
  };
  const y = { field: "mean", type: "quantitative", title: "mean return U*", scale: { zero: false } };
  return {
    title: {
      text: `Best-of-N in the rubric gym (${table.tasks.eval} eval tasks)`,
      subtitle: "simulation — hollow marks: the paper's N=1 and N=8",
    },
    width: 420,
    height: 300,
    layer: [
      { data: { values: ours }, mark: { type: "line", strokeWidth: 2 }, encoding: { x, y, color } },
      {
        data: { values: ours },
        mark: { type: "rule" },
        encoding: { x, y: { field: "low", type: "quantitative" }, y2: { field: "high" }, color },
      },
      { data: { values: ours }, mark: { type: "circle", size: 45, opacity: 1 }, encoding: { x, y, color } },
      {
        data: { values: paper },
        mark: { type: "point", shape: "circle", filled: false, size: 110, strokeWidth: 1.5 },
        encoding: { x, y, color },
      },
    ],
  };
}

/** {@link scalingSpec} drawn as a standalone SVG (`scaling.svg`). */
export function scalingSvg(table: ArcaneTable): Promise<string> {
  return renderSvg(scalingSpec(table));
}
