import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ModelCorruptError, ModelFormatError } from "../errors.js";
import { MANIFEST_FILE, type ModelManifest, readManifest } from "./manifest.js";

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

const FILES: Record<string, string> = {
  "prefill.onnx": "not a real graph, but bytes with a hash",
  "decode.onnx": "the decode graph's bytes",
  "score.onnx": "the score head's bytes",
  "tokenizer/vocab.json": '{"a":0}',
};

/** A model directory as the sidecar writes one: every file, then a manifest listing their hashes. */
async function modelDirectory(change: (manifest: ModelManifest) => unknown = (m) => m): Promise<string> {
  const directory = mkdtempSync(join(tmpdir(), "arco-model-"));
  directories.push(directory);
  const files: ModelManifest["files"] = {};
  for (const [path, text] of Object.entries(FILES)) {
    await mkdir(dirname(join(directory, path)), { recursive: true });
    writeFileSync(join(directory, path), text);
    files[path] = { sha256: createHash("sha256").update(text).digest("hex"), bytes: Buffer.byteLength(text) };
  }
  const manifest: ModelManifest = {
    format: "rubric-mu",
    formatVersion: 1,
    exportVersion: 2,
    k: 3,
    pooling: "prompt+criteria",
    opset: 17,
    tokenizer: { kind: "byte-level", files: ["tokenizer/vocab.json"] },
    maxLengths: { sequence: 1024, criteria: 128 },
    model: { kind: "tiny", vocabularySize: 512, layers: 2, heads: 4, headWidth: 16, parameters: 1000 },
    graphs: {
      score: { file: "score.onnx", inputs: ["input_ids", "attention_mask", "pool_mask"], outputs: ["scores"] },
      prefill: { file: "prefill.onnx", inputs: ["input_ids", "attention_mask"], outputs: ["logits"] },
      decode: { file: "decode.onnx", inputs: ["input_ids", "attention_mask"], outputs: ["logits"] },
    },
    training: { fingerprint: "abc", steps: 0 },
    files,
  };
  writeFileSync(join(directory, MANIFEST_FILE), JSON.stringify(change(manifest)));
  return directory;
}

async function refusal(directory: string): Promise<ModelCorruptError> {
  const error = await readManifest(directory).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ModelCorruptError);
  expect((error as ModelCorruptError).code).toBe("arco.model-corrupt");
  return error as ModelCorruptError;
}

describe("readManifest", () => {
  it("reads a complete export and checks every file", async () => {
    const directory = await modelDirectory();
    const { manifest } = await readManifest(directory);
    expect(manifest.k).toBe(3);
    expect(manifest.exportVersion).toBe(2);
    expect(Object.keys(manifest.files).sort()).toEqual(Object.keys(FILES).sort());
  });

  it("refuses a partial export: a listed file missing", async () => {
    const directory = await modelDirectory();
    rmSync(join(directory, "score.onnx"));
    const error = await refusal(directory);
    expect(error.file).toBe("score.onnx");
    expect(error.message).toMatch(/score\.onnx: cannot read \(no such file\)/);
  });

  it("refuses a listed file that is a link or not a regular file, before hashing it (a FIFO hung the hash)", async () => {
    const linked = await modelDirectory();
    const elsewhere = join(mkdtempSync(join(tmpdir(), "arco-elsewhere-")), "score.onnx");
    directories.push(dirname(elsewhere));
    writeFileSync(elsewhere, FILES["score.onnx"]!); // the very bytes the manifest lists
    rmSync(join(linked, "score.onnx"));
    symlinkSync(elsewhere, join(linked, "score.onnx"));
    const link = await refusal(linked);
    expect(link.file).toBe("score.onnx");
    expect(link.message).toContain(`score.onnx: is a symbolic link (to ${elsewhere})`);

    // A listed file of 0 bytes passes the size check; a FIFO of that name must not reach the hash.
    const empty = await modelDirectory((m) => ({
      ...m,
      files: { ...m.files, "notes.txt": { sha256: createHash("sha256").digest("hex"), bytes: 0 } },
    }));
    execFileSync("mkfifo", [join(empty, "notes.txt")]);
    const fifo = await refusal(empty);
    expect(fifo.file).toBe("notes.txt");
    expect(fifo.message).toContain("notes.txt: is a FIFO (named pipe), not a regular file");

    const manifestLink = await modelDirectory();
    writeFileSync(join(dirname(elsewhere), "secret"), "OPENAI_API_KEY=sk-x");
    rmSync(join(manifestLink, MANIFEST_FILE));
    symlinkSync(join(dirname(elsewhere), "secret"), join(manifestLink, MANIFEST_FILE));
    const secret = await refusal(manifestLink);
    expect(secret.message).not.toContain("sk-x");
    expect(secret.message).toContain("manifest.json: is a symbolic link");
  }, 10_000);

  it("refuses a truncated file by its size and a damaged one of the same size by its hash", async () => {
    const truncated = await modelDirectory();
    writeFileSync(join(truncated, "prefill.onnx"), "not a real");
    expect((await refusal(truncated)).message).toMatch(/prefill\.onnx: has 10 bytes, the manifest says 39/);

    const damaged = await modelDirectory();
    writeFileSync(join(damaged, "tokenizer/vocab.json"), '{"b":0}');
    const error = await refusal(damaged);
    expect(error.file).toBe("tokenizer/vocab.json");
    expect(error.message).toMatch(/has SHA-256 [0-9a-f]{64}, the manifest says [0-9a-f]{64}/);
  });

  it("refuses a missing, non-JSON or invalid manifest, naming manifest.json and the field", async () => {
    const none = await modelDirectory();
    rmSync(join(none, MANIFEST_FILE));
    expect((await refusal(none)).file).toBe(MANIFEST_FILE);

    const torn = await modelDirectory();
    writeFileSync(join(torn, MANIFEST_FILE), '{"format": "rubric-mu", "k"');
    expect((await refusal(torn)).message).toMatch(/manifest\.json: is not JSON/);

    const unlisted = await modelDirectory((m) => ({
      ...m,
      graphs: { ...m.graphs, score: { ...m.graphs.score, file: "score-v2.onnx" } },
    }));
    expect((await refusal(unlisted)).message).toMatch(
      /graphs\.score\.file: "score-v2\.onnx" is not listed under files/,
    );

    const cramped = await modelDirectory((m) => ({ ...m, maxLengths: { sequence: 128, criteria: 128 } }));
    expect((await refusal(cramped)).message).toMatch(
      /maxLengths\.criteria: must be below maxLengths\.sequence \(128\)/,
    );

    const pooling = await modelDirectory((m) => ({ ...m, pooling: "last-token" }));
    expect((await refusal(pooling)).message).toMatch(/pooling: /);
  });

  it("refuses a file path that leaves the model directory", async () => {
    const escaping = await modelDirectory((m) => ({
      ...m,
      files: { ...m.files, "../elsewhere.bin": { sha256: "0".repeat(64), bytes: 0 } },
    }));
    expect((await refusal(escaping)).message).toMatch(
      /manifest\.json: files: key "\.\.\/elsewhere\.bin": expected a relative `\/`-separated path inside the model directory/,
    );
  });

  it("a newer manifest format is a ModelFormatError, not corruption", async () => {
    const newer = await modelDirectory((m) => ({ ...m, formatVersion: 2 }));
    const error = await readManifest(newer).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelFormatError);
    expect((error as ModelFormatError).code).toBe("arco.model-format");
    expect((error as Error).message).toMatch(/formatVersion 2; this version reads 1/);
  });
});
