import { escapeXml } from "../svg/escape.js";
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

/** Learning curves as a standalone SVG: dev EM after each epoch per method, averaged over seeds. */
export function learningCurvesSvg(table: ArcoTable): string {
  const width = 820;
  const height = 420;
  const margin = { left: 60, right: 400, top: 40, bottom: 50 };
  const plotW = width - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom;
  const series = ARCO_METHODS.flatMap((method) => {
    const runs = table.curves[method];
    if (runs === undefined || runs.length === 0) return [];
    const epochs = runs[0]!.map((point) => point.epoch);
    const points = epochs.map((epoch, i) => ({
      epoch,
      em: runs.reduce((sum, run) => sum + (run[i]?.em ?? 0), 0) / runs.length,
    }));
    return [{ method, points }];
  });
  const maxEpoch = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p.epoch)));
  const hi = Math.min(1, Math.ceil(Math.max(0.1, ...series.flatMap((s) => s.points.map((p) => p.em))) * 10) / 10);
  const x = (epoch: number) => margin.left + (epoch / maxEpoch) * plotW;
  const y = (em: number) => margin.top + (1 - em / hi) * plotH;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${margin.left}" y="24" font-size="14">Dev EM after each epoch (epoch 0: the SFT policy)</text>`,
    `<line x1="${margin.left}" y1="${y(0)}" x2="${margin.left + plotW}" y2="${y(0)}" stroke="black"/>`,
    `<line x1="${margin.left}" y1="${margin.top}" x2="${margin.left}" y2="${y(0)}" stroke="black"/>`,
  ];
  for (let epoch = 0; epoch <= maxEpoch; epoch++) {
    parts.push(`<text x="${x(epoch)}" y="${y(0) + 18}" text-anchor="middle">${epoch}</text>`);
  }
  for (let tick = 0; tick <= 4; tick++) {
    const v = (hi * tick) / 4;
    parts.push(`<text x="${margin.left - 8}" y="${y(v) + 4}" text-anchor="end">${(100 * v).toFixed(0)}</text>`);
  }
  parts.push(`<text x="${margin.left + plotW / 2}" y="${height - 12}" text-anchor="middle">epoch</text>`);
  series.forEach(({ method, points }, i) => {
    const color = COLORS[method];
    parts.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2" points="${points.map((p) => `${x(p.epoch).toFixed(1)},${y(p.em).toFixed(1)}`).join(" ")}"/>`,
    );
    const ly = margin.top + 10 + i * 18;
    parts.push(
      `<line x1="${margin.left + plotW + 16}" y1="${ly}" x2="${margin.left + plotW + 36}" y2="${ly}" stroke="${color}" stroke-width="2"/>`,
    );
    parts.push(`<text x="${margin.left + plotW + 42}" y="${ly + 4}">${escapeXml(ARCO_METHOD_LABELS[method])}</text>`);
  });
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}
