// μ served by the sidecar itself (SidecarMuModel): the small μ with its byte-level BPE runs the
// same path a transformers μ runs with its own tokenizer (sidecar-mu-model-transformers.test.ts),
// so this file covers every line but the tokenizer's requests.
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  BOS_ID,
  type ByteBpeTokenizer,
  criteriaTarget,
  EOS_ID,
  promptText,
  RubricModel,
  readModel,
  type Step,
  stepPrompt,
} from "@rubric/arco-heads";
import { RemoteMu, SidecarClient } from "@rubric/sidecar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MuCritic } from "../critic/mu-critic.js";
import { RlxarFileError, RlxarInputError } from "../errors.js";
import { KEYS, lookupEnvironment, TablePolicy } from "../__fixtures__/lookup.js";
import { episodeSteps, rollout } from "../rollout/rollout.js";
import { CRITERIA, STEPS, sftExamples } from "./__fixtures__/steps.js";
import { createMu } from "./sidecar-mu.js";
import { SIDECAR_MU_FILE, SidecarMuModel } from "./sidecar-mu-model.js";

const TIMEOUT_MS = 300_000; // a guard for a busy 2-core machine, not a measurement
const TOLERANCE = 1e-4; // float32 in both runtimes

const steps = STEPS;
const examples = sftExamples(steps, CRITERIA, [0.3, -0.1, 0.5], 3);

