import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SidecarClient } from "@rubric/sidecar";
import { loadHotpotQa, policyMessages, hotpotQa, type TrainerLogLine } from "@rubric/rlxar";
import { afterAll, describe, expect, it } from "vitest";
import { openAICompatible } from "@rubric/providers";
import { startLoraServer } from "../../../rlxar/src/policy/__fixtures__/lora-server.js";
import { HF_PYTHON, HF_SKIP_REASON, writeHfModel } from "../../../sidecar/src/client/__fixtures__/hf-model.js";
import { ReproInputError } from "../errors.js";
import { type ArcoConfig, arcoConfig } from "./config.js";
import { runArco } from "./experiment.js";
import { type ArcoPolicySetting, arcoPolicySetting, policyRates } from "./policy.js";
import { ArcoTableSchema, arcoMarkdown } from "./table.js";

const TIMEOUT_MS = 600_000; // a guard for a busy 2-core machine, not a measurement
const HOTPOT = `${process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../shared/", import.meta.url))}/data/hotpotqa`;

describe("arcoPolicySetting: --policy and the sidecar's flags", () => {
  it("reads extractive, sidecar:tiny, a transformers model, and anything else as a provider's spec", () => {
    expect(arcoPolicySetting(undefined)).toEqual({ kind: "extractive" });
    expect(arcoPolicySetting("extractive")).toEqual({ kind: "extractive" });
    expect(arcoPolicySetting("llama-cpp:m.gguf")).toEqual({ kind: "llm", spec: "llama-cpp:m.gguf" });
    expect(arcoPolicySetting("sidecar:tiny")).toMatchObject({
      kind: "sidecar",
      model: "tiny",
      device: "auto",
      dtype: "float32",
      loraRank: 0,
      maxNewTokens: 64,
    });
    // ARCO's π: LoRA r 8 (α 32) in bfloat16, unless the flags say otherwise.
    expect(arcoPolicySetting("sidecar:Qwen/Qwen3-4B-Instruct-2507")).toEqual({
      kind: "sidecar",
      model: "Qwen/Qwen3-4B-Instruct-2507",
      device: "auto",
      dtype: "bfloat16",
      loraRank: 8,
      maxNewTokens: 64,
    });
    expect(arcoPolicySetting("sidecar:/m", { device: "cuda:1", dtype: "float16", loraRank: 0 })).toMatchObject({
      device: "cuda:1",
      dtype: "float16",
      loraRank: 0,
    });
  });

  it("refuses a sidecar spec without a model, and LoRA or a half dtype for the small transformer, naming the flag", () => {
    expect(() => arcoPolicySetting("sidecar:")).toThrow(ReproInputError);
    expect(() => arcoPolicySetting("sidecar:tiny", { dtype: "bfloat16" })).toThrow(/--dtype/);
    expect(() => arcoPolicySetting("sidecar:tiny", { loraRank: 8 })).toThrow(/--lora-rank/);
  });

  it("gives each π its learning rates: ARCO's for a pretrained model, the dense rate 0.3 × the sparse one", () => {
    const pretrained = policyRates(arcoPolicySetting("sidecar:/m"));
    expect(pretrained).toEqual({ sft: 1e-5, sparse: 1e-5, dense: 3e-6 });
    for (const spec of [undefined, "sidecar:tiny"]) {
      const rates = policyRates(arcoPolicySetting(spec));
      expect(rates.dense / rates.sparse).toBeCloseTo(0.3, 12);
    }
    const config = arcoConfig({ policy: arcoPolicySetting("sidecar:/m") });
    expect(config.policySft.learningRate).toBe(1e-5);
    expect(config.trainer).toMatchObject({ sparseLearningRate: 1e-5, denseLearningRate: 3e-6 });
    expect(arcoConfig().policy).toEqual({ kind: "extractive" });
  });
});

/** The smallest run that goes through every stage with π in the sidecar: SFT, one sparse epoch, the greedy eval. */
function smallRun(policy: ArcoPolicySetting): ArcoConfig {
  const base = arcoConfig({ quick: true, policy });
  return arcoConfig({
    quick: true,
    policy,
    trainPath: `${HOTPOT}/train.jsonl`,
    evalPath: `${HOTPOT}/dev.jsonl`,
    trainQuestions: 4,
    evalQuestions: 2,
    methods: ["outcome"],
    kSweep: [],
    teacher: { rollouts: 1, noise: 0 },
    policySft: { ...base.policySft, epochs: 2 },
    trainer: { ...base.trainer, sparseEpochs: 1, denseEpochs: 0, rolloutsPerBatch: 8, groupSize: 4 },
  });
}

