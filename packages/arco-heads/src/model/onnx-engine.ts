import { readFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { runEffect } from "@rubric/core/effect";
import { Effect, Exit, Scope } from "effect";
import type { InferenceSession, Tensor } from "onnxruntime-node";
import { ModelCorruptError, ModelRunError } from "../errors.js";
import { PAD_ID } from "../tokenizer/byte-bpe.js";
import type { DecodingPlan } from "./decoding.js";
import { decodeRows, type MuEngine } from "./engine.js";
import { checkGraphContract, type GraphName } from "./graph-contract.js";
import { type ModelManifest, poolStart, readModel } from "./manifest.js";
import { type Ort, onnxRuntime } from "./runtime.js";
import type { StepIds } from "./sequence.js";

/** How onnxruntime-node runs a model's graphs. */
export interface OnnxOptions {
  /** Threads per graph call; the machine's real core count by default (oversubscribing a small machine is much slower). */
  readonly threads?: number;
  /**
   * Threads of the decode graph, 1 by default: one new token per row is too little work to split,
   * and handing it between threads cost more than it saved (BENCHMARKS.md: 3.1 s instead of 4.4 s
   * for 256 steps' criteria on 2 cores).
   */
  readonly decodeThreads?: number;
  /** Rows per graph call. Moderate batches are fastest on a CPU: padding and [B, T, H] activations grow with B. Default 8 (measured best on 2 cores: BENCHMARKS.md). */
  readonly batchSize?: number;
}

/** One loaded export: its manifest, tokenizer and three sessions, released together. */
export interface OnnxVersion extends MuEngine {
  readonly directory: string;
  /** Releases the sessions; further calls fail. */
  close(): Promise<void>;
}

/**
 * Opens the export in `directory`: verifies every file against the manifest, reads the tokenizer,
 * and creates one onnxruntime session per graph, owned by an Effect scope so that a failure
 * halfway releases what was created. Graphs that are not what the manifest says (their names,
 * K, the vocabulary, the cache's shape, the positions they hold: `checkGraphContract`) are a
 * `ModelCorruptError`, caught here rather than read at the wrong offsets by every later call.
 */
export async function openOnnxVersion(directory: string, options: OnnxOptions = {}): Promise<OnnxVersion> {
  const { manifest, tokenizer } = await readModel(directory);
  const ort = await onnxRuntime();
  const threads = options.threads ?? availableParallelism();
  const batchSize = options.batchSize ?? 8;
  const sessionOptions = (name: GraphName): InferenceSession.SessionOptions => ({
    intraOpNumThreads: name === "decode" ? (options.decodeThreads ?? 1) : threads,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
  });
  const scope = Effect.runSync(Scope.make());
  const acquire = (name: GraphName) => {
    const graph = manifest.graphs[name];
    return Effect.acquireRelease(
      Effect.tryPromise({
        try: () => ort.InferenceSession.create(join(directory, graph.file), sessionOptions(name)),
        catch: (error) =>
          new ModelCorruptError(directory, graph.file, `onnxruntime cannot load it: ${(error as Error).message}`),
      }),
      (session) => Effect.promise(() => session.release().catch(() => undefined)),
    );
  };
  let sessions: Record<GraphName, InferenceSession>;
  try {
    // runEffect, not Effect.runPromise: a graph ORT cannot load rejects with its ModelCorruptError,
    // not wrapped in Effect's FiberFailure (which callers cannot catch by class, and the CLI printed as a stack dump).
    sessions = await runEffect(
      Scope.extend(
        Effect.all({ score: acquire("score"), prefill: acquire("prefill"), decode: acquire("decode") }),
        scope,
      ),
    );
    await checkGraphContract(ort, directory, manifest, sessions);
  } catch (error) {
    await Effect.runPromise(Scope.close(scope, Exit.void));
    throw error;
  }
  let closed = false;
  const run = async (name: GraphName, feeds: Record<string, Tensor>) => {
    try {
      return await sessions[name].run(feeds);
    } catch (error) {
      throw new ModelRunError(directory, name, (error as Error).message, error);
    }
  };
  return {
    directory,
    manifest,
    tokenizer,
    score: (rows) => scoreRows(ort, run, manifest, rows, batchSize),
    generate: (prompts, maxNewTokens, plan) => generateRows(ort, run, manifest, prompts, maxNewTokens, plan, batchSize),
    close: async () => {
      if (closed) return;
      closed = true;
      await Effect.runPromise(Scope.close(scope, Exit.void));
    },
  };
}

type Run = (name: GraphName, feeds: Record<string, Tensor>) => Promise<InferenceSession.OnnxValueMapType>;

const int64 = (ort: Ort, rows: readonly (readonly number[])[], width: number) => {
  const data = new BigInt64Array(rows.length * width);
  rows.forEach((row, r) => {
    row.forEach((value, c) => {
      data[r * width + c] = BigInt(value);
    });
  });
  return new ort.Tensor("int64", data, [rows.length, width]);
};

/** The rows `positions` of a float tensor batched on its first axis, in that order. */
function gatherRows(ort: Ort, tensor: Tensor, positions: readonly number[]): Tensor {
  const [, ...rest] = tensor.dims;
  const size = rest.reduce((a, b) => a * b, 1);
  const data = tensor.data as Float32Array;
  const out = new Float32Array(positions.length * size);
  positions.forEach((p, r) => {
    out.set(data.subarray(p * size, (p + 1) * size), r * size);
  });
  return new ort.Tensor("float32", out, [positions.length, ...rest]);
}

/** Batches of row indices, longest first, so that each batch pads little. */
function batchesByLength(lengths: readonly number[], size: number): number[][] {
  const order = lengths.map((_, i) => i).sort((a, b) => lengths[b]! - lengths[a]! || a - b);
  const batches: number[][] = [];
  for (let i = 0; i < order.length; i += size) batches.push(order.slice(i, i + size));
  return batches;
}

async function scoreRows(ort: Ort, run: Run, manifest: ModelManifest, rows: readonly StepIds[], batchSize: number) {
  const out: number[][] = new Array(rows.length);
  const lengths = rows.map((r) => r.prompt.length + r.criteria.length);
  for (const batch of batchesByLength(lengths, batchSize)) {
    const width = Math.max(...batch.map((i) => lengths[i]!));
    const pad = (row: number[]) => [...row, ...new Array<number>(width - row.length).fill(0)];
    const ids = batch.map((i) => pad([...rows[i]!.prompt, ...rows[i]!.criteria]));
    const mask = batch.map((i) => pad(new Array<number>(lengths[i]!).fill(1)));
    const pool = batch.map((i) => {
      const start = poolStart(manifest.pooling, rows[i]!.prompt.length, lengths[i]!);
      return pad([...new Array<number>(start).fill(0), ...new Array<number>(lengths[i]! - start).fill(1)]);
    });
    const result = await run("score", {
      input_ids: int64(ort, ids, width),
      attention_mask: int64(ort, mask, width),
      pool_mask: int64(ort, pool, width),
    });
    const scores = result[manifest.graphs.score.outputs[0]!]!.data as Float32Array;
    batch.forEach((i, b) => {
      out[i] = Array.from(scores.subarray(b * manifest.k, (b + 1) * manifest.k));
    });
  }
  return out;
}

async function generateRows(
  ort: Ort,
  run: Run,
  manifest: ModelManifest,
  prompts: readonly number[][],
  maxNewTokens: number,
  plan: DecodingPlan,
  batchSize: number,
) {
  const ids: number[][] = new Array(prompts.length);
  const finished: boolean[] = new Array(prompts.length);
  const vocabulary = manifest.model.vocabularySize;
  const [logitsName, ...presentNames] = manifest.graphs.prefill.outputs as [string, ...string[]];
  const pastNames = manifest.graphs.decode.inputs.slice(2);
  for (const batch of batchesByLength(
    prompts.map((p) => p.length),
    batchSize,
  )) {
    const width = Math.max(...batch.map((i) => prompts[i]!.length));
    // Left padding: every row's last prompt token sits in the last column, where the next token is read.
    const mask = batch.map((i) => [
      ...new Array<number>(width - prompts[i]!.length).fill(0),
      ...prompts[i]!.map(() => 1),
    ]);
    const rows = batch.map((i) => [...new Array<number>(width - prompts[i]!.length).fill(PAD_ID), ...prompts[i]!]);
    let out = await run("prefill", { input_ids: int64(ort, rows, width), attention_mask: int64(ort, mask, width) });
    // `physical[p]` is the batch row held at cache row p. Decoding is bound by copying the cache
    // in and out of every call, not by arithmetic, so rows that are done are dropped from it once
    // a quarter of the rows held are done (a row's cache is one contiguous block: cheap to gather).
    let physical = batch.map((_, b) => b);
    let cache = presentNames.map((name) => out[name]!);
    let logits = out[logitsName]!.data as Float32Array;
    const logitsOf = () => {
      const at = new Map(physical.map((b, p) => [b, p]));
      const data = logits;
      return (row: number) => {
        const p = at.get(row)!;
        return data.subarray(p * vocabulary, (p + 1) * vocabulary);
      };
    };
    const batchPlan: DecodingPlan = plan.streams
      ? { temperature: plan.temperature, streams: batch.map((i) => plan.streams![i]!) }
      : plan;
    const decoded = await decodeRows(
      logitsOf(),
      async (tokens, live) => {
        const keep = physical.filter((b) => live[b]);
        if (keep.length <= (physical.length * 3) / 4) {
          const positions = keep.map((b) => physical.indexOf(b));
          cache = cache.map((tensor) => gatherRows(ort, tensor, positions));
          physical = keep;
        }
        for (const b of physical) mask[b]!.push(live[b] ? 1 : 0);
        const feeds: Record<string, Tensor> = {
          input_ids: int64(
            ort,
            physical.map((b) => [tokens[b]!]),
            1,
          ),
          attention_mask: int64(
            ort,
            physical.map((b) => mask[b]!),
            mask[physical[0]!]!.length,
          ),
        };
        pastNames.forEach((name, j) => {
          feeds[name] = cache[j]!;
        });
        out = await run("decode", feeds);
        cache = presentNames.map((name) => out[name]!);
        logits = out[logitsName]!.data as Float32Array;
        return logitsOf();
      },
      batch.map((i) => prompts[i]!.length),
      maxNewTokens,
      manifest.maxLengths.sequence,
      batchPlan,
    );
    batch.forEach((i, b) => {
      ids[i] = decoded.ids[b]!;
      finished[i] = decoded.finished[b]!;
    });
  }
  return { ids, finished };
}
