import { createHash } from "node:crypto";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InferenceSession, Tensor } from "onnxruntime-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SidecarClient } from "./client.js";
import { MuManifestSchema } from "./protocol.js";

const VOCAB = 16;
const MODEL = { kind: "tiny", vocab_size: VOCAB, d_model: 32, n_heads: 4, n_layers: 2, max_seq_len: 32 } as const;
const TIMEOUT_MS = 180_000; // a guard for a busy 2-core machine, not a measurement
const TOLERANCE = 1e-4; // float32 in both runtimes

const int64 = (rows: number[][]) =>
  new Tensor("int64", BigInt64Array.from(rows.flat(), BigInt), [rows.length, rows[0]!.length]);
const worstDifference = (a: ArrayLike<number>, b: readonly number[]) => {
  expect(a.length).toBe(b.length);
  return Math.max(...b.map((x, i) => Math.abs(x - a[i]!)));
};

describe("μ's ONNX export", () => {
  let client: SidecarClient;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "rubric-mu-onnx-"));
    client = await SidecarClient.start({ threads: 1 });
    await client.request("mu.init", { model: MODEL, seed: 5 });
    // Trained first, so the export is of learned weights, not of the seeded initialisation.
    for (let i = 0; i < 5; i++)
      await client.request("mu.sft", {
        examples: [
          { prompt: [1, 2, 3], criteria: [4, 5, 6], scores: [0.5, -0.2, 0.9] },
          { prompt: [7, 8], criteria: [9], scores: [-0.6, 0.1, 0.0] },
        ],
        learning_rate: 1e-2,
      });
  }, TIMEOUT_MS);
  afterAll(async () => {
    await client.close();
    await rm(dir, { recursive: true, force: true });
  }, TIMEOUT_MS);

  it(
    "writes version directories whose manifest hashes every file",
    async () => {
      const first = await client.request("mu.export", { dir });
      const second = await client.request("mu.export", { dir });
      expect([first.version, second.version]).toEqual([1, 2]);
      expect((await readdir(dir)).sort()).toEqual(["v0001", "v0002"]);
      const manifest = MuManifestSchema.parse(JSON.parse(await readFile(join(second.dir, "manifest.json"), "utf8")));
      expect(manifest).toMatchObject({ version: 2, k: 3, vocab_size: VOCAB, pooling: "prompt+criteria", opset: 17 });
      for (const [name, digest] of Object.entries(manifest.files))
        expect(
          createHash("sha256")
            .update(await readFile(join(second.dir, name)))
            .digest("hex"),
        ).toBe(digest);
    },
    TIMEOUT_MS,
  );

  it(
    "score.onnx gives mu.scores within 1e-4 on a right-padded batch",
    async () => {
      const { dir: version, manifest } = await client.request("mu.export", { dir });
      const steps = [
        { prompt: [1, 2, 3], criteria: [4, 5, 6] },
        { prompt: [7, 8], criteria: [9] },
        { prompt: [10, 11, 12, 13, 14], criteria: [15, 1] },
      ];
      const { d } = await client.request("mu.scores", { steps });
      const width = Math.max(...steps.map((s) => s.prompt.length + s.criteria.length));
      const pad = (row: number[]) => [...row, ...Array<number>(width - row.length).fill(0)];
      const ids = steps.map((s) => pad([...s.prompt, ...s.criteria]));
      const mask = steps.map((s) => pad(Array<number>(s.prompt.length + s.criteria.length).fill(1)));
      const session = await InferenceSession.create(join(version, manifest.graphs.score!.file));
      expect(session.inputNames).toEqual(["input_ids", "attention_mask", "pool_mask"]);
      const { scores } = await session.run({
        input_ids: int64(ids),
        attention_mask: int64(mask),
        pool_mask: int64(mask),
      });
      expect(scores!.dims).toEqual([3, 3]);
      expect(worstDifference(scores!.data as Float32Array, d.flat())).toBeLessThan(TOLERANCE);
      await session.release();
    },
    TIMEOUT_MS,
  );

  it(
    "prefill.onnx then decode.onnx with the key/value cache give mu.logits within 1e-4, left padding included",
    async () => {
      const { dir: version, manifest } = await client.request("mu.export", { dir });
      const long = [1, 2, 3, 4, 5, 6, 7, 8];
      const short = [9, 10, 11, 12, 13, 14];
      const [expectedLong] = (await client.request("mu.logits", { ids: [long] })).logits;
      const [expectedShort] = (await client.request("mu.logits", { ids: [short] })).logits;
      const prefill = await InferenceSession.create(join(version, manifest.graphs.prefill!.file));
      const decode = await InferenceSession.create(join(version, manifest.graphs.decode!.file));
      const layers = manifest.model.n_layers;
      expect(decode.inputNames).toEqual(manifest.graphs.decode!.inputs);

      // Prefill 5 positions: the long row's first five tokens, the short row's first three left-padded by two.
      let mask = [
        [1, 1, 1, 1, 1],
        [0, 0, 1, 1, 1],
      ];
      const out = await prefill.run({
        input_ids: int64([long.slice(0, 5), [0, 0, ...short.slice(0, 3)]]),
        attention_mask: int64(mask),
      });
      const logitsAt = (t: Tensor, row: number, position: number) => {
        const length = t.dims[1]!;
        const start = (row * length + position) * VOCAB;
        return (t.data as Float32Array).subarray(start, start + VOCAB);
      };
      const gotLong: number[] = [];
      const gotShort: number[] = [];
      for (let p = 0; p < 5; p++) gotLong.push(...logitsAt(out.logits!, 0, p));
      for (let p = 2; p < 5; p++) gotShort.push(...logitsAt(out.logits!, 1, p));
      let cache = Array.from({ length: layers }, (_, i) => [out[`present_key_${i}`]!, out[`present_value_${i}`]!]);

      // Two decode calls feeding the cache back: two tokens at once (a chunk is causal within itself), then one.
      let fed = 0;
      for (const chunk of [2, 1]) {
        mask = mask.map((row) => [...row, ...Array<number>(chunk).fill(1)]);
        const feeds: Record<string, Tensor> = {
          input_ids: int64([long.slice(5 + fed, 5 + fed + chunk), short.slice(3 + fed, 3 + fed + chunk)]),
          attention_mask: int64(mask),
        };
        cache.forEach(([key, value], i) => {
          feeds[`past_key_${i}`] = key!;
          feeds[`past_value_${i}`] = value!;
        });
        const next = await decode.run(feeds);
        fed += chunk;
        expect(next.logits!.dims).toEqual([2, chunk, VOCAB]);
        expect(next.present_key_0!.dims[2]).toBe(5 + fed); // the cache grew by the tokens fed
        for (let p = 0; p < chunk; p++) {
          gotLong.push(...logitsAt(next.logits!, 0, p));
          gotShort.push(...logitsAt(next.logits!, 1, p));
        }
        cache = Array.from({ length: layers }, (_, i) => [next[`present_key_${i}`]!, next[`present_value_${i}`]!]);
      }
      expect(worstDifference(gotLong, expectedLong!.flat())).toBeLessThan(TOLERANCE);
      expect(worstDifference(gotShort, expectedShort!.flat())).toBeLessThan(TOLERANCE);
      await prefill.release();
      await decode.release();
    },
    TIMEOUT_MS,
  );
});
