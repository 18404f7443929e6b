import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InferenceSession, Tensor } from "onnxruntime-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SidecarClient } from "../client/client.js";
import { RemotePolicy } from "./remote-policy.js";

const VOCAB = 10;
const TIMEOUT_MS = 180_000; // a guard for a busy 2-core machine, not a measurement

describe("ONNX export of a trained policy", () => {
  let client: SidecarClient;
  let backend: RemotePolicy;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "rubric-sidecar-onnx-"));
    client = await SidecarClient.start({ threads: 1 });
    backend = await RemotePolicy.init(client, {
      model: { kind: "tiny", vocab_size: VOCAB, d_model: 32, n_heads: 4, n_layers: 2, max_seq_len: 16 },
      seed: 3,
      eos_token_id: 1,
    });
  }, TIMEOUT_MS);
  afterAll(async () => {
    await client.close();
    await rm(dir, { recursive: true, force: true });
  }, TIMEOUT_MS);

  it(
    "loads in onnxruntime-node at opset 17 and gives torch's logits within 1e-5, at any batch size and length",
    async () => {
      // Train it first, so the export is of learned weights, not of the seeded initialisation.
      for (let i = 0; i < 10; i++)
        await backend.sftStep([{ prompt: [0], tokens: [4, 5, 6, 1] }], { learningRate: 0.02 });
      const probe = [
        [0, 4, 5, 6, 7, 2, 3],
        [0, 9, 8, 1, 1, 2, 4],
      ];
      const exported = await backend.exportOnnx(join(dir, "policy.onnx"), { probe });
      expect(exported).toMatchObject({ opset: 17, inputs: ["input_ids"], outputs: ["logits"] });

      const session = await InferenceSession.create(exported.path);
      expect(session.inputNames).toEqual(["input_ids"]);
      expect(session.outputNames).toEqual(["logits"]);
      const run = async (rows: number[][]) => {
        const ids = new Tensor("int64", BigInt64Array.from(rows.flat(), BigInt), [rows.length, rows[0]!.length]);
        const { logits } = await session.run({ input_ids: ids });
        expect(logits!.dims).toEqual([rows.length, rows[0]!.length, VOCAB]);
        return Array.from(logits!.data as Float32Array);
      };

      // The probe's shape (2 × 7) is not the one traced at export (1 × 8): both axes are dynamic.
      const onnx = await run(probe);
      const torch = exported.probe_logits!.flat(2);
      expect(onnx).toHaveLength(torch.length);
      const worst = Math.max(...onnx.map((x, i) => Math.abs(x - torch[i]!)));
      expect(worst).toBeLessThan(1e-5);

      // A shorter, single row agrees with the policy's own log-probs (causal: a prefix sees only itself).
      const prefix = await run([[0, 4, 5]]);
      const logSoftmax = (row: number[]) => {
        const top = Math.max(...row);
        const lse = top + Math.log(row.reduce((s, x) => s + Math.exp(x - top), 0));
        return row.map((x) => x - lse);
      };
      const positions = [0, 1, 2].map((t) => logSoftmax(prefix.slice(t * VOCAB, (t + 1) * VOCAB)));
      const [viaSidecar] = await backend.logprobs([0], [[4, 5, 6]]);
      expect(viaSidecar).toEqual(
        [positions[0]![4]!, positions[1]![5]!, positions[2]![6]!].map((x) => expect.closeTo(x, 5)),
      );
      await session.release();
    },
    TIMEOUT_MS,
  );
});
