import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ModelCorruptError,
  type ModelManifest,
  RubricModel,
  rateSteps,
  readModel,
  scoreSteps,
  stepPrompt,
} from "@rubric/arco-heads";
import { SidecarClient } from "@rubric/sidecar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CRITERIA, STEPS, sftExamples } from "./__fixtures__/steps.js";
import {
  createMu,
  exportMu,
  type PretrainEpoch,
  pretrainMu,
  type SftEpoch,
  sftMu,
  sidecarMuEngine,
} from "./sidecar-mu.js";

const TIMEOUT_MS = 300_000; // a guard for a busy 2-core machine, not a measurement
const TOLERANCE = 1e-4; // float32 in both runtimes

const steps = STEPS;
/** The μ every test here creates, before any training. */
const SMALL_MU = {
  k: 3,
  seed: 9,
  shape: { dModel: 32, heads: 4, layers: 2, maxSequence: 512 },
  maxCriteriaTokens: 96,
  vocabularySize: 420,
  corpus: steps,
} as const;

describe("μ through the sidecar (torch) and onnxruntime-node", () => {
  let client: SidecarClient;
  let root: string;
  let latest: string;
  let epochs: SftEpoch[];
  const examples = sftExamples(steps, CRITERIA, [0.3, -0.1, 0.5]);

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "rlxar-mu-"));
    client = await SidecarClient.start({ threads: 1 });
    const first = await createMu(client, root, SMALL_MU);
    const { tokenizer } = await readModel(first.directory);
    // Fine-tuned so that the criteria are not the untrained model's noise.
    epochs = await sftMu(first.mu, tokenizer, examples, { epochs: 60, batchSize: 4, learningRate: 3e-3, seed: 2 });
    latest = (await exportMu(first.mu, root, tokenizer, 96)).directory;
  }, TIMEOUT_MS);
  afterAll(async () => {
    await client?.close();
    await rm(root, { recursive: true, force: true });
  }, TIMEOUT_MS);

  it("sftMu runs its epochs and the loss falls", () => {
    expect(epochs.map((e) => e.epoch)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    expect(epochs.at(-1)!.loss).toBeLessThan(epochs[0]!.loss / 4);
  });

  it(
    "createMu writes version 1 with its tokenizer and checkpoint, every file hashed",
    async () => {
      expect((await readdir(root)).sort()).toEqual(["v0001", "v0002"]);
      const { manifest } = await readModel(join(root, "v0001"));
      expect(manifest).toMatchObject({
        exportVersion: 1,
        k: 3,
        checkpoint: "mu.pt",
        tokenizer: { files: ["tokenizer.json"] },
      });
      expect(Object.keys(manifest.files).sort()).toEqual(
        ["decode.onnx", "mu.pt", "prefill.onnx", "score.onnx", "tokenizer.json"].sort(),
      );
    },
    TIMEOUT_MS,
  );

  for (const decoding of [{ mode: "greedy" } as const, { mode: "sampled", seed: 4, temperature: 1 } as const]) {
    it(
      `both backends write the same criteria and give the same scores (${decoding.mode})`,
      async () => {
        const model = await RubricModel.load(root, { threads: 1 });
        expect(model.directory).toBe(latest);
        const onnx = await model.rateSteps(steps, { decoding });
        await model.close();
        const torch = await rateSteps(await sidecarMuEngine(client, latest), steps, { decoding });
        expect(torch.map((r) => r.text)).toEqual(onnx.map((r) => r.text));
        expect(torch.map((r) => r.criteria)).toEqual(onnx.map((r) => r.criteria));
        for (let i = 0; i < steps.length; i++)
          for (let k = 0; k < 3; k++)
            expect(Math.abs(torch[i]!.scores[k]! - onnx[i]!.scores[k]!)).toBeLessThan(TOLERANCE);
        if (decoding.mode === "greedy") expect(onnx.map((r) => r.criteria)).toContainEqual(CRITERIA);
      },
      TIMEOUT_MS,
    );
  }

  it(
    "a μ that reads the last position alone (pooling last) scores the same on both backends",
    async () => {
      const lastRoot = await mkdtemp(join(tmpdir(), "rlxar-mu-last-"));
      try {
        const last = await createMu(client, lastRoot, { ...SMALL_MU, pooling: "last" });
        expect((await readModel(last.directory)).manifest.pooling).toBe("last");
        const criteria = steps.map(() => CRITERIA);
        const model = await RubricModel.load(last.directory, { threads: 1 });
        const onnx = await model.scoreSteps(steps, criteria);
        await model.close();
        const torch = await scoreSteps(await sidecarMuEngine(client, last.directory), steps, criteria);
        for (let i = 0; i < steps.length; i++)
          for (let k = 0; k < 3; k++)
            expect(Math.abs(torch[i]!.scores[k]! - onnx[i]!.scores[k]!)).toBeLessThan(TOLERANCE);
        // (That torch reads the last position and nothing else is the sidecar's own test, test_mu.py.)
      } finally {
        await rm(lastRoot, { recursive: true, force: true });
      }
    },
    TIMEOUT_MS,
  );

  it(
    "the torch backend refuses a checkpoint of other weights than the manifest's",
    async () => {
      // v0001's manifest names the untrained weights; loading it after training still matches its own file.
      await expect(sidecarMuEngine(client, join(root, "v0001"))).resolves.toBeDefined();
      const copy = join(root, "v0009");
      await cp(latest, copy, { recursive: true });
      const manifest = JSON.parse(await readFile(join(copy, "manifest.json"), "utf8"));
      manifest.training.fingerprint = "0".repeat(manifest.training.fingerprint.length);
      await writeFile(join(copy, "manifest.json"), JSON.stringify(manifest));
      await expect(sidecarMuEngine(client, copy)).rejects.toBeInstanceOf(ModelCorruptError);
      await rm(copy, { recursive: true });
    },
    TIMEOUT_MS,
  );

  it(
    "the torch backend refuses a manifest that does not describe its checkpoint: K, vocabulary, pooling, positions (issue 29 item 3)",
    async () => {
      const edits: [string, (m: ModelManifest) => void, RegExp][] = [
        ["k 5", (m) => (m.k = 5), /manifest\.json: k is 5 but the μ in mu\.pt has 3/],
        ["k 1", (m) => (m.k = 1), /manifest\.json: k is 1 but the μ in mu\.pt has 3/],
        [
          "vocabulary",
          (m) => (m.model.vocabularySize += 7),
          /manifest\.json: model\.vocabularySize is \d+ but the μ in mu\.pt has \d+/,
        ],
        [
          "pooling",
          (m) => (m.pooling = "criteria"),
          /manifest\.json: pooling is "criteria" but the μ in mu\.pt has "prompt\+criteria"/,
        ],
        [
          "positions",
          (m) => (m.maxLengths.sequence = 513),
          /manifest\.json: maxLengths\.sequence is 513 but mu\.pt holds a μ of 512 positions/,
        ],
      ];
      for (const [name, edit, message] of edits) {
        // The manifest is not hashed: an edited copy passes readManifest, and only this check stands in the way.
        const copy = join(root, `v0009-${name.replace(" ", "")}`);
        await cp(latest, copy, { recursive: true });
        const manifest = JSON.parse(await readFile(join(copy, "manifest.json"), "utf8")) as ModelManifest;
        edit(manifest);
        await writeFile(join(copy, "manifest.json"), JSON.stringify(manifest));
        const error = await sidecarMuEngine(client, copy).catch((e: unknown) => e);
        expect(error, name).toBeInstanceOf(ModelCorruptError);
        expect((error as ModelCorruptError).file, name).toBe("manifest.json");
        expect((error as Error).message, name).toMatch(message);
        await rm(copy, { recursive: true });
      }
    },
    TIMEOUT_MS,
  );

  it(
    "createMu pretrains μ as a language model before its warm-up when asked: windows of its positions, the CE falls",
    async () => {
      // The steps' own text, each well over one window of 64 positions.
      const texts = steps.map((step) => [step.task, ...step.history.map((turn) => turn.observation)].join("\n"));
      const lmRoot = await mkdtemp(join(tmpdir(), "rlxar-lm-"));
      try {
        const pretrained: PretrainEpoch[] = [];
        const { directory, mu } = await createMu(client, lmRoot, {
          k: 3,
          seed: 4,
          shape: { dModel: 16, heads: 2, layers: 1, maxSequence: 64 },
          maxCriteriaTokens: 16,
          vocabularySize: 400,
          corpus: steps,
          pretrain: {
            texts,
            epochs: 12,
            batchSize: 4,
            learningRate: 1e-2,
            seed: 1,
            onEpoch: (e) => pretrained.push(e),
          },
        });
        const { tokenizer, manifest } = await readModel(directory);
        // Every token but each window's first is predicted: <bos> + the text, cut at 64.
        const lengths = texts.map((text) => 1 + tokenizer.encode(text).length);
        expect(Math.max(...lengths)).toBeGreaterThan(64);
        const predicted = lengths.reduce((sum, n) => sum + n - Math.ceil(n / 64), 0);
        expect(pretrained.map((e) => e.tokens)).toEqual(Array.from({ length: 12 }, () => predicted));
        expect(pretrained.at(-1)!.ce).toBeLessThan(0.7 * pretrained[0]!.ce);
        // Pretraining steps count as μ's training steps, and its export says so.
        expect(manifest.training.steps).toBe(mu.summary.steps);
        expect(mu.summary.steps).toBeGreaterThanOrEqual(12);
        await expect(pretrainMu(mu, tokenizer, ["", ""], 64)).rejects.toThrow(
          "pretrain.texts: expected a text of at least one token",
        );
      } finally {
        await rm(lmRoot, { recursive: true, force: true });
      }
    },
    TIMEOUT_MS,
  );

  it(
    "createMu fine-tunes the no-rubric ablation (K = 1, no criteria) toward its scalar, and refuses a wrong count",
    async () => {
      const scalar = examples.map((example, t) => ({
        ...example,
        // μ scores a K = 1 export's steps with the K = 1 prompt: the examples must carry it.
        messages: stepPrompt(steps[t]!, { k: 1 }),
        criteria: [],
        target: "",
        scores: [t === 0 ? 0.8 : -0.6],
      }));
      const prmRoot = await mkdtemp(join(tmpdir(), "rlxar-prm-"));
      try {
        const { directory } = await createMu(client, prmRoot, {
          k: 1,
          seed: 3,
          shape: { dModel: 16, heads: 2, layers: 1, maxSequence: 512 },
          maxCriteriaTokens: 16, // no criteria to write: the prompt keeps its whole history
          vocabularySize: 400,
          corpus: steps,
          sft: { examples: scalar, epochs: 80, batchSize: 4, learningRate: 3e-3, headLearningRate: 1e-2, seed: 1 },
        });
        const model = await RubricModel.load(directory, { threads: 1 });
        const [first, other] = await model.scoreSteps(steps.slice(0, 2), [[], []]);
        await model.close();
        expect(first!.scores).toHaveLength(1);
        expect(first!.s).toBeGreaterThan(0.5);
        expect(other!.s).toBeLessThan(-0.3);
        await expect(
          createMu(client, prmRoot, { k: 1, sft: { examples: [{ ...scalar[0]!, criteria: ["one", "two"] }] } }),
        ).rejects.toThrow("sft.examples[0]: expected K = 1 scores, and K criteria or none (no rubric)");
        // The PRM row's old bug: a K = 1 μ warmed up on the K = 3 step prompt.
        await expect(
          createMu(client, prmRoot, { k: 1, sft: { examples: [{ ...scalar[1]!, messages: examples[1]!.messages }] } }),
        ).rejects.toThrow("sft.examples[0]: its prompt asks for 3 criteria but this μ writes K = 1");
        // Step 1's prompt (over 400 tokens) would be scored with its oldest turn dropped.
        await expect(
          createMu(client, prmRoot, {
            k: 1,
            shape: { maxSequence: 512 },
            vocabularySize: 400,
            corpus: steps,
            sft: { examples: scalar },
          }),
        ).rejects.toThrow(/sft\.examples\[1\]: its prompt takes \d+ tokens, more than the 384 the export leaves/);
      } finally {
        await rm(prmRoot, { recursive: true, force: true });
      }
    },
    TIMEOUT_MS,
  );
});
