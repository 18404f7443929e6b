import { renderSvg, type VegaLiteSpec } from "../plots/vega.js";
import { ARCANE_METHODS, PAPER, methodLabels, type ArcaneTable } from "./table.js";
import { type ArcaneTrainingCurves, readArcaneTrainingCurves } from "./training-curves.js";

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

/**
 * How an ARCANE run trained, as a Vega-Lite spec, one line per seed: Stage I's loss per epoch
 * (the epoch's mean NLL per token), and Stage II's mean reward (U* minus costs) and k3 KL to the
 * SFT policy per batch — the numbers of the seeds' `log.jsonl` files as
 * `readArcaneTrainingCurves` reads them, epochs and batches counted from 1. A stage no seed
 * logged has no panel. `trained` names Stage II's objective (`methodLabels(table).gspo`).
 *
 * @example
 * const spec = trainingCurvesSpec({ seeds: [{ seed: 1, sft: [{ epoch: 0, loss: 2.3 }], gspo: [] }] });
 * // one panel: SFT loss 2.3 after epoch 1
 */
export function trainingCurvesSpec(curves: ArcaneTrainingCurves, trained = "GSPO"): VegaLiteSpec {
  const seedLabel = (seed: number) => `seed ${seed}`;
  const sft = curves.seeds.flatMap((s) =>
    s.sft.map((e) => ({ seed: seedLabel(s.seed), epoch: e.epoch + 1, loss: e.loss })),
  );
  const gspo = curves.seeds.flatMap((s) =>
    s.gspo.map((e) => ({ seed: seedLabel(s.seed), batch: e.batch + 1, meanReward: e.meanReward, kl: e.kl })),
  );
  const color = {
    field: "seed",
    type: "nominal",
    title: null,
    scale: { domain: curves.seeds.map((s) => seedLabel(s.seed)) },
  };
  const mark = { type: "line", strokeWidth: 2, point: { size: 30 } };
  const step = (field: string, title: string) => ({
    field,
    type: "quantitative",
    title,
    axis: { tickMinStep: 1, format: "d" },
  });
  // Each panel says what it plots on its y axis: panel titles would not line up (vega places each
  // above its own axis labels' bounds).
  const panel = (values: readonly object[], x: object, y: object) => ({
    width: 220,
    height: 200,
    data: { values },
    mark,
    encoding: { x, y, color },
  });
  const panels = [
    ...(sft.length === 0
      ? []
      : [
          panel(sft, step("epoch", "SFT epoch"), {
            field: "loss",
            type: "quantitative",
            title: "SFT loss (NLL per token)",
            scale: { zero: false },
          }),
        ]),
    ...(gspo.length === 0
      ? []
      : [
          panel(gspo, step("batch", `${trained} batch`), {
            field: "meanReward",
            type: "quantitative",
            title: `${trained} mean reward`,
            scale: { zero: false },
          }),
          panel(gspo, step("batch", `${trained} batch`), {
            field: "kl",
            type: "quantitative",
            title: `${trained} KL to the SFT policy`,
          }),
        ]),
  ];
  return {
    title: {
      text: "How training went",
      offset: 10,
      subtitle: "one line per seed, from its log.jsonl — reward: U* minus costs; KL: k3 to the SFT policy",
    },
    hconcat: panels,
  };
}

/** {@link trainingCurvesSpec} drawn as a standalone SVG (`training.svg`). */
export function trainingCurvesSvg(curves: ArcaneTrainingCurves, trained?: string): Promise<string> {
  return renderSvg(trainingCurvesSpec(curves, trained));
}

/**
 * `training.svg` of a run: its table's seeds' curves read from their logs under `runDir`
 * (`<out>/runs` for `rubric repro arcane`), or undefined when no seed left a log (a run written
 * before the logs were kept). What the run writes and `rubric report` draws, from the same files.
 *
 * @example
 * const svg = await arcaneTrainingSvg(table, "runs/arcane-quick/runs");
 */
export async function arcaneTrainingSvg(table: ArcaneTable, runDir: string): Promise<string | undefined> {
  const curves = await readArcaneTrainingCurves(
    runDir,
    table.training.map((t) => t.seed),
  );
  return curves === undefined ? undefined : trainingCurvesSvg(curves, methodLabels(table).gspo);
}
