import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRng, type RngState, restoreRng } from "@rubric/core";
import { SidecarClient } from "@rubric/sidecar";
import { InferenceSession, Tensor } from "onnxruntime-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelCorruptError } from "../errors.js";
import { EOS_ID, byteBpeTokenizer, trainByteBpe } from "../tokenizer/byte-bpe.js";
import { pickToken } from "./decoding.js";
import { type ModelManifest, readManifest } from "./manifest.js";

// The sidecar's mu.export read back through this package's contract: readManifest, then the graphs
// in onnxruntime-node against the sidecar's own torch answers (mu.scores, mu.logits, mu.generate).

const TEXTS = [
  "Search[Lyon museums] found the Musée des Confluences.",
  "Criteria: names a museum; cites the source; answers in one line.",
  "Lookup[opening hours] returned 10:30 to 18:30.",
];
const TOKENIZER_FILE = trainByteBpe(TEXTS, 300);
const tokenizer = byteBpeTokenizer(TOKENIZER_FILE);
const VOCAB = tokenizer.vocabularySize;
const MODEL = { kind: "tiny", vocab_size: VOCAB, d_model: 32, n_heads: 4, n_layers: 2, max_seq_len: 48 } as const;
const TOKENIZER = { kind: "byte-bpe", files: { "tokenizer.json": JSON.stringify(TOKENIZER_FILE) } };
const SFT_STEPS = 6;
const TIMEOUT_MS = 240_000; // a guard for a busy 2-core machine, not a measurement
const TOLERANCE = 1e-4; // float32 in both runtimes

const int64 = (rows: number[][]) =>
  new Tensor("int64", BigInt64Array.from(rows.flat(), BigInt), [rows.length, rows[0]!.length]);
const worstDifference = (a: ArrayLike<number>, b: readonly number[]) => {
  expect(a.length).toBe(b.length);
  return Math.max(...b.map((x, i) => Math.abs(x - a[i]!)));
};
/** Row `row` of logits [B, V]. */
const rowOf = (logits: Tensor, row: number) => {
  const width = logits.dims[1]!;
  return (logits.data as Float32Array).subarray(row * width, (row + 1) * width);
};
type Cache = Record<string, Tensor>;
const pastOf = (outputs: Record<string, Tensor>, layers: number): Cache =>
  Object.fromEntries(
    Array.from({ length: layers }, (_, i) => [
      [`past_key_${i}`, outputs[`present_key_${i}`]!],
      [`past_value_${i}`, outputs[`present_value_${i}`]!],
    ]).flat(),
  );

/**
 * The generation loop over prefill.onnx and decode.onnx, written out inline to check the graphs'
 * contract on its own (RubricModel's generator is tested in rubric-model.test.ts): rows
 * left-padded, one token per row per decode call; a row that stopped is fed a masked pad, which
 * changes no other row. Tokens are chosen by `pickToken`, the one rule both backends follow.
 */
async function generateOverOnnx(
  version: string,
  manifest: ModelManifest,
  prompts: number[][],
  options: { maxNewTokens: number; eosId: number; temperature?: number; rng?: RngState[] },
) {
  const prefill = await InferenceSession.create(join(version, manifest.graphs.prefill.file));
  const decode = await InferenceSession.create(join(version, manifest.graphs.decode.file));
  const streams = options.rng?.map(restoreRng);
  const choose = (logits: ArrayLike<number>, row: number) =>
    pickToken(logits, streams ? options.temperature! : 0, streams?.[row]);
  const width = Math.max(...prompts.map((p) => p.length));
  let mask = prompts.map((p) => [...Array<number>(width - p.length).fill(0), ...p.map(() => 1)]);
  let outputs = await prefill.run({
    input_ids: int64(prompts.map((p) => [...Array<number>(width - p.length).fill(0), ...p])),
    attention_mask: int64(mask),
  });
  const ids: number[][] = prompts.map(() => []);
  const finished = prompts.map(() => false);
  const active = prompts.map(() => true);
  for (;;) {
    const fed: number[] = [];
    prompts.forEach((prompt, b) => {
      if (!active[b]) return void fed.push(0);
      const token = choose(rowOf(outputs.logits!, b), b);
      if (token === options.eosId) {
        finished[b] = true;
        active[b] = false;
      } else {
        ids[b]!.push(token);
        if (ids[b]!.length >= options.maxNewTokens || prompt.length + ids[b]!.length >= manifest.maxLengths.sequence)
          active[b] = false;
      }
      fed.push(active[b] ? token : 0);
    });
    if (!active.some(Boolean)) break;
    mask = mask.map((row, b) => [...row, active[b] ? 1 : 0]);
    outputs = await decode.run({
      input_ids: int64(fed.map((t) => [t])),
      attention_mask: int64(mask),
      ...pastOf(outputs, manifest.model.layers),
    });
  }
  await prefill.release();
  await decode.release();
  return { ids, finished };
}

