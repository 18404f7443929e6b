import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ArcoInputError, BOS_ID, RubricModel, rateSteps, readModel } from "@rubric/arco-heads";
import { SidecarClient } from "@rubric/sidecar";
import { getLlama, type Llama, type LlamaModel, LlamaLogLevel } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CRITERIA, STEPS, sftExamples } from "./__fixtures__/steps.js";
import { createMu, exportMu, llamaTokenizer, sftMu, sidecarMuEngine } from "./sidecar-mu.js";

const TIMEOUT_MS = 300_000; // a guard for a busy 2-core machine, not a measurement
const TOLERANCE = 1e-4; // float32 in both runtimes
const SHARED = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../shared/", import.meta.url));
const STORIES = join(SHARED, "models/stories260K.gguf");

describe("μ on a pretrained llama (stories260K, read from its GGUF file)", () => {
  let client: SidecarClient;
  let root: string;
  let llama: Llama;
  let reference: LlamaModel;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "rlxar-llama-mu-"));
    client = await SidecarClient.start({ threads: 1 });
    llama = await getLlama({ build: "never", gpu: false, logLevel: LlamaLogLevel.error, progressLogs: false });
    reference = await llama.loadModel({ modelPath: STORIES });
  }, TIMEOUT_MS);
  afterAll(async () => {
    await client?.close();
    await reference?.dispose();
    await llama?.dispose();
    await rm(root, { recursive: true, force: true });
  }, TIMEOUT_MS);

  it(
    "the exported graphs continue a story as llama.cpp does, from the ids llama.cpp tokenizes",
    async () => {
      const dir = join(root, "untrained");
      const created = await createMu(client, dir, {
        backbone: { gguf: STORIES },
        k: 2,
        seed: 1,
        shape: { maxSequence: 256 },
        maxCriteriaTokens: 64,
      });
      expect(created.mu.summary).toMatchObject({ vocab_size: 512, max_seq_len: 256, k: 2 });
      const { manifest, tokenizer } = await readModel(created.directory);
      expect(manifest.tokenizer.kind).toBe("sentencepiece");
      expect(manifest.model).toMatchObject({ kind: "llama", vocabularySize: 512, layers: 5, heads: 8, headWidth: 8 });
      const text = "Once upon a time, there was a little dog named Max. He";
      const prompt = reference.tokenize(text);
      expect(tokenizer.encode(text)).toEqual([...prompt]);
      // llama.cpp's greedy continuation of <s> + the text, 24 tokens.
      const context = await reference.createContext({ contextSize: 256, threads: 1 });
      const expected: number[] = [];
      try {
        for await (const token of context.getSequence().evaluate([BOS_ID, ...prompt] as never, { temperature: 0 })) {
          expected.push(token as number);
          if (expected.length === 24) break;
        }
      } finally {
        await context.dispose();
      }
      // Through torch here; the next test holds onnxruntime-node's criteria and scores to torch's.
      const engine = await sidecarMuEngine(client, created.directory);
      const { ids } = await engine.generate([[BOS_ID, ...prompt]], 24, { temperature: 0 });
      expect(ids[0]).toEqual(expected.slice(0, ids[0]!.length));
      expect(ids[0]!.length).toBeGreaterThan(8); // a story, not an immediate end
      expect(tokenizer.decode(ids[0]!)).toBe(reference.detokenize(ids[0]! as never));
    },
    TIMEOUT_MS,
  );

  it(
    "μ-SFT trains it, and onnxruntime-node and torch write the same criteria and give the same scores",
    async () => {
      // Two steps: the fixed wording of a step prompt alone is ~300 of stories260K's pieces.
      const steps = STEPS.slice(0, 2);
      const dir = join(root, "trained");
      const created = await createMu(client, dir, {
        backbone: { gguf: STORIES },
        k: 3,
        seed: 2,
        shape: { maxSequence: 1024 },
        maxCriteriaTokens: 32,
      });
      const { tokenizer } = await readModel(created.directory);
      const epochs = await sftMu(created.mu, tokenizer, sftExamples(steps, CRITERIA, [0.3, -0.1, 0.5]), {
        epochs: 4,
        batchSize: 2,
        learningRate: 3e-3,
        seed: 2,
      });
      expect(epochs.at(-1)!.loss).toBeLessThan(epochs[0]!.loss);
      const latest = (await exportMu(created.mu, dir, tokenizer, 32)).directory;
      const model = await RubricModel.load(dir, { threads: 1 });
      const onnx = await model.rateSteps(steps);
      await model.close();
      const torch = await rateSteps(await sidecarMuEngine(client, latest), steps);
      expect(onnx.map((r) => r.tokens)).toEqual([32, 32]); // the whole budget: not yet a μ that stops
      expect(torch.map((r) => r.text)).toEqual(onnx.map((r) => r.text));
      for (let i = 0; i < steps.length; i++)
        for (let k = 0; k < 3; k++)
          expect(Math.abs(torch[i]!.scores[k]! - onnx[i]!.scores[k]!)).toBeLessThan(TOLERANCE);
    },
    TIMEOUT_MS,
  );

  it(
    "refuses, by name, what sizes or tokenizes the small μ, and a vocabulary framed with other ids",
    async () => {
      for (const [path, extra] of [
        ["shape.dModel", { shape: { dModel: 32 } }],
        ["vocabularySize", { vocabularySize: 300 }],
        ["corpus", { corpus: STEPS }],
      ] as const) {
        const refused = createMu(client, join(root, "refused"), { backbone: { gguf: STORIES }, ...extra });
        await expect(refused).rejects.toThrow(ArcoInputError);
        await expect(refused).rejects.toThrow(
          new RegExp(`^${path.replace(".", "\\.")}: does not apply with a llama backbone`),
        );
      }
      const base = {
        tokens: ["<unk>", "<s>", "</s>"],
        scores: [0, 0, 0],
        types: [2, 3, 3],
        unknown: 0,
        add_space_prefix: true,
      };
      expect(() => llamaTokenizer({ ...base, bos: 2, eos: 1 }, "odd.gguf")).toThrow(
        /backbone\.gguf: odd\.gguf: its vocabulary begins sequences with id 2 and ends them with 1; μ frames them with 1 and 2/,
      );
      const missing = createMu(client, join(root, "missing"), { backbone: { gguf: join(root, "none.gguf") } });
      await expect(missing).rejects.toThrow(/params\.model\.gguf: .*none\.gguf: no such file/);
    },
    TIMEOUT_MS,
  );
});
