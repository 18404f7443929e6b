import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InferenceSession, Tensor } from "onnxruntime-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SidecarClient } from "../client/client.js";
import { SidecarError } from "../errors.js";
import { SIDECAR_METHODS } from "../wire/methods.js";
import { RemoteMu } from "./remote-mu.js";

const TIMEOUT_MS = 180_000; // a guard for a busy 2-core machine, not a measurement
const MODEL = { kind: "tiny", vocab_size: 12, d_model: 16, n_heads: 2, n_layers: 2, max_seq_len: 24 } as const;
const TRAJECTORIES = [
  { steps: [{ prompt: [1, 2, 3], criteria: [4, 5] }], reward: 1 },
  { steps: [{ prompt: [6, 7, 8], criteria: [9, 10] }], reward: 0 },
];

describe("μ trained through LoRA, in the real sidecar", () => {
  let client: SidecarClient;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "rubric-sidecar-mu-lora-"));
    client = await SidecarClient.start({ threads: 1 });
  }, TIMEOUT_MS);
  afterAll(async () => {
    await client.close();
    await rm(dir, { recursive: true, force: true });
  }, TIMEOUT_MS);

  it(
    "keeps the base weights bit-identical through mu.step while the adapter and head learn",
    async () => {
      const mu = await RemoteMu.init(client, { model: MODEL, seed: 2, lora: { r: 4, loraAlpha: 16, loraDropout: 0 } });
      expect(mu.summary.lora).toEqual({ r: 4, lora_alpha: 16, lora_dropout: 0, target_modules: ["q_proj", "v_proj"] });
      const before = await mu.fingerprint();
      expect(before.base).toMatch(/^[0-9a-f]{64}$/);
      await mu.step(TRAJECTORIES, { learningRate: 1e-2, headLearningRate: 1e-2 });
      const after = await mu.fingerprint();
      expect(after.base).toBe(before.base);
      expect(after.fingerprint).not.toBe(before.fingerprint);

      // Without the adapter the same step moves the base: the assertion above can fail.
      const whole = await RemoteMu.init(client, { model: MODEL, seed: 2 });
      const wholeBefore = await whole.fingerprint();
      expect(wholeBefore.base).toBe(before.base); // the adapter is drawn after the base
      await whole.step(TRAJECTORIES, { learningRate: 1e-2 });
      expect((await whole.fingerprint()).base).not.toBe(wholeBefore.base);
    },
    TIMEOUT_MS,
  );

  it(
    "exports the merged weights: score.onnx gives torch's scores with a trained adapter",
    async () => {
      const mu = await RemoteMu.init(client, { model: MODEL, seed: 3, lora: { loraDropout: 0 } });
      for (let i = 0; i < 3; i++) await mu.step(TRAJECTORIES, { learningRate: 5e-2, headLearningRate: 5e-2 });
      const steps = TRAJECTORIES.map((t) => t.steps[0]!);
      const { d } = await mu.scores(steps);
      const exported = await mu.export(dir, {
        tokenizer: { kind: "byte-bpe", files: { "tokenizer.json": "{}\n" } },
        max_criteria_tokens: 8,
      });
      const session = await InferenceSession.create(join(exported.dir, "score.onnx"));
      const rows = steps.map((s) => [...s.prompt, ...s.criteria]);
      const shape = [rows.length, rows[0]!.length];
      const ids = new Tensor("int64", BigInt64Array.from(rows.flat(), BigInt), shape);
      const ones = new Tensor(
        "int64",
        BigInt64Array.from(rows.flat(), () => 1n),
        shape,
      );
      const { scores } = await session.run({ input_ids: ids, attention_mask: ones, pool_mask: ones });
      const onnx = Array.from(scores!.data as Float32Array);
      const torch = d.flat();
      expect(onnx).toHaveLength(torch.length);
      expect(Math.max(...onnx.map((x, i) => Math.abs(x - torch[i]!)))).toBeLessThan(1e-5);
      await session.release();
    },
    TIMEOUT_MS,
  );

  it(
    "passes device and dtype: μ runs on the CPU by default, a CUDA device torch lacks is refused naming device",
    async () => {
      const mu = await RemoteMu.init(client, { model: MODEL, seed: 1, device: "cpu", dtype: "float32" });
      expect(mu.summary.device).toBe("cpu");
      expect(mu.summary.dtype).toBe("float32");
      const { ids } = await mu.generate({ prompts: [[1, 2], [3]], eos_id: 0 }); // max_new_tokens: 128 by default
      expect(ids.map((row) => row.length <= MODEL.max_seq_len - 1)).toEqual([true, true]);
      // "cuda:99" is refused whether or not this machine has a GPU; "cuda" too where it has none.
      const refused = await RemoteMu.init(client, { model: MODEL, device: "cuda:99" }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(SidecarError);
      expect((refused as SidecarError).fault).toBe("unavailable");
      expect((refused as SidecarError).data.path).toBe("params.device");
      // A checkpoint loads where it was made, or where `device` says (a GPU's μ read on a CPU).
      const dir = await mkdtemp(join(tmpdir(), "remote-mu-device-"));
      try {
        await mu.save(dir);
        const { fingerprint } = await mu.fingerprint();
        const moved = await RemoteMu.load(client, dir, { device: "cpu" });
        expect(moved.summary.device).toBe("cpu");
        expect((await moved.fingerprint()).fingerprint).toBe(fingerprint);
        const nowhere = await RemoteMu.load(client, dir, { device: "cuda:99" }).catch((error: unknown) => error);
        expect((nowhere as SidecarError).fault).toBe("unavailable");
        expect((nowhere as SidecarError).data.path).toBe("params.device");
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    TIMEOUT_MS,
  );

  it("refuses a dtype other than float32 for a tiny μ, naming the field", () => {
    const parsed = SIDECAR_METHODS["mu.init"].params.safeParse({ model: MODEL, dtype: "bfloat16" });
    expect(parsed.error?.issues[0]?.path).toEqual(["dtype"]);
    const transformers = { kind: "transformers", name: "Qwen/Qwen3-4B-Instruct-2507" };
    expect(
      SIDECAR_METHODS["mu.init"].params.safeParse({ model: transformers, dtype: "bfloat16", device: "cuda" }).success,
    ).toBe(true);
  });

  it("refuses a target module a tiny μ does not have, naming the field", () => {
    const parsed = SIDECAR_METHODS["mu.init"].params.safeParse({ model: MODEL, lora: { target_modules: ["k_proj"] } });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(["lora", "target_modules", 0]);
  });
});