/** What every sidecar π's run must show: π's SFT checkpoint, its SFT loss falling, the trainer's batches, a table. */
async function expectSidecarRun(out: string, config: ArcoConfig) {
  const table = ArcoTableSchema.parse(JSON.parse(readFileSync(join(out, "table.json"), "utf8")));
  expect(table.config.policy).toEqual(JSON.parse(JSON.stringify(config.policy)));
  expect(existsSync(join(out, "seed-1", "pi-sft", "policy.pt"))).toBe(true);
  const sft = (table.warmup[0] as { policySft: { losses: number[]; learnable: number } }).policySft;
  expect(sft.learnable).toBeGreaterThan(0);
  expect(sft.losses).toHaveLength(2);
  expect(sft.losses[1]!).toBeLessThan(sft.losses[0]!);
  const batches = readFileSync(join(out, "seed-1", "outcome", "log.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as TrainerLogLine)
    .filter((line): line is TrainerLogLine & { type: "batch" } => line.type === "batch");
  // 4 questions × 4 rollouts in batches of 8, each update on every step the rollouts took.
  expect(batches.map((b) => b.rollouts)).toEqual([8, 8]);
  for (const b of batches) expect(b.policy?.samples).toBe(b.steps);
  expect(table.methods.outcome?.em.n).toBe(1);
  return table;
}

describe("runArco with π a causal LM trained in the sidecar", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it(
    "sidecar:tiny: its BPE learnt from the training questions, SFT then outcome RL, the table saying what π was",
    async () => {
      const out = await mkdtemp(join(tmpdir(), "rubric-arco-tiny-pi-"));
      dirs.push(out);
      const tiny = arcoPolicySetting("sidecar:tiny");
      const config = smallRun({
        ...tiny,
        maxNewTokens: 16,
        tiny: { dModel: 16, heads: 2, layers: 1, maxSequence: 1024, vocabularySize: 1024 },
      } as ArcoPolicySetting);
      const client = await SidecarClient.start({ threads: 1 });
      try {
        await runArco(config, { out, client });
      } finally {
        await client.close();
      }
      const table = await expectSidecarRun(out, config);
      // The tokenizer the SFT checkpoint was saved with is written beside it.
      expect(existsSync(join(out, "seed-1", "pi-sft", "tokenizer.json"))).toBe(true);
      expect(arcoMarkdown(table)).toContain(
        "the policy is the sidecar's small causal transformer trained from scratch",
      );
    },
    TIMEOUT_MS,
  );

  it(
    "served:<url>#tiny: rollouts from a server that loads each update's adapter at runtime, training in the sidecar",
    async () => {
      const out = await mkdtemp(join(tmpdir(), "rubric-arco-served-pi-"));
      dirs.push(out);
      const serving = await SidecarClient.start({ threads: 1 });
      const server = await startLoraServer(serving);
      const client = await SidecarClient.start({ threads: 1 });
      const served = arcoPolicySetting(`served:${server.url}/#tiny`);
      expect(served).toMatchObject({ kind: "served", url: server.url, model: "tiny" });
      const config = smallRun({
        ...served,
        maxNewTokens: 16,
        tiny: { dModel: 16, heads: 2, layers: 1, maxSequence: 1024, vocabularySize: 1024 },
      } as ArcoPolicySetting);
      try {
        await runArco(config, {
          out,
          client,
          modelFor: (adapter) => openAICompatible({ baseUrl: `${server.url}/v1`, model: adapter, apiKeyEnv: false }),
        });
        // Every policy the run made was closed: no adapter is left in the server's memory.
        expect([...server.adapters.keys()]).toEqual([]);
      } finally {
        await client.close();
        await server.close();
        await serving.close();
      }
      const table = await expectSidecarRun(out, config);
      expect(arcoMarkdown(table)).toContain(`rolled out by the server at ${server.url}`);
      const loads = server.requests
        .filter((r) => r.path === "/v1/load_lora_adapter")
        .map((r) => r.body as { lora_name: string; lora_path: string });
      const chats = server.requests
        .filter((r) => r.path === "/v1/chat/completions")
        .map((r) => (r.body as { model: string }).model);
      // SFT's policy publishes its versions (pi1), then outcome's (pi2): its start, the SFT checkpoint it loads, one per update.
      expect(loads.map((l) => l.lora_name)).toContain("pi1-v0001");
      expect(loads.filter((l) => l.lora_name.startsWith("pi2-"))).toHaveLength(2 + 2);
      for (const l of loads) expect(l.lora_path.startsWith(join(out, "pi-adapters"))).toBe(true);
      // Every rollout of the run was the server's, each from the adapter in service.
      expect(chats.length).toBeGreaterThan(0);
      expect(new Set(chats.map((m) => m.split("-")[0]))).toEqual(new Set(["pi2"]));
    },
    TIMEOUT_MS,
  );

  it.skipIf(HF_PYTHON === undefined)(
    `sidecar:<a transformers model>: its own tokenizer and chat template, LoRA on q/v (${HF_SKIP_REASON})`,
    async () => {
      const out = await mkdtemp(join(tmpdir(), "rubric-arco-hf-pi-"));
      dirs.push(out);
      const questions = loadHotpotQa(`${HOTPOT}/train.jsonl`).slice(0, 40);
      const env = hotpotQa();
      const corpus = [
        ...policyMessages(env, { taskId: "t", task: "q", history: [], budgetLeft: 3, mustFinish: false }).map(
          (m) => m.content,
        ),
        ...questions.flatMap((q) => [q.question, ...q.paragraphs.map((p) => p.text)]),
      ];
      const model = await writeHfModel(join(out, "model"), corpus, {
        vocab: 1024,
        dModel: 32,
        layers: 1,
        heads: 2,
        maxPositions: 2048,
        chatTemplate: true,
      });
      const setting = arcoPolicySetting(`sidecar:${model}`, { dtype: "float32", loraRank: 4 });
      const config = smallRun({ ...setting, maxNewTokens: 16 } as ArcoPolicySetting);
      // A random model adapts slowly through LoRA at ARCO's 1e-5: these rates only make the SFT loss move.
      const fast = { ...config, policySft: { ...config.policySft, learningRate: 3e-2 } };
      const client = await SidecarClient.start({ python: HF_PYTHON!, threads: 1 });
      try {
        await runArco(fast, { out, client });
      } finally {
        await client.close();
      }
      const table = await expectSidecarRun(out, fast);
      expect(arcoMarkdown(table)).toContain(`the policy is ${model} trained in the sidecar (LoRA r 4)`);
    },
    TIMEOUT_MS,
  );
});
