/**
 * Benchmarks of ARCO's rubric model μ served by onnxruntime-node (`RubricModel`) and by torch in
 * the sidecar, on the same export, printed as a Markdown section.
 *
 *   pnpm --filter @rubric/rlxar run bench:mu            (after `pnpm build`)
 *
 * The workload is the issue's: 64 trajectories of ARCO's QA agent shape (≈ 250 steps) built from
 * real HotpotQA training questions (bench/hotpot-steps.ts), μ of the default `rubric mu init`
 * shape (d 64, 2 layers, 4 heads, 1,024 positions), its tokenizer learnt from other training
 * questions' steps. μ is untrained (this is a speed benchmark): it writes up to as many tokens as
 * the longest teacher-style criteria text takes, about what a trained μ writes, and being
 * untrained it runs to that cap on almost every step, the worst case. Medians over repeated runs
 * after one warm-up, in one process.
 */
import { cpus } from "node:os";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  BOS_ID,
  RubricModel,
  criteriaIds,
  promptText,
  rateSteps,
  readModel,
  scoreSteps,
  stepPrompt,
} from "@rubric/arco-heads";
import { quantile } from "@rubric/core";
import { SidecarClient } from "@rubric/sidecar";
import { InferenceSession, Tensor } from "onnxruntime-node";
import { createMu, exportMu, sidecarMuEngine } from "../src/index.js";
import { hotpotSteps, teacherCriteria } from "./hotpot-steps.js";
import { seconds, time } from "./timing.js";

// biome-ignore lint/suspicious/noUndeclaredEnvVars: a bench script, not a turbo task
const shared = process.env["RUBRIC_SHARED_DIR"] ?? resolve(import.meta.dirname, "..", "..", "..", "..", "shared");
const THREADS = cpus().length;

const note = (text: string) => process.stderr.write(`[bench:mu ${(performance.now() / 1000).toFixed(1)} s] ${text}\n`);

