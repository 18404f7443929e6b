/**
 * Benchmarks of @rubric/verifiers, one process, medians of repeated runs.
 *
 *   pnpm --filter @rubric/verifiers run bench [--append ../../BENCHMARKS.md] [--skip-promptfoo]
 *
 * Runs bundled (tsup → bench/.build, then plain node) so the numbers are not tsx's.
 *
 * 1. Rule verifiers: 1,000 outputs × a 12-criterion rule rubric through scoreOutputs, against
 *    promptfoo's evaluate() with the equivalent assertions (icontains / regex / javascript,
 *    weighted) and its echo provider. promptfoo (≈1.3 GB) is installed on first run into
 *    bench/promptfoo/, or taken from PROMPTFOO_DIR; beside it the per-verdict path (the verifiers
 *    without their synchronous checks), scoreOutputsSync and the bare checks (the limit).
 *    Target: ≥ 100× faster than promptfoo.
 * 2. The judge path against a local OpenAI-wire server with 50 ms latency: requests per
 *    (output, rubric) when batched, 500 requests at concurrency 32 vs the ideal 500/32 × 50 ms
 *    (target ≤ 1.25×), and the requests a cached rerun makes (target 0).
 * 3. A local judge (llamaCpp on ../shared/models/stories260K.gguf, one thread) grading 6 outputs
 *    of a real GDPval task (a prompt of ≈3,000 tokens before the output): per-call latency with
 *    every prompt from an empty context and flash attention on (the behaviour before the prompt
 *    cache), with flash attention off, and with the default prompt cache. `--skip-llama` skips it.
 */
