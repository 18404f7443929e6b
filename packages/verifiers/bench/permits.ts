/**
 * Bounding verifier calls: the engine's hand-written FIFO permit pool against Effect's own
 * `Semaphore` (the tool the Effect rule prefers), as the engine uses them: `calls` async calls
 * issued at once through a bound of 8, each awaiting one microtask of "work". The cost per call
 * is what the bound adds on top of the work, at several queue depths.
 *
 *   pnpm --filter @rubric/verifiers run bench:permits [--append ../../BENCHMARKS.md]
 *
 * Runs bundled (tsup → bench/.build, then plain node), medians of 5 runs after 2 warm-ups.
 */
import { appendFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { median } from "@rubric/core";
import { Effect } from "effect";
import { PermitPool } from "../src/engine/permits.js";

const { values: args } = parseArgs({ options: { append: { type: "string" }, runs: { type: "string", default: "5" } } });
const RUNS = Number(args.runs);
const BOUND = 8;
// Deeper queues make the Semaphore cost grow further (2,000 took minutes per run here, 5,000 did not finish).
const DEPTHS = [64, 500];

const work = async (): Promise<number> => {
  await Promise.resolve();
  return 1;
};

async function viaPool(calls: number): Promise<number> {
  const pool = new PermitPool(BOUND);
  const done = await Promise.all(Array.from({ length: calls }, () => pool.run(work)));
  return done.length;
}

async function viaSemaphore(calls: number): Promise<number> {
  // One semaphore shared by plain-async callers, each call run as its own Effect, the way the
  // engine's gate would have to use it (its callers are async functions, not one Effect program).
  const semaphore = Effect.runSync(Effect.makeSemaphore(BOUND));
  const gated = semaphore.withPermits(1)(Effect.promise(work));
  const done = await Promise.all(Array.from({ length: calls }, () => Effect.runPromise(gated)));
  return done.length;
}

async function medianRun(run: () => Promise<number>): Promise<{ ms: number; heapMb: number }> {
  const times: number[] = [];
  let heap = 0;
  for (let i = 0; i < RUNS + 2; i++) {
    const before = process.memoryUsage().heapUsed;
    const started = performance.now();
    await run();
    const ms = performance.now() - started;
    heap = Math.max(heap, process.memoryUsage().heapUsed - before);
    if (i >= 2) times.push(ms);
  }
  return { ms: median(times), heapMb: heap / 2 ** 20 };
}

const rows: string[] = [];
for (const calls of DEPTHS) {
  const pool = await medianRun(() => viaPool(calls));
  const semaphore = await medianRun(() => viaSemaphore(calls));
  const perCall = (ms: number): string => `${((ms * 1000) / calls).toFixed(2)} µs`;
  rows.push(
    `| ${calls.toLocaleString("en-US")} | ${perCall(pool.ms)} | ${perCall(semaphore.ms)} | ${(semaphore.ms / pool.ms).toFixed(1)}× | ${semaphore.heapMb.toFixed(0)} MB |`,
  );
  process.stderr.write(`${rows.at(-1)}\n`);
}

const report = [
  "### Bounding verifier calls: permit pool vs Effect's Semaphore",
  "",
  "`pnpm --filter @rubric/verifiers run bench:permits` — calls issued at once through a bound of 8, each",
  `awaiting one microtask; median of ${RUNS} runs, cost per call.`,
  "",
  "| calls queued | PermitPool | Effect Semaphore | ratio | Semaphore peak heap growth |",
  "|---:|---:|---:|---:|---:|",
  ...rows,
  "",
].join("\n");
process.stdout.write(`${report}\n`);
if (args.append !== undefined) appendFileSync(args.append, `\n${report}`);