describe("the sidecar's mu.export, read as a model directory", () => {
  let client: SidecarClient;
  let root: string;
  let version: string;
  let manifest: ModelManifest;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "arco-mu-export-"));
    client = await SidecarClient.start({ threads: 1 });
    await client.request("mu.init", { model: MODEL, seed: 5 });
    // Trained first, so the export is of learned weights (criteria ending in EOS), not of the seed.
    for (let i = 0; i < SFT_STEPS; i++)
      await client.request("mu.sft", {
        examples: [
          {
            prompt: tokenizer.encode(TEXTS[0]!),
            criteria: [...tokenizer.encode("names a museum"), EOS_ID],
            scores: [0.5, -0.2, 0.9],
          },
          {
            prompt: tokenizer.encode(TEXTS[2]!),
            criteria: [...tokenizer.encode("cites"), EOS_ID],
            scores: [-0.6, 0.1, 0],
          },
        ],
        learning_rate: 1e-2,
      });
    const exported = await client.request("mu.export", { dir: root, tokenizer: TOKENIZER, max_criteria_tokens: 16 });
    version = exported.dir;
    ({ manifest } = await readManifest(version)); // verifies every file's size and hash
    expect(exported.manifest).toEqual(manifest);
  }, TIMEOUT_MS);
  afterAll(async () => {
    await client?.close();
    if (root) await rm(root, { recursive: true, force: true });
  }, TIMEOUT_MS);

  it(
    "writes version directories that readManifest verifies, tokenizer included",
    async () => {
      expect(manifest).toMatchObject({
        format: "rubric-mu",
        formatVersion: 1,
        exportVersion: 1,
        k: 3,
        pooling: "prompt+criteria",
        opset: 17,
        tokenizer: { kind: "byte-bpe", files: ["tokenizer.json"] },
        maxLengths: { sequence: 48, criteria: 16 },
        model: { kind: "tiny", vocabularySize: VOCAB, layers: 2, heads: 4, headWidth: 8 },
        training: { steps: SFT_STEPS },
      });
      expect(Object.keys(manifest.files).sort()).toEqual([
        "decode.onnx",
        "mu.pt",
        "prefill.onnx",
        "score.onnx",
        "tokenizer.json",
      ]);
      expect(manifest.checkpoint).toBe("mu.pt");
      const shipped = byteBpeTokenizer(JSON.parse(await readFile(join(version, "tokenizer.json"), "utf8")));
      expect(shipped.encode(TEXTS[1]!)).toEqual(tokenizer.encode(TEXTS[1]!));

      const second = await client.request("mu.export", { dir: root, tokenizer: TOKENIZER, max_criteria_tokens: 16 });
      expect(second.version).toBe(2);
      expect((await readManifest(second.dir)).manifest.exportVersion).toBe(2);
      expect((await readdir(root)).sort()).toEqual(["v0001", "v0002"]);
      // A tokenizer file changed after the export is caught by its hash.
      await writeFile(join(second.dir, "tokenizer.json"), JSON.stringify({ ...TOKENIZER_FILE, merges: [] }));
      await expect(readManifest(second.dir)).rejects.toBeInstanceOf(ModelCorruptError);
    },
    TIMEOUT_MS,
  );

  it(
    "score.onnx gives mu.scores within 1e-4 on a right-padded batch",
    async () => {
      const steps = TEXTS.map((text, i) => ({
        prompt: tokenizer.encode(text).slice(0, 20 - 3 * i),
        criteria: [4 + i, 5, 6].slice(i),
      }));
      const { d } = await client.request("mu.scores", { steps });
      const width = Math.max(...steps.map((s) => s.prompt.length + s.criteria.length));
      const pad = (row: number[]) => [...row, ...Array<number>(width - row.length).fill(0)];
      const ids = steps.map((s) => pad([...s.prompt, ...s.criteria]));
      const mask = steps.map((s) => pad(Array<number>(s.prompt.length + s.criteria.length).fill(1)));
      const session = await InferenceSession.create(join(version, manifest.graphs.score.file));
      expect(session.inputNames).toEqual(manifest.graphs.score.inputs);
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
    "prefill.onnx then decode.onnx give mu.logits' last positions within 1e-4, left padding included",
    async () => {
      const long = tokenizer.encode(TEXTS[0]!).slice(0, 8);
      const short = tokenizer.encode(TEXTS[2]!).slice(0, 6);
      const [expectedLong] = (await client.request("mu.logits", { ids: [long] })).logits;
      const [expectedShort] = (await client.request("mu.logits", { ids: [short] })).logits;
      const prefill = await InferenceSession.create(join(version, manifest.graphs.prefill.file));
      const decode = await InferenceSession.create(join(version, manifest.graphs.decode.file));
      expect(prefill.outputNames).toEqual(manifest.graphs.prefill.outputs);
      expect(decode.inputNames).toEqual(manifest.graphs.decode.inputs);

      // Prefill 5 positions: the long row's first five tokens, the short row's first three left-padded by two.
      let mask = [
        [1, 1, 1, 1, 1],
        [0, 0, 1, 1, 1],
      ];
      let outputs = await prefill.run({
        input_ids: int64([long.slice(0, 5), [0, 0, ...short.slice(0, 3)]]),
        attention_mask: int64(mask),
      });
      expect(outputs.logits!.dims).toEqual([2, VOCAB]); // the last position only
      expect(worstDifference(rowOf(outputs.logits!, 0), expectedLong![4]!)).toBeLessThan(TOLERANCE);
      expect(worstDifference(rowOf(outputs.logits!, 1), expectedShort![2]!)).toBeLessThan(TOLERANCE);

      // Two decode calls feeding the cache back: two tokens at once (a chunk is causal within itself), then one.
      let fed = 0;
      for (const chunk of [2, 1]) {
        mask = mask.map((row) => [...row, ...Array<number>(chunk).fill(1)]);
        outputs = await decode.run({
          input_ids: int64([long.slice(5 + fed, 5 + fed + chunk), short.slice(3 + fed, 3 + fed + chunk)]),
          attention_mask: int64(mask),
          ...pastOf(outputs, manifest.model.layers),
        });
        fed += chunk;
        expect(outputs.logits!.dims).toEqual([2, VOCAB]);
        expect(outputs.present_key_0!.dims[2]).toBe(5 + fed); // the cache grew by the tokens fed
        expect(worstDifference(rowOf(outputs.logits!, 0), expectedLong![4 + fed]!)).toBeLessThan(TOLERANCE);
        expect(worstDifference(rowOf(outputs.logits!, 1), expectedShort![2 + fed]!)).toBeLessThan(TOLERANCE);
      }
      await prefill.release();
      await decode.release();
    },
    TIMEOUT_MS,
  );

  it(
    "mu.generate writes what a loop over prefill.onnx and decode.onnx writes, greedy and sampled",
    async () => {
      // 44 of 48 positions: this row stops at max_seq_len after 4 tokens unless it writes EOS first.
      const long = [...tokenizer.encode(TEXTS[1]!), ...tokenizer.encode(TEXTS[0]!)].slice(0, 44);
      expect(long.length).toBe(44);
      const prompts = [
        tokenizer.encode(TEXTS[0]!).slice(0, 30),
        tokenizer.encode(TEXTS[2]!).slice(0, 12),
        tokenizer.encode("Search[Lyon]"),
        long,
      ];
      const greedyTorch = await client.request("mu.generate", { prompts, max_new_tokens: 10, eos_id: EOS_ID });
      const greedyOnnx = await generateOverOnnx(version, manifest, prompts, { maxNewTokens: 10, eosId: EOS_ID });
      expect(greedyTorch).toEqual(greedyOnnx);
      expect(greedyTorch.ids[3]!.length).toBeLessThanOrEqual(4);
      expect(greedyTorch.finished).toContain(true); // SFT taught μ to end its criteria with EOS
      expect(greedyTorch.ids.flat().length).toBeGreaterThan(0);

      const rng = prompts.map((_, i) => createRng(`mu-generate-${i}`).state());
      const sampledTorch = await client.request("mu.generate", {
        prompts,
        max_new_tokens: 10,
        eos_id: EOS_ID,
        temperature: 1.2,
        rng,
      });
      const sampledOnnx = await generateOverOnnx(version, manifest, prompts, {
        maxNewTokens: 10,
        eosId: EOS_ID,
        temperature: 1.2,
        rng,
      });
      expect(sampledTorch).toEqual(sampledOnnx);
      expect(sampledTorch.ids).not.toEqual(greedyTorch.ids);
      expect(sampledTorch.ids[3]!.length === 4 || sampledTorch.finished[3]).toBe(true);
    },
    TIMEOUT_MS,
  );
});
