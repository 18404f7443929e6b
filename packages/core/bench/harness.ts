import { quantile } from "@rubric/core";

/**
 * A small benchmark harness: warm up, then time repeated runs and report the median (with the
 * 10th and 90th percentiles), because one timing on a shared 2-core machine says little.
 */
export interface BenchResult {
  readonly name: string;
  readonly runs: number;
  readonly medianMs: number;
  readonly p10Ms: number;
  readonly p90Ms: number;
  /** Work items per run, for a throughput figure. */
  readonly items?: number;
  readonly itemName?: string;
}

export function bench(
  name: string,
  fn: () => unknown,
  options: { runs?: number; warmup?: number; items?: number; itemName?: string } = {},
): BenchResult {
  const { runs = 30, warmup = 5 } = options;
  let sink: unknown;
  for (let i = 0; i < warmup; i++) sink = fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    sink = fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  if (sink === Symbol.for("never")) console.log("unreachable");
  times.sort((a, b) => a - b);
  const at = (q: number) => quantile(times, q);
  return {
    name,
    runs,
    medianMs: at(0.5),
    p10Ms: at(0.1),
    p90Ms: at(0.9),
    items: options.items,
    itemName: options.itemName,
  };
}

export function throughput(result: BenchResult): string {
  if (result.items === undefined) return "";
  const perSecond = result.items / (result.medianMs / 1000);
  const text =
    perSecond >= 1e6
      ? `${(perSecond / 1e6).toFixed(2)} M`
      : perSecond >= 1e3
        ? `${(perSecond / 1e3).toFixed(1)} k`
        : perSecond.toFixed(0);
  return `${text} ${result.itemName ?? "items"}/s`;
}