describe("SidecarMuModel: μ served by the sidecar", () => {
  let client: SidecarClient;
  let dir: string;
  let exported: string;
  let tokenizer: ByteBpeTokenizer;
  let onnx: RubricModel;
  let served: SidecarMuModel;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "rlxar-served-mu-"));
    client = await SidecarClient.start({ threads: 1 });
    const created = await createMu(client, join(dir, "onnx"), {
      k: 3,
      seed: 9,
      shape: { dModel: 32, heads: 4, layers: 2, maxSequence: 768 },
      maxCriteriaTokens: 96,
      vocabularySize: 420,
      corpus: steps,
      sft: { examples, epochs: 40, batchSize: 4, learningRate: 3e-3, seed: 2 },
    });
    exported = created.directory;
    const read = (await readModel(exported)).tokenizer;
    if (read.kind !== "byte-bpe") throw new Error(`expected the small μ's byte-level BPE, got ${read.kind}`);
    tokenizer = read;
    onnx = await RubricModel.load(exported, { threads: 1 });
    served = await SidecarMuModel.create(created.mu, join(dir, "served"), {
      tokenizer,
      maxSequence: 768,
      maxCriteriaTokens: 96,
    });
  }, TIMEOUT_MS);
  afterAll(async () => {
    await onnx?.close();
    await client?.close();
    await rm(dir, { recursive: true, force: true });
  }, TIMEOUT_MS);

  it(
    "writes and scores the criteria the ONNX export of the same weights writes and scores",
    async () => {
      const [fromOnnx, fromSidecar] = [await onnx.rateSteps(steps), await served.rateSteps(steps)];
      expect(fromSidecar.map((r) => r.text)).toEqual(fromOnnx.map((r) => r.text));
      expect(fromSidecar.map((r) => r.criteria)).toEqual(fromOnnx.map((r) => r.criteria));
      // Fine-tuned: μ writes the teacher's criteria, not noise.
      expect(fromSidecar[0]!.criteria).toEqual(CRITERIA);
      expect(fromSidecar.map((r) => r.ids)).toEqual(fromOnnx.map((r) => r.ids));
      fromSidecar.forEach((rating, i) => {
        rating.scores.forEach((d, k) => expect(d).toBeCloseTo(fromOnnx[i]!.scores[k]!, 3));
        expect(Math.abs(rating.s - fromOnnx[i]!.s)).toBeLessThan(TOLERANCE);
        expect(rating.tokens).toBe(fromOnnx[i]!.tokens);
      });
      // Scoring given criteria reads what rating read.
      const scored = await served.scoreSteps(
        steps,
        fromSidecar.map((r) => r.criteria),
      );
      expect(scored.map((r) => r.s)).toEqual(fromSidecar.map((r) => r.s));
    },
    TIMEOUT_MS,
  );

  it(
    "leaves the oldest turns out of a prompt that does not fit, as the ONNX path does",
    async () => {
      const length = (step: Step) => 1 + tokenizer.encode(promptText(stepPrompt(step, { k: 3 }))).length;
      const whole = length(steps[2]!);
      const bare = length({ ...steps[2]!, history: [] });
      // Room for the question and some of its history, not all of it.
      const budget = Math.floor((whole + bare) / 2);
      const small = await SidecarMuModel.create(served.mu, join(dir, "small"), {
        tokenizer,
        maxSequence: budget + 96,
        maxCriteriaTokens: 96,
      });
      const [rated] = await small.rateSteps([steps[2]!], { maxNewTokens: 8 });
      expect(rated!.droppedTurns).toBeGreaterThan(0);
      const prompt = stepPrompt({ ...steps[2]!, history: steps[2]!.history.slice(rated!.droppedTurns) }, { k: 3 });
      expect(rated!.ids.prompt).toEqual([BOS_ID, ...tokenizer.encode(promptText(prompt))]);
      expect(rated!.ids.prompt.length).toBeLessThanOrEqual(budget);
      const tooLong = { ...steps[0]!, task: "why ".repeat(400) };
      const error = await small.rateSteps([steps[0]!, tooLong]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RlxarInputError);
      expect((error as RlxarInputError).message).toContain(`more than the ${budget} this μ leaves for a prompt`);
      expect((error as RlxarInputError).message).toMatch(/^steps\[1\]: .* with no history/);
      await expect(small.rateSteps(steps, { maxNewTokens: 97 })).rejects.toThrow(/maxNewTokens.*\[1, 96\]/);
    },
    TIMEOUT_MS,
  );

  it(
    "builds μ-SFT rows: the prompt as a step reads, the criteria closed by the end token",
    async () => {
      const rows = await served.sftRows(examples);
      expect(rows[0]!.prompt).toEqual([BOS_ID, ...tokenizer.encode(promptText(examples[0]!.messages))]);
      expect(rows[0]!.criteria).toEqual([...tokenizer.encode(criteriaTarget(CRITERIA)), EOS_ID]);
      expect(rows[0]!.scores).toEqual([0.3, -0.1, 0.5]);
      const none = await served.sftRows([{ ...examples[0]!, criteria: [], target: "" }]);
      expect(none[0]!.criteria).toEqual([]);
      const long = { ...examples[0]!, messages: [{ role: "user" as const, content: "word ".repeat(2000) }] };
      await expect(served.sftRows([examples[1]!, long])).rejects.toThrow(/examples\[1\].*more than the 672/);
      await expect(served.sftRows([{ ...examples[0]!, scores: [1] }])).rejects.toThrow(/examples\[0\]\.scores/);
    },
    TIMEOUT_MS,
  );

  it(
    "co-evolves under MuCritic: mu.step changes the served μ in place and saves the next version, which opens back",
    async () => {
      const root = join(dir, "critic");
      const model = await SidecarMuModel.create(served.mu, root, {
        tokenizer,
        maxSequence: 768,
        maxCriteriaTokens: 96,
      });
      const critic = await MuCritic.open({
        model,
        mu: model.mu,
        update: { learningRate: 3e-3, headLearningRate: 3e-2, beta: 0.05 },
        maxNewTokens: 32,
      });
      const tasks = KEYS.slice(0, 2).map((key) => ({ id: key, key }));
      const batch = await rollout(lookupEnvironment(), tasks, new TablePolicy(), { temperature: 1, seed: 4 });
      await critic.freezeReference();
      const before = await critic.rate(batch);
      const update = await critic.update(batch, before);
      expect(update.version).toBe(2);
      expect((await readdir(root)).sort()).toEqual(["v0001", "v0002"]);
      const after = await critic.rate(batch);
      expect(after[0]![0]!.s).not.toBe(before[0]![0]!.s);
      // The saved version is the weights in service: opened again, it rates as they do.
      const reopened = await SidecarMuModel.open(client, join(root, "v0002"));
      expect(reopened.version).toBe(2);
      const again = await reopened.rateSteps(episodeSteps(batch[0]!), { maxNewTokens: 32 });
      expect(again.map((r) => r.s)).toEqual(after[0]!.map((r) => r.s));
      // A frozen sidecar μ takes no update, and a foreign handle is refused.
      const frozen = await MuCritic.open({ model: reopened });
      await expect(frozen.update(batch, after)).rejects.toThrow(/frozen/);
      const other = await RemoteMu.load(client, join(root, "v0001"));
      await expect(
        MuCritic.open({ model: reopened, mu: other, update: { learningRate: 1e-3, headLearningRate: 1e-3, beta: 0 } }),
      ).rejects.toThrow(/model\.mu/);
    },
    TIMEOUT_MS,
  );

  it(
    "refuses a version whose weights are not the ones it describes, naming the file",
    async () => {
      const version = served.directory;
      const file = join(version, SIDECAR_MU_FILE);
      const manifest = JSON.parse(await readFile(file, "utf8"));
      await writeFile(file, JSON.stringify({ ...manifest, fingerprint: "0".repeat(64) }));
      const error = await SidecarMuModel.open(client, version).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RlxarFileError);
      expect((error as Error).message).toContain(`${SIDECAR_MU_FILE}: fingerprint`);
      await writeFile(file, JSON.stringify({ ...manifest, k: "three" }));
      await expect(SidecarMuModel.open(client, version)).rejects.toThrow(/k/);
      await expect(SidecarMuModel.open(client, join(dir, "nowhere"))).rejects.toThrow(/missing: not a sidecar μ/);
      await writeFile(file, JSON.stringify(manifest));
    },
    TIMEOUT_MS,
  );

  it(
    "asks a μ without a tokenizer of its own for the byte-level BPE its ids were made with",
    async () => {
      const error = await SidecarMuModel.create(served.mu, join(dir, "none")).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RlxarInputError);
      expect((error as RlxarInputError).message).toMatch(/tokenizer.*no tokenizer of its own/);
    },
    TIMEOUT_MS,
  );
});
