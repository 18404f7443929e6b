import { quantile } from "@rubric/core";

/** The median wall time of `runs` calls of `fn` after one warm-up call, and the last call's value. */
export async function time<T>(fn: () => Promise<T>, runs: number): Promise<{ median: number; last: T }> {
  let last = await fn(); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    last = await fn();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { median: quantile(samples, 0.5), last };
}

/** Milliseconds as the tables print them: "740 ms", "4.83 s". */
export const seconds = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);
