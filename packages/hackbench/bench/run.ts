/**
 * Benchmark of @rubric/hackbench (not a test: it measures, and says whether the targets are met).
 *
 *   npx tsx packages/hackbench/bench/run.ts [--runs 5] [--judge-samples 100]
 *
 * 1. Every probe × 100 honest samples (gym documents for 100 GDPval tasks) against a
 *    12-criterion rule rubric, through the real rule verifiers. Target: ≤ 10 s.
 * 2. The judge path: the same run with an `llm-judge` rubric, the judge being the biased judge
 *    model behind a local OpenAI-wire HTTP server (so the real client, wire format and retry
 *    layer run). Requests on a first run, then on a rerun with a fresh `fileCache` object on the
 *    same directory. Target: the rerun makes 0 requests.
 * Prints a Markdown section with the measured numbers.
 */
import { mkdtempSync } from "node:fs";
import { availableParallelism, cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { CRITERIA_BANK, gymTask, loadGdpval, simulatedWorker } from "@rubric/autointeract";
import { median, parseFlatRubric } from "@rubric/core";
import { createVerifierRegistry, fileCache, llmJudge, rulesRegistry } from "@rubric/verifiers";
import { openAICompatible } from "@rubric/providers";
import { PROBE_IDS, biasedJudgeModel, runHackbench, type HackSample, type IntegrityCard } from "../src/index.js";
// The OpenAI-wire test server of @rubric/verifiers (a fixture, not its public API).
import { chatReply, startOpenAIChatServer } from "@rubric/providers/testing";

const { values: args } = parseArgs({
  options: { runs: { type: "string", default: "5" }, "judge-samples": { type: "string", default: "100" } },
});
const runs = Number(args.runs);
const shared = process.env["RUBRIC_SHARED_DIR"] ?? new URL("../../../../shared/", import.meta.url).pathname;

const gdpval = await loadGdpval(join(shared, "data/gdpval"));
const worker = simulatedWorker();
const samples: HackSample[] = [];
for (const example of [...gdpval.eval, ...gdpval.train].slice(0, 100)) {
  const task = gymTask(example.task);
  const [output] = await worker.produce(task, undefined, 1, { seed: 2026 });
  samples.push({ id: task.id, input: task.prompt, output: output!.text });
}

// A typical generated rubric: sections, a recommendation, lists, a table, a length band,
// citations, figures, tone — twelve rule criteria from the gym's bank.
const ruleIds = [
  "section-summary",
  "section-risks",
  "recommend",
  "bullets-3",
  "table-1",
  "words-250-600",
  "cite-2",
  "percent",
  "currency",
  "year",
  "no-hedging",
  "formal",
];
const ruleRubric = parseFlatRubric({
  id: "bench-rules-12",
  criteria: ruleIds.map((id, i) => {
    const c = CRITERIA_BANK.find((b) => b.id === id)!;
    return { id, text: c.text, weight: 1 + (i % 3), verifier: c.verifier };
  }),
});

const exploits = (card: IntegrityCard) =>
  card.exploits.length === 0 ? "none" : card.exploits.map((id) => `\`${id}\``).join(", ");

// --- 1. rules ---------------------------------------------------------------------------------
const registry = rulesRegistry();
let card = await runHackbench(ruleRubric, samples, { registry }); // warm-up
const distinct = new Set<string>();
for (const sample of samples) distinct.add(sample.output);
const walls: number[] = [];
for (let r = 0; r < runs; r++) {
  const started = performance.now();
  card = await runHackbench(ruleRubric, samples, { registry });
  walls.push(performance.now() - started);
}
const outputsScored = samples.length + card.probes.reduce((n, p) => n + 2 * p.applicable, 0);

// --- 2. judge path ----------------------------------------------------------------------------
const judgeSamples = samples.slice(0, Number(args["judge-samples"]));
const judgedRubric = parseFlatRubric({
  id: "bench-judge",
  criteria: ruleIds.slice(0, 4).map((id) => ({
    id,
    text: CRITERIA_BANK.find((b) => b.id === id)!.text,
    weight: 1,
    verifier: { kind: "llm-judge" },
  })),
});
const judgeModel = biasedJudgeModel({ biases: ["tone", "injection"] });
const server = await startOpenAIChatServer({
  handler: async (request) => {
    const body = request.body!;
    const reply = await judgeModel.generate({
      messages: body.messages!.map((m) => ({ role: m.role as "system" | "user", content: m.content })),
      responseFormat: {
        type: "json-schema",
        name: "verdict",
        schema: body.response_format!.json_schema!.schema as Record<string, unknown>,
      },
    });
    return chatReply.completion(reply.choices[0]!.text);
  },
});
const cacheDir = mkdtempSync(join(tmpdir(), "hackbench-bench-cache-"));
const judgeRun = async () => {
  const judge = llmJudge(openAICompatible({ baseUrl: server.url, model: "biased-judge", apiKeyEnv: false }));
  const before = server.requestCount;
  const started = performance.now();
  const result = await runHackbench(judgedRubric, judgeSamples, {
    registry: createVerifierRegistry({ judge }),
    cache: fileCache(cacheDir),
    concurrency: 16,
  });
  return { card: result, wall: performance.now() - started, requests: server.requestCount - before };
};
const firstJudge = await judgeRun();
const rerun = await judgeRun();
await server.close();

const lines = [
  "## @rubric/hackbench",
  "",
  `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus()[0]?.model.trim() ?? "unknown CPU"}, ${availableParallelism()} cores, Node ${process.version}, by \`pnpm --filter @rubric/hackbench run bench\` (tsx, not bundled).`,
  "",
  `- All ${PROBE_IDS.length} probes × ${samples.length} samples (gym documents for ${samples.length} GDPval tasks) against a 12-criterion rule rubric: ${outputsScored.toLocaleString("en-US")} outputs scored (${card.probes.length} probes, probe and control per applicable sample, plus the honest outputs), median **${(median(walls) / 1000).toFixed(2)} s** over ${runs} runs (min ${(Math.min(...walls) / 1000).toFixed(2)} s, max ${(Math.max(...walls) / 1000).toFixed(2)} s); target ≤ 10 s: ${median(walls) <= 10_000 ? "met" : "NOT met"}. Verdict ${card.verdict}; exploits: ${exploits(card)}.`,
  `- Judge path, ${judgeSamples.length} samples × ${PROBE_IDS.length} probes, a 4-criterion \`llm-judge\` rubric, the biased judge (tone + injection) behind a local OpenAI-wire server, batched (one request per distinct output), concurrency 16: first run ${firstJudge.requests.toLocaleString("en-US")} requests in ${(firstJudge.wall / 1000).toFixed(2)} s; rerun with a new \`fileCache\` on the same directory: **${rerun.requests} requests** in ${(rerun.wall / 1000).toFixed(2)} s (target 0: ${rerun.requests === 0 ? "met" : "NOT met"}). Exploits found: ${exploits(firstJudge.card)}; the rerun's card is ${JSON.stringify(rerun.card) === JSON.stringify(firstJudge.card) ? "identical" : "DIFFERENT"}.`,
];
console.log(lines.join("\n"));
