// `repro arco --mu-model`: μ served by the torch sidecar. `tiny` runs everywhere (the small μ, its
// criteria written by torch); a transformers μ (ARCO's: LoRA on q/v, its own chat template) runs
// with RUBRIC_HF_PYTHON on a small random Llama, the GPU recipe's code path on a CPU.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SidecarClient } from "@rubric/sidecar";
import { SIDECAR_MU_FILE, type TrainerLogLine } from "@rubric/rlxar";
import { afterAll, describe, expect, it } from "vitest";
import { HF_PYTHON, HF_SKIP_REASON, writeHfModel } from "../../../sidecar/src/client/__fixtures__/hf-model.js";
import { type ArcoConfig, arcoConfig } from "./config.js";
import { runArco } from "./experiment.js";
import { ARCO_MU_LORA, arcoMuModel, type MuModelSetting, TINY_MU_MODEL } from "./mu-model.js";
import { arcoMarkdown } from "./table.js";

const TIMEOUT_MS = 900_000; // a guard for a busy 2-core machine, not a measurement
const HOTPOT = `${process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../shared/", import.meta.url))}/data/hotpotqa`;

describe("arcoMuModel", () => {
  it("reads tiny and a transformers model; ARCO's LoRA and rates go with the latter", () => {
    expect(arcoMuModel(undefined)).toBeUndefined();
    expect(arcoMuModel("tiny")).toEqual({ name: "tiny", dtype: "float32" });
    expect(arcoMuModel("/models/qwen")).toEqual({ name: "/models/qwen", dtype: "bfloat16", lora: ARCO_MU_LORA });
    expect(arcoMuModel("/models/qwen", { dtype: "float32" })?.dtype).toBe("float32");
    expect(() => arcoMuModel("tiny", { dtype: "bfloat16" })).toThrow(/--dtype: the small μ trains in float32/);
    expect(() => arcoMuModel("")).toThrow(/--mu-model: needs a model/);
    const qwen = arcoConfig({ muModel: arcoMuModel("/models/qwen") });
    expect(qwen.mu).toMatchObject({
      model: { name: "/models/qwen" },
      maxCriteriaTokens: 128,
      maxSequence: 2048,
      sftLearningRate: 5e-5,
      learningRate: 1e-5,
      headLearningRate: 5e-4,
      beta: 0.05,
    });
    // The small μ keeps its own rates whether onnxruntime-node or torch serves it.
    const { model: _model, ...served } = arcoConfig({ muModel: arcoMuModel(TINY_MU_MODEL) }).mu;
    expect(served).toEqual(arcoConfig().mu);
  });
});

/** A run of ARCO alone on a handful of questions, μ served by the sidecar. */
function servedRun(model: MuModelSetting, mu: Partial<ArcoConfig["mu"]> = {}): ArcoConfig {
  const base = arcoConfig({
    quick: true,
    trainPath: `${HOTPOT}/train.jsonl`,
    evalPath: `${HOTPOT}/dev.jsonl`,
    trainQuestions: 8,
    evalQuestions: 4,
    diagnosticQuestions: 2,
    methods: ["arco"],
    kSweep: [],
    teacher: { rollouts: 2, noise: 0.25 },
    policySft: { epochs: 1, learningRate: 0.05, batchSize: 64 },
    // Sparse: 4 questions × 4 rollouts per batch (2 batches); dense: the 8 questions once (1 batch).
    trainer: { sparseEpochs: 1, denseEpochs: 1, rolloutsPerBatch: 16, groupSize: 4 },
    muModel: model,
  });
  return {
    ...base,
    mu: {
      ...base.mu,
      dModel: 16,
      heads: 2,
      layers: 1,
      vocabularySize: 400,
      maxCriteriaTokens: 24,
      maxObservationChars: 120,
      sftEpochs: 1,
      sftExamples: 16,
      ...mu,
    },
  };
}

