// A transformers μ served by the sidecar (SidecarMuModel): ARCO's setting, a causal LM with LoRA
// on q/v, its prompts through its own chat template, its criteria closed by its own end token.
// Needs RUBRIC_HF_PYTHON (see the fixture); the same path with the small μ and a byte-level BPE
// runs everywhere in sidecar-mu-model.test.ts.
import { access, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { criteriaTarget, type Step, stepPrompt, stepsOf } from "@rubric/arco-heads";
import { RemoteMu, SidecarClient } from "@rubric/sidecar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HF_PYTHON, HF_SKIP_REASON, writeHfModel } from "../../../sidecar/src/client/__fixtures__/hf-model.js";
import { KEYS, lookupEnvironment, TablePolicy } from "../__fixtures__/lookup.js";
import { MuCritic } from "../critic/mu-critic.js";
import { rollout } from "../rollout/rollout.js";
import { sftExamples } from "./__fixtures__/steps.js";
import type { SftEpoch } from "./sidecar-mu.js";
import { SidecarMuModel } from "./sidecar-mu-model.js";

const TIMEOUT_MS = 300_000; // a guard for a busy 2-core machine, not a measurement
const steps: Step[] = stepsOf({
  id: "q1",
  task: "Which river flows through the capital of Norland?",
  outcome: 1,
  turns: [
    { action: "Search[Norland]", observation: "Vessby is the capital of Norland.", budgetLeft: 3 },
    { action: "Search[Vessby]", observation: "Vessby lies on the river Aln.", budgetLeft: 2 },
    { action: "Finish[Aln]", observation: "Episode finished.", budgetLeft: 1 },
  ],
});
const CRITERIA = ["Finds the capital", "Reads the river", "Answers briefly"];
const examples = sftExamples(steps, CRITERIA, [0.5, -0.2, 0.1], 3);

describe.skipIf(HF_PYTHON === undefined)(`SidecarMuModel on a transformers μ (${HF_SKIP_REASON})`, () => {
  let client: SidecarClient;
  let dir: string;
  let mu: RemoteMu;
  let model: SidecarMuModel;
  let epochs: SftEpoch[];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "rlxar-hf-mu-"));
    const corpus = [...examples.flatMap((e) => [...e.messages.map((m) => m.content), e.target])];
    const base = await writeHfModel(join(dir, "chat"), corpus, {
      vocab: 600,
      dModel: 32,
      layers: 2,
      heads: 4,
      maxPositions: 1024,
      chatTemplate: true,
    });
    client = await SidecarClient.start({ python: HF_PYTHON!, threads: 1 });
    mu = await RemoteMu.init(client, {
      model: { kind: "transformers", name: base },
      k: 3,
      seed: 2,
      lora: { r: 8, loraAlpha: 32, loraDropout: 0 },
    });
    epochs = [];
    model = await SidecarMuModel.create(mu, join(dir, "mu"), {
      maxCriteriaTokens: 48,
      maxSequence: 1024,
      sft: {
        examples,
        epochs: 10,
        batchSize: 3,
        learningRate: 1e-2,
        headLearningRate: 1e-2,
        seed: 1,
        onEpoch: (epoch) => epochs.push(epoch),
      },
    });
  }, TIMEOUT_MS);
  afterAll(async () => {
    await client?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it(
    "reads a step through the model's chat template and closes criteria with its end token",
    async () => {
      expect(model.manifest.text).toBe("chat-template");
      const [row] = await model.sftRows(examples.slice(0, 1));
      expect(row!.prompt).toEqual((await mu.chat([examples[0]!.messages]))[0]);
      const eos = mu.summary.tokenizer!.eos_token_id!;
      expect(row!.criteria.at(-1)).toBe(eos);
      expect(await mu.detokenize([row!.criteria])).toEqual([criteriaTarget(CRITERIA)]);
    },
    TIMEOUT_MS,
  );

  it(
    "writes criteria by greedy decoding through the model's cache and scores their canonical text",
    async () => {
      // A random 2-layer model learns little through LoRA on q/v alone, but it does learn.
      expect(epochs.at(-1)!.loss).toBeLessThan(epochs[0]!.loss);
      const rated = await model.rateSteps(steps, { maxNewTokens: 24 });
      const prompts = await mu.chat(steps.map((step) => stepPrompt(step, { k: 3 })));
      const eos = mu.summary.tokenizer!.eos_token_id!;
      const written = await mu.generate({ prompts, max_new_tokens: 24, eos_id: eos });
      expect(rated.map((r) => r.text)).toEqual(await mu.detokenize(written.ids));
      expect(rated.map((r) => r.finished)).toEqual(written.finished);
      rated.forEach((r, i) => {
        expect(r.ids.prompt).toEqual(prompts[i]);
        expect(r.criteria).toHaveLength(3);
        expect(r.tokens).toBe(written.ids[i]!.length + (written.finished[i] ? 1 : 0));
      });
      // Scored on the criteria's canonical text (what μ is trained to write), in μ's own ids.
      const criteria = await mu.tokenize(rated.map((r) => criteriaTarget(r.criteria)));
      const { d } = await mu.scores(prompts.map((prompt, i) => ({ prompt, criteria: criteria[i]! })));
      rated.forEach((r, i) => {
        expect(r.ids.criteria).toEqual(criteria[i]);
        r.scores.forEach((score, k) => expect(score).toBeCloseTo(d[i]![k]!, 6));
      });
    },
    TIMEOUT_MS,
  );

  it(
    "co-evolves under MuCritic, each version a peft adapter directory that opens back on the CPU",
    async () => {
      const critic = await MuCritic.open({
        model,
        mu,
        update: { learningRate: 1e-2, headLearningRate: 1e-2, beta: 0.05 },
        maxNewTokens: 48,
      });
      await critic.freezeReference();
      const tasks = KEYS.slice(0, 2).map((key) => ({ id: key, key }));
      const batch = await rollout(lookupEnvironment(), tasks, new TablePolicy(), { temperature: 1, seed: 4 });
      const before = await critic.rate(batch);
      const update = await critic.update(batch, before);
      expect(update.version).toBe(2);
      expect(update.metrics.kl).toBe(0); // μ_ref was set on these weights
      const saved = join(dir, "mu", "v0002");
      await access(join(saved, "mu-adapter", "adapter_config.json"));
      expect((await readdir(join(dir, "mu"))).sort()).toEqual(["v0001", "v0002"]);
      const after = await critic.rate(batch);
      expect(after[0]!.map((r) => r.s)).not.toEqual(before[0]!.map((r) => r.s));
      const reopened = await SidecarMuModel.open(client, saved, { device: "cpu" });
      expect(reopened.manifest.text).toBe("chat-template");
      const again = await MuCritic.open({ model: reopened, maxNewTokens: 48 });
      const rerated = await again.rate(batch);
      rerated.forEach((ratings, e) =>
        ratings.forEach((rating, t) => {
          expect(rating.criteria).toEqual(after[e]![t]!.criteria);
          expect(rating.s).toBeCloseTo(after[e]![t]!.s, 5);
        }),
      );
    },
    TIMEOUT_MS,
  );
});
