import { mkdtemp, rm, truncate } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SidecarClient } from "@rubric/sidecar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportTinyMu, forgeExport, moveWeightsOut } from "../__fixtures__/model-directory.js";
import { ModelCorruptError } from "../errors.js";
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
