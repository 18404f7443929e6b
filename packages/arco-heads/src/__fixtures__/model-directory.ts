import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { cp, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { SidecarClient } from "@rubric/sidecar";
import type { ModelManifest } from "../model/manifest.js";
import { byteBpeTokenizer, trainByteBpe } from "../tokenizer/byte-bpe.js";

/** The interpreter the sidecar runs on here (Debian's, where python3-torch and python3-onnx live). */
export const PYTHON = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";

/** A small μ's shape: 64 positions, so that checks which run a graph at full length stay fast. */
export const TINY_MU = { k: 3, sequence: 64, criteria: 16 } as const;

/**
 * A μ export made by the real sidecar (`mu.init`, then `mu.export` into `root`), untrained: the
 * graphs and checkpoint are real, their numbers do not matter here. Returns the version directory.
 */
export async function exportTinyMu(client: SidecarClient, root: string): Promise<string> {
  const tokenizer = byteBpeTokenizer(trainByteBpe(["Search[Lyon museums] found one.", "Criteria: cites it."], 300));
  await client.request("mu.init", {
    model: {
      kind: "tiny",
      vocab_size: tokenizer.vocabularySize,
      d_model: 16,
      n_heads: 2,
      n_layers: 2,
      max_seq_len: TINY_MU.sequence,
    },
    k: TINY_MU.k,
    seed: 1,
  });
  const exported = await client.request("mu.export", {
    dir: root,
    tokenizer: { kind: "byte-bpe", files: { "tokenizer.json": JSON.stringify(tokenizer.toFile()) } },
    max_criteria_tokens: TINY_MU.criteria,
  });
  return exported.dir;
}

/**
 * A copy of the export `source` at `target`, its files changed by `change` (which may also edit
 * the manifest in place), then the manifest's hashes and sizes recomputed for the files it lists:
 * a forged directory that passes `readManifest`, so that only the checks after it stand in the way.
 */
export async function forgeExport(
  source: string,
  target: string,
  change: (directory: string, manifest: ModelManifest) => void | Promise<void>,
): Promise<string> {
  await cp(source, target, { recursive: true });
  const manifest = JSON.parse(await readFile(join(target, "manifest.json"), "utf8")) as ModelManifest;
  await change(target, manifest);
  // A change may have removed `files` or made it something else: then there is nothing to rehash.
  const files = typeof manifest.files === "object" && manifest.files !== null ? manifest.files : {};
  for (const file of Object.keys(files)) {
    // A removed file (or a key that names none, such as "." or "../x") keeps the entry it had.
    if (!statSync(join(target, file), { throwIfNoEntry: false })?.isFile()) continue;
    const bytes = await readFile(join(target, file));
    files[file] = {
      sha256: createHash("sha256").update(bytes).digest("hex"),
      bytes: (await stat(join(target, file))).size,
    };
  }
  await writeFile(join(target, "manifest.json"), JSON.stringify(manifest, null, 2));
  return target;
}

/**
 * Rewrites the graph `file` so that its weights live in a separate file `location` (ONNX's external
 * data, with python3-onnx), which is left out of the directory: onnxruntime refuses the graph.
 */
export function moveWeightsOut(file: string, location: string): void {
  execFileSync(PYTHON, [
    "-c",
    [
      "import os, sys, onnx",
      "from onnx.external_data_helper import convert_model_to_external_data",
      "model = onnx.load(sys.argv[1])",
      "convert_model_to_external_data(model, all_tensors_to_one_file=True, location=sys.argv[2], size_threshold=0)",
      "onnx.save_model(model, sys.argv[1])",
      "os.remove(os.path.join(os.path.dirname(sys.argv[1]), sys.argv[2]))",
    ].join("\n"),
    file,
    location,
  ]);
}