import { execFileSync, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { appendFileSync, existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { median, parseFlatRubric, readJsonLines } from "@rubric/core";
import { outputs, patterns, rubric, terms } from "./rule-rubric.js";
import { z } from "zod";
import {
  VerifierRegistry,
  createVerifierRegistry,
  fileCache,
  llmJudge,
  scoreOutputs,
  scoreOutputsSync,
  type Verifier,
} from "@rubric/verifiers";
import { llamaCpp, openAICompatible, type LlamaCppOptions } from "@rubric/providers";
import { readFileSync } from "node:fs";

const { values: args } = parseArgs({
  options: {
    append: { type: "string" },
    "skip-promptfoo": { type: "boolean", default: false },
    "skip-llama": { type: "boolean", default: false },
    runs: { type: "string", default: "7" },
    "judge-warmups": { type: "string", default: "5" },
  },
});
const runs = Number(args.runs);
const lines: string[] = [];
const say = (line = "") => {
  console.log(line);
  lines.push(line);
};

async function time(fn: () => Promise<unknown>, n = runs): Promise<number[]> {
  await fn(); // warm-up
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

// --- 2. the judge path (measured before promptfoo is loaded: it installs its own HTTP machinery) -------------------------------------------------------------------------
say();
say("### Judge path against a local OpenAI-wire server (50 ms latency)");
say();
const judged = parseFlatRubric({
  id: "bench-judge",
  criteria: ["clear", "accurate", "complete"].map((c) => ({
    id: c,
    text: `The answer is ${c}`,
    weight: 1,
    verifier: { kind: "llm-judge", scale: { min: 0, max: 4 } },
  })),
});
// The server runs in its own process, as a remote judge would: in this one it would compete
// with the client for the event loop and measure neither.
const child = spawn(process.execPath, [fileURLToPath(new URL("./judge-server.js", import.meta.url)), "50"], {
  stdio: ["pipe", "pipe", "inherit"],
});
const replies = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
const nextLine = async () => String((await replies.next()).value);
const serverUrl = await nextLine();
const requestCount = async () => {
  child.stdin!.write("count\n");
  return Number(await nextLine());
};
const judgeOutputs = Array.from({ length: 500 }, (_, i) => ({ id: `j${i}`, output: `answer ${i}` }));
// One judge for the whole run, as a long-running scorer holds one (its client and schemas warm).
const sharedJudgeRegistry = createVerifierRegistry({
  python: false,
  js: false,
  judge: llmJudge(openAICompatible({ baseUrl: serverUrl, model: "bench-judge", apiKeyEnv: false })),
});
const judgeRegistry = () => sharedJudgeRegistry;
const cacheDir = mkdtempSync(join(tmpdir(), "rubric-bench-cache-"));
const fresh = (tag: string) => judgeOutputs.map((o) => ({ id: `${tag}-${o.id}`, output: `${tag} ${o.output}` }));
// A judge run is long and a scorer long-lived; measure it warm. V8 keeps optimising the request
// path for a few thousand requests (CPU per request falls ~2× after the first 500), so the
// warm-up is 5 passes of 500 fresh outputs; the first, cold pass is reported too.
const warmups: number[] = [];
for (let w = 0; w < Number(args["judge-warmups"]); w++) {
  const start = performance.now();
  await scoreOutputs(judged, fresh(`warm${w}`), { registry: judgeRegistry(), concurrency: 32 });
  warmups.push(performance.now() - start);
}
const walls: number[] = [];
const cpus: number[] = [];
let requestsPerRun = 0;
// The concurrency target is the judge path itself: fresh outputs, no verdict cache. Writing a
// cache is measured on its own below (it costs the client CPU too).
for (let r = 0; r < 3; r++) {
  const startCount = await requestCount();
  const cpu = process.cpuUsage();
  const start = performance.now();
  await scoreOutputs(judged, fresh(`run${r}`), { registry: judgeRegistry(), concurrency: 32 });
  walls.push(performance.now() - start);
  const used = process.cpuUsage(cpu);
  cpus.push((used.user + used.system) / 1000);
  requestsPerRun = (await requestCount()) - startCount;
}
const ideal = (500 / 32) * 50;
const wall = median(walls);
say(
  `500 outputs × 3 judge criteria, batched: ${requestsPerRun} requests per run (${(requestsPerRun / 500).toFixed(2)} per output; target ≤ 1)`,
);
say(
  `wall time at concurrency 32 (median of 3 runs after ${warmups.length} warm-up passes of 500): ${wall.toFixed(0)} ms vs ideal ${ideal.toFixed(0)} ms = ${(wall / ideal).toFixed(2)}× (target ≤ 1.25×); client CPU ${(median(cpus) / 500).toFixed(2)} ms per request`,
);
if (warmups.length > 0)
  say(
    `cold: the process's first 500 judge requests took ${warmups[0]!.toFixed(0)} ms = ${(warmups[0]! / ideal).toFixed(2)}× ideal; the last warm-up pass ${warmups.at(-1)!.toFixed(0)} ms = ${(warmups.at(-1)! / ideal).toFixed(2)}×`,
  );
// Baseline: the same number of bare fetch() calls, no client library, no judge, no engine.
{
  const body = JSON.stringify({ model: "bench-judge", messages: [{ role: "user", content: "answer" }] });
  const fetchWalls: number[] = [];
  const fetchCpus: number[] = [];
  for (let r = 0; r < 3; r++) {
    let next = 0;
    const cpu = process.cpuUsage();
    const start = performance.now();
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next++ < 500) await (await fetch(`${serverUrl}/v1/chat/completions`, { method: "POST", body })).text();
      }),
    );
    fetchWalls.push(performance.now() - start);
    const used = process.cpuUsage(cpu);
    fetchCpus.push((used.user + used.system) / 1000);
  }
  say(
    `baseline, 500 bare fetch() calls at concurrency 32: ${median(fetchWalls).toFixed(0)} ms = ${(median(fetchWalls) / ideal).toFixed(2)}× ideal; client CPU ${(median(fetchCpus) / 500).toFixed(2)} ms per request (Node 20's fetch; the judge path uses node:http keep-alive instead), and the judge server's process shares this machine's cores`,
  );
}
{
  const start = performance.now();
  await scoreOutputs(judged, judgeOutputs, { registry: judgeRegistry(), concurrency: 32, cache: fileCache(cacheDir) });
  const writing = performance.now() - start;
  say(
    `the same 500 through a new file cache (every verdict written to disk): ${writing.toFixed(0)} ms = ${(writing / ideal).toFixed(2)}× ideal`,
  );
}
const before = await requestCount();
await scoreOutputs(judged, judgeOutputs, { registry: judgeRegistry(), concurrency: 32, cache: fileCache(cacheDir) });
say(`cached rerun (new cache object on the same directory): ${(await requestCount()) - before} requests (target 0)`);
child.kill();
say();

