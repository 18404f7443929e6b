import { escapeXml } from "../svg/escape.js";
import { ARCANE_METHODS, PAPER, methodLabels, type ArcaneTable } from "./table.js";

const COLORS = { noRubric: "#7f7f7f", sft: "#1f77b4", gspo: "#d62728", oracle: "#2ca02c" } as const;

/**
 * The best-of-N scaling curves as a standalone SVG: mean return against N (log2 axis) per method,
 * ± one standard deviation over seeds as bars, and the paper's N=1 / N=8 numbers as hollow marks.
 */
export function scalingSvg(table: ArcaneTable): string {
  const width = 640;
  const height = 420;
  const margin = { left: 64, right: 170, top: 48, bottom: 56 };
  const plotW = width - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom;
  const ns = table.scaling.ns;
  const values = ARCANE_METHODS.flatMap((m) =>
    table.scaling.curves[m].flatMap((c) => [c.mean - c.std, c.mean + c.std]),
  );
  const paperValues = ARCANE_METHODS.flatMap((m) => [PAPER.meanReturn[m].n1, PAPER.meanReturn[m].n8]);
  const lo = Math.max(0, Math.floor(Math.min(...values, ...paperValues) * 10) / 10);
  const hi = Math.min(1, Math.ceil(Math.max(...values, ...paperValues) * 10) / 10);
  const x = (n: number) =>
    margin.left + ((Math.log2(n) - Math.log2(ns[0]!)) / (Math.log2(ns.at(-1)!) - Math.log2(ns[0]!))) * plotW;
  const y = (v: number) => margin.top + (1 - (v - lo) / (hi - lo)) * plotH;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
  );
  parts.push(`<rect width="${width}" height="${height}" fill="white"/>`);
  parts.push(
    `<text x="${margin.left}" y="24" font-size="15" font-weight="bold">Best-of-N in the rubric gym (${table.tasks.eval} eval tasks)</text>`,
  );
  parts.push(`<text x="${margin.left}" y="40" fill="#555">simulation — hollow marks: the paper's N=1 and N=8</text>`);
  // Grid and axes.
  for (let v = lo; v <= hi + 1e-9; v += 0.1) {
    parts.push(
      `<line x1="${margin.left}" x2="${margin.left + plotW}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#e5e5e5"/>`,
    );
    parts.push(`<text x="${margin.left - 8}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${v.toFixed(1)}</text>`);
  }
  for (const n of ns)
    parts.push(`<text x="${x(n).toFixed(1)}" y="${margin.top + plotH + 18}" text-anchor="middle">${n}</text>`);
  parts.push(
    `<line x1="${margin.left}" x2="${margin.left + plotW}" y1="${margin.top + plotH}" y2="${margin.top + plotH}" stroke="#333"/>`,
  );
  parts.push(
    `<line x1="${margin.left}" x2="${margin.left}" y1="${margin.top}" y2="${margin.top + plotH}" stroke="#333"/>`,
  );
  parts.push(
    `<text x="${margin.left + plotW / 2}" y="${height - 14}" text-anchor="middle">N (candidates, log scale)</text>`,
  );
  parts.push(
    `<text transform="translate(18 ${margin.top + plotH / 2}) rotate(-90)" text-anchor="middle">mean return U*</text>`,
  );
  for (const [i, m] of ARCANE_METHODS.entries()) {
    const curve = table.scaling.curves[m];
    const color = COLORS[m];
    const points = curve.map((c, k) => `${x(ns[k]!).toFixed(1)},${y(c.mean).toFixed(1)}`).join(" ");
    parts.push(`<polyline points="${points}" fill="none" stroke="${color}" stroke-width="2"/>`);
    curve.forEach((c, k) => {
      const cx = x(ns[k]!).toFixed(1);
      if (c.std > 0)
        parts.push(
          `<line x1="${cx}" x2="${cx}" y1="${y(c.mean - c.std).toFixed(1)}" y2="${y(c.mean + c.std).toFixed(1)}" stroke="${color}"/>`,
        );
      parts.push(`<circle cx="${cx}" cy="${y(c.mean).toFixed(1)}" r="3.5" fill="${color}"/>`);
    });
    for (const [n, v] of [
      [1, PAPER.meanReturn[m].n1],
      [8, PAPER.meanReturn[m].n8],
    ] as const)
      if (ns.includes(n))
        parts.push(
          `<circle cx="${x(n).toFixed(1)}" cy="${y(v).toFixed(1)}" r="5" fill="none" stroke="${color}" stroke-width="1.5"/>`,
        );
    const ly = margin.top + 10 + i * 22;
    const lx = margin.left + plotW + 16;
    parts.push(`<line x1="${lx}" x2="${lx + 22}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2"/>`);
    parts.push(
      `<text x="${lx + 28}" y="${ly + 4}">${escapeXml(methodLabels(table)[m])} (${table.scaling.slopePerDoubling[m] >= 0 ? "+" : ""}${table.scaling.slopePerDoubling[m].toFixed(3)}/×2)</text>`,
    );
  }
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}