const batchLines = (out: string) =>
  readFileSync(join(out, "seed-1", "arco", "log.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as TrainerLogLine)
    .filter((line): line is TrainerLogLine & { type: "batch" } => line.type === "batch");

describe("runArco with μ served by the sidecar", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it(
    "--mu-model tiny: μ co-evolves in torch, each update a saved version; a run stopped mid-way resumes to the same table",
    async () => {
      const config = servedRun(arcoMuModel(TINY_MU_MODEL)!);
      const [whole, stopped] = [
        await mkdtemp(join(tmpdir(), "rubric-arco-served-mu-")),
        await mkdtemp(join(tmpdir(), "rubric-arco-served-mu-")),
      ];
      dirs.push(whole, stopped);
      const client = await SidecarClient.start({ threads: 1 });
      try {
        const versions: string[][] = [];
        const table = await runArco(config, {
          out: whole,
          client,
          onProgress: (p) => {
            if (p.type === "trainer" && p.event.type === "batch") {
              const root = join(whole, "seed-1", "arco", "mu");
              versions.push(readdirSync(root).filter((name) => !name.startsWith(".")));
            }
          },
        });
        // μ co-evolves on every batch: each update a version after the warm-up's v0001, on disk
        // by the time the batch is reported.
        const lines = batchLines(whole);
        expect(lines.map((line) => [line.phase, line.muVersion])).toEqual([
          ["sparse", 2],
          ["sparse", 3],
          ["dense", 4],
        ]);
        for (const line of lines) expect(line.mu).toBeDefined();
        expect(versions).toEqual([
          ["v0001", "v0002"],
          ["v0001", "v0002", "v0003"],
          ["v0001", "v0002", "v0003", "v0004"],
        ]);
        // Diagnostics read the served μ: its criteria on the eval rollouts.
        const [diagnostics] = table.diagnostics["arco"] ?? [];
        expect(diagnostics?.steps).toBeGreaterThan(0);
        expect(diagnostics?.contrast?.pairs).toBeGreaterThan(0);
        expect(existsSync(join(whole, "seed-1", "arco", "eval-traces.jsonl"))).toBe(true);
        expect(arcoMarkdown(table)).toContain("served by the torch sidecar");

        // Stopped after the second batch, resumed from the version saved with the checkpoint.
        const cut = new Error("power cut");
        await expect(
          runArco(config, {
            out: stopped,
            client,
            onProgress: (p) => {
              if (p.type === "trainer" && p.event.type === "batch" && p.event.done === 2) {
                expect(existsSync(join(stopped, "seed-1", "arco", "mu"))).toBe(true);
                const root = join(stopped, "seed-1", "arco", "mu");
                const newest = readdirSync(root)
                  .filter((name) => /^v\d+$/.test(name))
                  .sort()
                  .at(-1)!;
                expect(existsSync(join(root, newest, SIDECAR_MU_FILE))).toBe(true);
                throw cut;
              }
            },
          }),
        ).rejects.toBe(cut);
        const resumed = await runArco(config, { out: stopped, client, resume: true });
        expect(resumed.methods.arco!.em).toEqual(table.methods.arco!.em);
        expect(resumed.methods.arco!.f1).toEqual(table.methods.arco!.f1);
        expect(resumed.curves["arco"]).toEqual(table.curves["arco"]);
        const scores = (out: string) => batchLines(out).map((line) => [line.meanReward, line.muVersion]);
        expect(scores(stopped)).toEqual(scores(whole));
        // A resume with the μ served otherwise is another experiment: refused.
        const { model: _model, ...onnx } = config.mu;
        await expect(runArco({ ...config, mu: onnx }, { out: stopped, client, resume: true })).rejects.toThrow(
          /settings/i,
        );
      } finally {
        await client.close();
      }
    },
    TIMEOUT_MS,
  );

  it.skipIf(HF_PYTHON === undefined)(
    `--mu-model <transformers model>: ARCO's μ with LoRA on q/v and its chat template, warmed up and co-evolving (${HF_SKIP_REASON})`,
    async () => {
      const out = await mkdtemp(join(tmpdir(), "rubric-arco-hf-mu-"));
      dirs.push(out);
      const corpus = readFileSync(`${HOTPOT}/train.jsonl`, "utf8").split("\n").slice(0, 40);
      const base = await writeHfModel(join(out, "mu-base"), corpus, {
        vocab: 800,
        dModel: 32,
        layers: 2,
        heads: 4,
        maxPositions: 2048,
        chatTemplate: true,
      });
      const model = arcoMuModel(base, { dtype: "float32" })!;
      const config = servedRun(model, { maxCriteriaTokens: 24, sftEpochs: 1 });
      const client = await SidecarClient.start({ python: HF_PYTHON!, threads: 1 });
      try {
        // Each update's version holds other weights (the adapter and the score head moved).
        const fingerprints: string[] = [];
        const table = await runArco(config, {
          out,
          client,
          onProgress: (p) => {
            if (p.type !== "trainer" || p.event.type !== "batch") return;
            const root = join(out, "seed-1", "arco", "mu");
            const newest = readdirSync(root)
              .filter((name) => /^v\d+$/.test(name))
              .sort()
              .at(-1)!;
            fingerprints.push(JSON.parse(readFileSync(join(root, newest, SIDECAR_MU_FILE), "utf8")).fingerprint);
          },
        });
        expect(new Set(fingerprints).size).toBe(3);
        const lines = batchLines(out);
        expect(lines.map((line) => [line.phase, line.muVersion])).toEqual([
          ["sparse", 2],
          ["sparse", 3],
          ["dense", 4],
        ]);
        // KL(μ_ref‖μ) to the warm-up adapter: 0 at the first update; at ARCO's 1e-5 two steps
        // later still ≈ 0 on this random model.
        const kl = lines.map((line) => (line.mu as { kl: number }).kl);
        expect(kl[0]).toBeCloseTo(0, 6);
        for (const line of lines) expect((line.mu as { grad_norm: number }).grad_norm).toBeGreaterThan(0);
        expect(table.config["mu"]).toMatchObject({ model: { name: base, lora: { r: 8, loraAlpha: 32 } } });
        expect(arcoMarkdown(table)).toContain(`μ is ${base} (float32, LoRA r 8 on q/v) served by the torch sidecar`);
      } finally {
        await client.close();
      }
    },
    TIMEOUT_MS,
  );
});