// --- 1. rule verifiers vs promptfoo ------------------------------------------------------------
const registry = createVerifierRegistry({ python: false });
// The per-verdict path (what scoreOutputs did for rules before the batched path): the same
// verifiers without their synchronous `check`.
const perVerdict = new VerifierRegistry(
  registry.kinds().map((kind) => {
    const { check: _, ...rest } = registry.get(kind)!;
    return rest as Verifier;
  }),
);
// The bare checks: each criterion's check on each output, nothing else (no verdict, no score) —
// the limit any engine around them can approach.
const specs = rubric.criteria.map((c) => {
  const verifier = registry.get(c.verifier.kind)!;
  return { verifier, spec: verifier.specSchema.parse(c.verifier) };
});
let sink = 0;
const bare = () => {
  for (const o of outputs) for (const { verifier, spec } of specs) sink += verifier.check!(spec, o).score ?? 0;
};
// Round-robin: at these sizes the collector's state decides a run's time as much as the code does,
// so each path takes its turn in every round rather than all its runs in a row.
const paths = {
  perVerdict: () => scoreOutputs(rubric, outputs, { registry: perVerdict, concurrency: 64 }),
  batched: () => scoreOutputs(rubric, outputs, { registry, concurrency: 64 }),
  sync: async () => scoreOutputsSync(rubric, outputs, { registry }),
  bare: async () => bare(),
};
const rounds = 3 * runs;
const times: Record<keyof typeof paths, number[]> = { perVerdict: [], batched: [], sync: [], bare: [] };
for (const fn of Object.values(paths)) await fn(); // warm-up
for (let r = 0; r < rounds; r++)
  for (const [name, fn] of Object.entries(paths) as [keyof typeof paths, () => Promise<unknown>][]) {
    const t = performance.now();
    await fn();
    times[name].push(performance.now() - t);
  }
const { perVerdict: perVerdictMs, batched: oursMs, sync: syncMs, bare: bareMs } = times;
const rate = (ms: number[]) => `${((1000 * 12) / (median(ms) / 1000) / 1e3).toFixed(0)} k verdicts/s`;
say("### Rule verifiers: 1,000 outputs × 12 criteria");
say();
say(`| path | median over ${rounds} round-robin rounds | verdicts/s |`);
say("|---|---|---|");
say(
  `| scoreOutputs, per-verdict path (each rule a promise and a permit; before) | ${median(perVerdictMs).toFixed(1)} ms | ${rate(perVerdictMs)} |`,
);
say(
  `| scoreOutputs (batched rule path, yields every 64 outputs) | ${median(oursMs).toFixed(1)} ms | ${rate(oursMs)} |`,
);
say(`| scoreOutputsSync | ${median(syncMs).toFixed(1)} ms | ${rate(syncMs)} |`);
say(
  `| bare checks (each check's draft, no verdict, no score): the limit | ${median(bareMs).toFixed(1)} ms | ${rate(bareMs)} |`,
);
say();
say(
  `the batched path is ${(median(perVerdictMs) / median(oursMs)).toFixed(1)}× the per-verdict path; scoreOutputsSync costs ${(median(syncMs) / median(bareMs)).toFixed(2)}× the bare checks (checksum ${sink.toFixed(0)})`,
);

// --- 3. a local judge on a long GDPval prompt ---------------------------------------------------------------------------------------------------------------------------
if (!args["skip-llama"]) {
  const shared = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../shared/", import.meta.url)); // from bench/.build/
  const tasks = readJsonLines(
    readFileSync(join(shared, "data/gdpval/tasks.jsonl"), "utf8"),
    z.object({ task_id: z.string(), prompt: z.string() }),
  );
  const firstTask = tasks.records[0]!.value;
  const criterion = parseFlatRubric({
    id: "bench-local",
    criteria: [
      {
        id: "fit",
        text: "The response delivers what the task asks for",
        weight: 1,
        verifier: { kind: "llm-judge", scale: { min: 0, max: 4 } },
      },
    ],
  });
  const localOutputs = Array.from({ length: 6 }, (_, i) => ({
    id: `o${i}`,
    input: firstTask.prompt,
    output: `Draft ${i}: ${"The sample of metrics was tested against the source data and the exceptions are listed below. ".repeat(4)}`,
  }));
  say();
  say(
    `### Local judge: llamaCpp + stories260K on GDPval task ${firstTask.task_id.slice(0, 8)} (6 outputs, one call each, 1 thread)`,
  );
  say();
  const variants: [string, Partial<LlamaCppOptions>][] = [
    ["every prompt from an empty context, flash attention on (before)", { promptCache: 0, flashAttention: true }],
    ["every prompt from an empty context, flash attention off", { promptCache: 0 }],
    ["prompt cache (default: 1 state), flash attention off (default)", {}],
  ];
  const medians: number[] = [];
  for (const [label, settings] of variants) {
    const model = llamaCpp({
      modelPath: join(shared, "models/stories260K.gguf"),
      contextSize: 8192,
      threads: 1,
      ...settings,
    });
    await model.generate({ messages: [{ role: "user", content: "Once" }], maxTokens: 1 }); // load outside the timings
    const calls: { ms: number; input: number; cached: number }[] = [];
    const timed = {
      ...model,
      provider: model.provider,
      modelId: model.modelId,
      async generate(request: Parameters<typeof model.generate>[0]) {
        const t = performance.now();
        const response = await model.generate(request);
        calls.push({
          ms: performance.now() - t,
          input: response.usage.inputTokens,
          cached: response.usage.cachedInputTokens ?? 0,
        });
        return response;
      },
    };
    const judge = createVerifierRegistry({
      python: false,
      judge: llmJudge(timed, { rationaleMaxLength: 200, parseRetries: 0 }),
    });
    // One call at a time: the model serialises calls anyway, and a queued call's wait is not its cost.
    await scoreOutputs(criterion, localOutputs, { registry: judge, concurrency: 1 });
    await model.dispose();
    const ms = calls.map((c) => c.ms);
    medians.push(median(ms));
    say(
      `${label}: median ${median(ms).toFixed(0)} ms per call (first ${ms[0]!.toFixed(0)} ms; ${calls[0]!.input} prompt tokens, median ${median(calls.map((c) => c.cached))} reused)`,
    );
  }
  say(
    `ratio: the default is ${(medians[0]! / medians[2]!).toFixed(1)}× faster per call than before (flash attention alone: ${(medians[0]! / medians[1]!).toFixed(1)}×)`,
  );
}

