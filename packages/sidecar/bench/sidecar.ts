/**
 * Benchmarks of the Python training sidecar through its client, printed as a Markdown section.
 *
 *   npx tsx packages/sidecar/bench/sidecar.ts            from the repository root
 *
 * Rows: the round trip of a small request (target: median ≤ 5 ms); `gspo.loss` on 64 × 1,024
 * tokens in torch (round trip, and the sidecar's own compute time) against @rubric/core's
 * `gspoObjective` in this process, with their ratio; one `policy.step` of the tiny LM of the
 * learning test. Medians over repeated runs after warm-up, one sidecar with one torch thread.
 */
import { availableParallelism, cpus } from "node:os";
import { createRng, gspoObjective, quantile } from "@rubric/core";
import { SidecarClient } from "../src/client/client.js";

interface Timing {
  readonly medianMs: number;
  readonly p10Ms: number;
  readonly p90Ms: number;
  readonly runs: number;
}

async function time(fn: () => unknown, runs: number, warmup: number): Promise<Timing> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    await fn();
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return summarize(samples);
}

function summarize(samples: readonly number[]): Timing {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => quantile(sorted, q);
  return { medianMs: at(0.5), p10Ms: at(0.1), p90Ms: at(0.9), runs: sorted.length };
}

const megabytes = (chars: number) => `${(chars / 1e6).toFixed(1)} MB`;
const ms = (x: number) => (x >= 100 ? `${x.toFixed(0)} ms` : x >= 10 ? `${x.toFixed(1)} ms` : `${x.toFixed(2)} ms`);
const row = (name: string, t: Timing, target = "", met = "") =>
  `| ${name} | ${ms(t.medianMs)} | ${ms(t.p10Ms)} – ${ms(t.p90Ms)} | ${t.runs} | ${target} | ${met} |`;

/** 64 sequences × 1,024 tokens with ragged masks, as core's own benchmark of gspoObjective. */
function lossBatch() {
  const rng = createRng("bench:sidecar-loss");
  const K = 64;
  const T = 1024;
  const logpOld = Array.from({ length: K }, () => Array.from({ length: T }, () => -3 + 2.9 * rng.next()));
  const logpNew = logpOld.map((row) => row.map((x) => x + (rng.next() - 0.5) * 0.002));
  const mask = Array.from({ length: K }, () => {
    const length = 256 + rng.int(T - 256);
    return Array.from({ length: T }, (_, t) => (t < length ? 1 : 0));
  });
  const advantages = Array.from({ length: K }, () => rng.normal());
  return { logpNew, logpOld, mask, advantages };
}

async function main() {
  const client = await SidecarClient.start({ threads: 1 });
  try {
    const health = await client.request("health", {});
    const roundTrip = await time(() => client.request("health", {}), 300, 30);

    const batch = lossBatch();
    const typescript = await time(() => gspoObjective(batch), 30, 5);
    const wire = { logp_new: batch.logpNew, logp_old: batch.logpOld, mask: batch.mask, advantages: batch.advantages };
    const computeMs: number[] = [];
    const torchRoundTrip = await time(
      async () => computeMs.push((await client.request("gspo.loss", wire)).compute_ms),
      15,
      3,
    );
    const torchCompute = summarize(computeMs.slice(3));
    // The same numbers, or the comparison means nothing.
    const check = await client.request("gspo.loss", wire);
    const reference = gspoObjective(batch);
    if (Math.abs(check.loss - reference.loss) > 1e-9)
      throw new Error(`gspo.loss ${check.loss} differs from gspoObjective ${reference.loss}`);

    await client.request("policy.init", {
      model: { kind: "tiny", vocab_size: 10, d_model: 32, n_heads: 2, n_layers: 1, max_seq_len: 16 },
      seed: 11,
      eos_token_id: 1,
      max_new_tokens: 8,
    });
    const groups = [];
    for (let g = 0; g < 2; g++) {
      const { sequences } = await client.request("policy.sample", { prompt: [0], n: 8, seed: g });
      groups.push({
        prompt: [0],
        sequences: sequences.map((s, k) => ({
          tokens: s.tokens,
          logp_old: s.logprobs,
          advantage: k % 2 === 0 ? 1 : -1,
        })),
      });
    }
    const stepComputeMs: number[] = [];
    const step = await time(
      async () =>
        stepComputeMs.push(
          (
            await client.request("policy.step", {
              objective: "gspo",
              eps_low: 0.2,
              eps_high: 0.2,
              learning_rate: 1e-4,
              groups,
            })
          ).compute_ms,
        ),
      30,
      5,
    );
    const stepCompute = summarize(stepComputeMs.slice(5));
    const tokens = groups.reduce((n, g) => n + g.sequences.reduce((m, s) => m + s.tokens.length, 0), 0);

    const cpu = cpus()[0]?.model.trim() ?? "unknown CPU";
    const lines = [
      "## @rubric/gspo sidecar",
      "",
      `Measured ${new Date().toISOString().slice(0, 10)} on ${cpu}, ${availableParallelism()} cores, Node ${process.version}, torch ${health.torch} (CPU, 1 thread) in ${health.version ? `rubric-trainer ${health.version}` : "the sidecar"}, by \`pnpm --filter @rubric/gspo run bench:sidecar\`.`,
      "",
      "| benchmark | median | p10 – p90 | runs | target | met |",
      "| --- | ---: | ---: | ---: | --- | --- |",
      row("round trip: `health` over JSON lines", roundTrip, "≤ 5 ms", roundTrip.medianMs <= 5 ? "yes" : "no"),
      row("`gspoObjective` + gradient in TypeScript (@rubric/core), 64 × 1,024 tokens", typescript),
      row("`gspo.loss` + gradient in torch, round trip (JSON both ways)", torchRoundTrip),
      row("`gspo.loss` + gradient in torch, sidecar compute only", torchCompute),
      row(`\`policy.step\` (GSPO) of the tiny LM, 2 groups × 8 sequences, ${tokens} tokens, round trip`, step),
      row("`policy.step`, sidecar compute only", stepCompute),
      "",
      `torch / TypeScript for the GSPO loss on 64 × 1,024 tokens: ${(torchRoundTrip.medianMs / typescript.medianMs).toFixed(1)}× with the round trip, ` +
        `${(torchCompute.medianMs / typescript.medianMs).toFixed(1)}× for the computation alone (both in float64; the same loss to 1e-9).`,
      `The round trip of a large batch is mostly JSON: a ${megabytes(JSON.stringify(wire).length)} request and a ${megabytes(JSON.stringify(check).length)} reply, ` +
        "each printed by one side and parsed and schema-checked by the other.",
    ];
    console.log(lines.join("\n"));
  } finally {
    await client.close();
  }
}

await main();