async function main() {
  const steps = hotpotSteps(shared, 64);
  const corpus = hotpotSteps(shared, 60, 64).filter((_, i) => i % 4 === 3); // last steps: the longest prompts
  const root = await mkdtemp(join(tmpdir(), "bench-mu-"));
  const client = await SidecarClient.start({ threads: THREADS });
  try {
    note("creating μ");
    const first = await createMu(client, root, { seed: 1, corpus });
    const { tokenizer, manifest } = await readModel(first.directory);
    // μ is not trained here: this measures speed, and how long μ writes is fixed by a cap instead.
    // The cap is the longest teacher-style criteria text in this tokenizer (with EOS): what a
    // trained μ writes. An untrained μ rarely writes EOS, so every step runs to the cap: the worst case.
    const cap = Math.max(...steps.map((step) => criteriaIds(tokenizer, teacherCriteria(step), true).length));
    const options = { maxNewTokens: cap };
    const trained = first;

    const prompts = steps.map((s) => [BOS_ID, ...tokenizer.encode(promptText(stepPrompt(s)))].length);
    const meanPrompt = prompts.reduce((a, b) => a + b, 0) / prompts.length;

    const lines: string[] = [];
    const model = await RubricModel.load(root, { threads: THREADS });
    note("rate (onnx)");
    const full = await time(() => model.rateSteps(steps, options), 3);
    const written = full.last.map((r) => r.tokens);
    const meanWritten = written.reduce((a, b) => a + b, 0) / written.length;
    const parsed = full.last.filter((r) => r.adjusted === undefined).length;
    const criteria = full.last.map((r) => r.criteria);
    note("generate (onnx)");
    const generation = await time(() => model.generateCriteria(steps, options), 3);
    note("score (onnx)");
    const scoring = await time(() => model.scoreSteps(steps, criteria), 3);
    await model.close();

    const oneAtATime = await RubricModel.load(root, { threads: THREADS, batchSize: 1 });
    note("score batch 1");
    const single = await time(() => oneAtATime.scoreSteps(steps, criteria), 2);
    await oneAtATime.close();

    // Generation without the key/value cache: the prefill graph rerun on the whole sequence for every new token.
    const prefill = await InferenceSession.create(join(trained.directory, "prefill.onnx"), {
      intraOpNumThreads: THREADS,
      interOpNumThreads: 1,
    });
    const sample = steps.slice(0, 16);
    const sampleIds = sample.map((s) => [BOS_ID, ...tokenizer.encode(promptText(stepPrompt(s)))]);
    const noCacheTokens = 24;
    note("no cache");
    const noCache = await time(async () => {
      for (const ids of sampleIds) {
        const row = [...ids];
        for (let t = 0; t < noCacheTokens; t++) {
          const data = BigInt64Array.from(row, BigInt);
          const out = await prefill.run({
            input_ids: new Tensor("int64", data, [1, row.length]),
            attention_mask: new Tensor("int64", new BigInt64Array(row.length).fill(1n), [1, row.length]),
          });
          const logits = out["logits"]!.data as Float32Array;
          let best = 0;
          for (let v = 1; v < logits.length; v++) if (logits[v]! > logits[best]!) best = v;
          row.push(best);
        }
      }
    }, 1);
    await prefill.release();
    const cacheModel = await RubricModel.load(root, { threads: THREADS, batchSize: 1 });
    const cached = await time(() => cacheModel.generateCriteria(sample, { maxNewTokens: noCacheTokens }), 1);
    const cachedTokens = cached.last.reduce((n, r) => n + r.tokens, 0);
    await cacheModel.close();

    const torch = await sidecarMuEngine(client, trained.directory);
    note("torch rate");
    const torchRate = await time(() => rateSteps(torch, steps, options), 1);
    note("torch score");
    const torchScore = await time(() => scoreSteps(torch, steps, criteria), 2);

    // Reload latency: a new export appears; reload() verifies its hashes and opens its three sessions.
    const reloading = await RubricModel.load(root, { threads: THREADS });
    note("reloads");
    const reloads: number[] = [];
    for (let i = 0; i < 3; i++) {
      await exportMu(first.mu, root, tokenizer, manifest.maxLengths.criteria);
      const started = performance.now();
      await reloading.reload();
      reloads.push(performance.now() - started);
    }
    await reloading.close();
    reloads.sort((a, b) => a - b);

    const perSecond = (n: number, ms: number) => `${((n * 1000) / ms).toFixed(0)}/s`;
    lines.push(
      "## μ (arco-heads, rlxar)",
      "",
      `Command: \`pnpm --filter @rubric/rlxar run bench:mu\` (Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model.trim()}, ${THREADS} threads for onnxruntime-node and torch).`,
      `Workload: ${steps.length} steps of 64 HotpotQA trajectories; μ of ${manifest.model.parameters.toLocaleString("en")} parameters (d ${64}, ${manifest.model.layers} layers, vocabulary ${manifest.model.vocabularySize}); prompts of ${meanPrompt.toFixed(0)} tokens on average (longest ${Math.max(...prompts)}); μ (untrained) wrote ${meanWritten.toFixed(1)} tokens per step under a cap of ${cap}, the longest teacher-style criteria text with EOS (${parsed}/${steps.length} parsed as K criteria).`,
      "",
      "| measurement | median | rate | target |",
      "|---|---|---|---|",
      `| criteria + scores, ${steps.length} steps, onnxruntime-node (batches of 8) | ${seconds(full.median)} | ${perSecond(steps.length, full.median)} steps | ≤ 5 s: ${full.median <= 5000 ? "met" : "not met"} |`,
      `| of which criteria (generation, key/value cache) | ${seconds(generation.median)} | ${perSecond(steps.length, generation.median)} steps | |`,
      `| of which scores | ${seconds(scoring.median)} | ${perSecond(steps.length, scoring.median)} steps | |`,
      `| scores one step at a time (batch 1) | ${seconds(single.median)} | ${perSecond(steps.length, single.median)} steps | batches of 8 take ${(scoring.median / single.median).toFixed(2)}× the time of one at a time |`,
      `| generation with the cache, 16 steps × ≤ ${noCacheTokens} tokens, batch 1 | ${seconds(cached.median)} | ${perSecond(cachedTokens, cached.median)} tokens | |`,
      `| generation without the cache (prefill rerun per token), 16 × ${noCacheTokens} tokens | ${seconds(noCache.median)} | ${perSecond(16 * noCacheTokens, noCache.median)} tokens | the cache is ${(cachedTokens / cached.median / ((16 * noCacheTokens) / noCache.median)).toFixed(1)}× faster |`,
      `| criteria + scores, ${steps.length} steps, torch eager in the sidecar (batches of 8, JSON round trips included) | ${seconds(torchRate.median)} | ${perSecond(steps.length, torchRate.median)} steps | onnxruntime-node is ${(torchRate.median / full.median).toFixed(1)}× faster |`,
      `| scores, ${steps.length} steps, torch eager | ${seconds(torchScore.median)} | ${perSecond(steps.length, torchScore.median)} steps | onnxruntime-node is ${(torchScore.median / scoring.median).toFixed(1)}× faster |`,
      `| reload: a new export verified (SHA-256 of every file) and its 3 sessions opened | ${seconds(quantile(reloads, 0.5))} | | |`,
      "",
    );
    process.stdout.write(`${lines.join("\n")}\n`);
  } finally {
    await client.close();
    await rm(root, { recursive: true, force: true });
  }
}

await main();