say();
say("### Rule verifiers against promptfoo");
say();
if (!args["skip-promptfoo"]) {
  const dir = process.env["PROMPTFOO_DIR"] ?? fileURLToPath(new URL("../promptfoo/", import.meta.url));
  if (!existsSync(join(dir, "node_modules/promptfoo"))) {
    console.error(`installing promptfoo into ${dir} (≈1.3 GB, a few minutes; set PROMPTFOO_DIR to reuse an install) …`);
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: dir, stdio: "inherit" });
  }
  for (const key of [
    "PROMPTFOO_DISABLE_TELEMETRY",
    "PROMPTFOO_DISABLE_UPDATE",
    "PROMPTFOO_DISABLE_SHARING",
    "PROMPTFOO_DISABLE_REMOTE_GENERATION",
  ])
    process.env[key] = "1";
  const promptfoo = (await import(pathToFileURL(join(dir, "node_modules/promptfoo/dist/src/index.js")).href).catch(
    () => import(pathToFileURL(join(dir, "node_modules/promptfoo")).href),
  )) as {
    default?: { evaluate: (...a: unknown[]) => Promise<unknown> };
    evaluate?: (...a: unknown[]) => Promise<unknown>;
  };
  const evaluate = promptfoo.evaluate ?? promptfoo.default!.evaluate;
  const asserts = [
    ...terms.map((t, i) => ({ type: "icontains", value: t, weight: 1 + (i % 2) })),
    ...patterns.map((p) => ({ type: "regex", value: p, weight: 1 })),
    { type: "javascript", value: "output.split(/\\s+/).filter(Boolean).length <= 60", weight: 1 },
    { type: "javascript", value: "output.length >= 80", weight: 1 },
    { type: "regex", value: "\\[\\d+\\]", weight: 1 },
    { type: "not-icontains", value: "guaranteed", weight: 2 },
  ];
  const suite = {
    prompts: ["{{out}}"],
    providers: [{ id: "echo" }],
    tests: outputs.map((o) => ({ vars: { out: o.output }, assert: asserts })),
    writeLatestResults: false,
  };
  const theirsMs = await time(
    () => evaluate(suite, { maxConcurrency: 64, showProgressBar: false, cache: false }),
    Math.min(runs, 3),
  );
  say(
    `promptfoo ${"0.120.8"} evaluate() (echo provider): median ${median(theirsMs).toFixed(1)} ms over ${Math.min(runs, 3)} runs`,
  );
  say(
    `ratio: scoreOutputs is ${(median(theirsMs) / median(oursMs)).toFixed(1)}× faster, scoreOutputsSync ${(median(theirsMs) / median(syncMs)).toFixed(1)}×, the per-verdict path ${(median(theirsMs) / median(perVerdictMs)).toFixed(1)}×; the bare checks ${(median(theirsMs) / median(bareMs)).toFixed(1)}× (target ≥ 100×)`,
  );
}

if (args.append) {
  const os = await import("node:os");
  const header = `\n## @rubric/verifiers\n\nMeasured ${new Date().toISOString().slice(0, 10)} on ${os.cpus()[0]?.model ?? "unknown CPU"}, ${os.availableParallelism()} cores, Node ${process.version}, by \`pnpm --filter @rubric/verifiers run bench --append ../../BENCHMARKS.md\` (bundled with tsup, run with plain node).\n\n`;
  appendFileSync(
    args.append,
    `${header}${lines.map((l) => (l.startsWith("#") || l.startsWith("|") || l === "" ? l : `- ${l}`)).join("\n")}\n`,
  );
}
