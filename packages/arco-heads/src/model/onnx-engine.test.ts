import { mkdtemp, rm, truncate } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SidecarClient } from "@rubric/sidecar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportTinyMu, forgeExport, moveWeightsOut, TINY_MU } from "../__fixtures__/model-directory.js";
import { ModelCorruptError } from "../errors.js";
import type { ModelManifest } from "./manifest.js";
import { openOnnxVersion } from "./onnx-engine.js";
import { RubricModel } from "./rubric-model.js";

// Opening an export with graphs that pass the hash check but are not what the manifest says:
// forged copies of a real export (the sidecar's mu.export), opened in the real onnxruntime-node.

const TIMEOUT_MS = 240_000; // a guard for a busy 2-core machine, not a measurement

let root: string;
let source: string;
let forged = 0;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "arco-onnx-engine-"));
  const client = await SidecarClient.start({ threads: 1 });
  try {
    source = await exportTinyMu(client, join(root, "mu"));
  } finally {
    await client.close();
  }
}, TIMEOUT_MS);
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

const forge = (change: Parameters<typeof forgeExport>[2]) =>
  forgeExport(source, join(root, `forged-${forged++}`), change);

/** The error `RubricModel.load` rejects with: the named error itself, not Effect's FiberFailure around it. */
async function refusal(directory: string): Promise<ModelCorruptError> {
  const error = await RubricModel.load(directory, { threads: 1 }).catch((e: unknown) => e);
  expect(error, String(error)).toBeInstanceOf(ModelCorruptError);
  return error as ModelCorruptError;
}

describe("openOnnxVersion: graphs onnxruntime cannot load (issue 29 item 20)", () => {
  it(
    "a truncated graph whose hash was recomputed is a ModelCorruptError naming the graph",
    async () => {
      const error = await refusal(await forge((dir) => truncate(join(dir, "score.onnx"), 1000)));
      expect(error.file).toBe("score.onnx");
      expect(error.message).toMatch(/score\.onnx: onnxruntime cannot load it: .*Protobuf parsing failed/);
    },
    TIMEOUT_MS,
  );

  it(
    "a graph whose weights are external data onnxruntime refuses is a ModelCorruptError naming the graph",
    async () => {
      const error = await refusal(await forge((dir) => moveWeightsOut(join(dir, "prefill.onnx"), "weights.bin")));
      expect(error.file).toBe("prefill.onnx");
      expect(error.message).toMatch(/prefill\.onnx: onnxruntime cannot load it: .*[Ee]xternal data/);
    },
    TIMEOUT_MS,
  );
});

describe("openOnnxVersion: the manifest checked against the graphs it describes (issue 29 item 3)", () => {
  const edits: [string, (m: ModelManifest) => void, RegExp][] = [
    ["k 5", (m) => (m.k = 5), /k is 5 but score\.onnx's scores are float32 \[1,3\] for one row/],
    ["k 1", (m) => (m.k = 1), /k is 1 but score\.onnx's scores are float32 \[1,3\] for one row/],
    [
      "vocabulary",
      (m) => (m.model.vocabularySize += 7),
      /model\.vocabularySize is \d+ but prefill\.onnx's logits are float32 \[1,\d+\]/,
    ],
    ["layers", (m) => (m.model.layers = 1), /model\.layers is 1 but prefill\.onnx returns 4 cache tensors/],
    [
      "heads",
      (m) => (m.model.heads = 4),
      /model\.heads is 4 and model\.headWidth \d+ but prefill\.onnx's present_key_0/,
    ],
    ["head width", (m) => (m.model.headWidth = 4), /model\.heads is 2 and model\.headWidth 4 but prefill\.onnx's/],
    [
      "positions",
      (m) => (m.maxLengths.sequence = TINY_MU.sequence + 1),
      /maxLengths\.sequence is 65 but decode\.onnx cannot run its last position: .*Gather/,
    ],
    // Refused by the schema before anything is allocated for a step at that position.
    ["positions past the bound", (m) => (m.maxLengths.sequence = 2 ** 31), /maxLengths\.sequence: .*65536/],
  ];
  for (const [name, edit, message] of edits)
    it(
      `a manifest whose ${name} is not the graphs' is a ModelCorruptError naming manifest.json`,
      async () => {
        // Only the manifest changes: every file's hash still holds, so readManifest passes.
        const error = await refusal(await forge((_, manifest) => edit(manifest)));
        expect(error.file).toBe("manifest.json");
        expect(error.message).toMatch(message);
      },
      TIMEOUT_MS,
    );

  it(
    "the exporter's own manifest opens, and so does one promising fewer positions than the graphs hold",
    async () => {
      for (const directory of [
        source,
        await forge((_, manifest) => {
          manifest.maxLengths.sequence = 32;
        }),
      ]) {
        const engine = await openOnnxVersion(directory, { threads: 1 });
        const scores = await engine.score([{ prompt: [1, 5, 6, 7], criteria: [8, 9] }]);
        expect(scores[0]).toHaveLength(TINY_MU.k);
        await engine.close();
      }
    },
    TIMEOUT_MS,
  );
});
