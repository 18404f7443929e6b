/**
 * Static SVG from a Vega-Lite spec: compiled by vega-lite, rendered by vega's headless view (no
 * DOM, no canvas). The same specs can be embedded in a page and drawn there; Markdown outputs get
 * these files. Both libraries are ESM-only, so they are imported when a plot is drawn (the
 * CommonJS build keeps `import()`), not when this package loads.
 */

/** A Vega-Lite specification (typed loosely: the schema is vega-lite's, checked when compiled). */
export type VegaLiteSpec = Readonly<Record<string, unknown>>;

/** What every plot shares: sans-serif text, a white background, no actions. */
export const PLOT_CONFIG = {
  background: "white",
  font: "sans-serif",
  title: { fontSize: 15, subtitleColor: "#555", anchor: "start" },
  axis: { labelFontSize: 12, titleFontSize: 12, gridColor: "#e5e5e5" },
  legend: { labelFontSize: 12, titleFontSize: 12, labelLimit: 480 },
} as const;

/**
 * Renders a Vega-Lite spec to a standalone SVG document.
 * @throws Error from vega-lite when the spec does not compile (naming the property at fault).
 */
export async function renderSvg(spec: VegaLiteSpec): Promise<string> {
  const [vegaLite, vega] = await Promise.all([import("vega-lite"), import("vega")]);
  const compiled = vegaLite.compile({ config: PLOT_CONFIG, ...spec } as never).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: "none" });
  try {
    const svg = await view.toSVG();
    return svg.endsWith("\n") ? svg : `${svg}\n`;
  } finally {
    view.finalize();
  }
}
