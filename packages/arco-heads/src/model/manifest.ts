import { createHash } from "node:crypto";
import { closeSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { formatZodIssues } from "@rubric/core";
import { isInputFileError, openInputFileSync, readInputChunks, readInputText } from "@rubric/core/files";
import { z } from "zod";
import { ModelCorruptError, ModelFormatError } from "../errors.js";
import { StepPromptSettingsSchema } from "../step/prompt.js";
import { isTokenizerKind, type MuTokenizer, muTokenizer, TOKENIZER_KINDS } from "../tokenizer/tokenizer.js";

/** The manifest's name inside a model directory. */
export const MANIFEST_FILE = "manifest.json";

/**
 * What μ's score head reads of a step's prompt + criteria: `prompt+criteria`, the mean hidden state
 * over every token (ARCO's); `criteria`, the mean over the criteria tokens only (ours); `last`, the
 * last position's hidden state alone (ours: as a reward model reads a sequence; in a causal
 * backbone it is the one position that has attended to the whole step, where a mean over a long
 * prompt dilutes the few tokens that differ between two actions).
 */
export const MU_POOLINGS = ["prompt+criteria", "criteria", "last"] as const;
export type MuPooling = (typeof MU_POOLINGS)[number];

/** The first pooled position of a row of `length` ids whose prompt is `promptLength` long: the pool runs from there to the row's end (the sidecar builds the same mask). */
export function poolStart(pooling: MuPooling, promptLength: number, length: number): number {
  switch (pooling) {
    case "prompt+criteria":
      return 0;
    case "criteria":
      return promptLength;
    case "last":
      return length - 1;
  }
}

/** The manifest format this version reads and the sidecar writes. */
export const MANIFEST_FORMAT_VERSION = 1;

/** The most positions (`maxLengths.sequence`) a manifest may claim: far beyond a μ that runs on a CPU. */
export const MAX_SEQUENCE_POSITIONS = 65_536;

const PATH_RULE =
  "expected a relative `/`-separated path inside the model directory (no `..`, `\\`, or manifest.json itself)";

/** Whether `path` names a file inside the model directory: relative, `/`-separated, never leaving it. */
function isModelFilePath(path: string): boolean {
  return (
    !isAbsolute(path) &&
    !path.includes("\\") &&
    path.split("/").every((part) => part !== "" && part !== "." && part !== "..") &&
    path !== MANIFEST_FILE
  );
}

const ModelFilePath = z.string().refine(isModelFilePath, { message: PATH_RULE });

const FileEntrySchema = z.strictObject({
  sha256: z.string().regex(/^[0-9a-f]{64}$/, "expected 64 lower-case hex digits"),
  bytes: z.int().min(0),
});

const GraphSchema = z.strictObject({
  file: ModelFilePath,
  /** Input names, in the graph's order. */
  inputs: z.array(z.string().min(1)).min(1),
  /** Output names, in the graph's order. */
  outputs: z.array(z.string().min(1)).min(1),
});

/**
 * `manifest.json`, the model contract's table of contents (documented in the package README,
 * written by the sidecar's `mu.export`). Every file the model needs is listed under `files` with
 * its size and SHA-256, so a reader can tell a complete export from a partial or damaged one
 * before loading anything.
 */
export const ModelManifestSchema = z
  .strictObject({
    format: z.literal("rubric-mu"),
    formatVersion: z.literal(MANIFEST_FORMAT_VERSION),
    /** This export's number: 1 for `mu init`, one more for every later export into the same root (`vNNNN`). */
    exportVersion: z.int().min(1),
    /** Criteria per step: the score head's output width. */
    k: z.int().min(1),
    /** What the score head reads: see {@link MU_POOLINGS}. */
    pooling: z.enum(MU_POOLINGS),
    /** The ONNX opset the graphs were exported at. */
    opset: z.int().min(7),
    tokenizer: z.strictObject({
      /** The tokenizer's kind, e.g. `byte-bpe`; both sides must implement it. */
      kind: z.string().min(1),
      /** Its files, each also listed under `files`. */
      files: z.array(ModelFilePath).min(1),
    }),
    maxLengths: z.strictObject({
      /**
       * Positions the backbone holds: prompt + criteria together. Bounded because opening a
       * version runs a step at the last position (`checkGraphContract`), whose mask and cache grow
       * with it: a manifest claiming 2³¹ positions would otherwise exhaust memory before it is refused.
       */
      sequence: z.int().min(2).max(MAX_SEQUENCE_POSITIONS),
      /** New tokens the generation head may write for the criteria (EOS included). */
      criteria: z.int().min(1),
    }),
    /** The backbone's shape, as the key/value cache needs it. */
    model: z.strictObject({
      kind: z.string().min(1),
      vocabularySize: z.int().min(1),
      layers: z.int().min(1),
      heads: z.int().min(1),
      headWidth: z.int().min(1),
      parameters: z.int().min(1),
    }),
    graphs: z.strictObject({
      /** `input_ids`, `attention_mask`, `pool_mask` [B, T] → `scores` [B, K]. */
      score: GraphSchema,
      /** `input_ids`, `attention_mask` [B, T] (left-padded) → `logits` [B, V] at the last position, and the cache. */
      prefill: GraphSchema,
      /** `input_ids` [B, T'], `attention_mask` [B, past + T'], the cache → `logits` [B, V] at the last position, and the grown cache. */
      decode: GraphSchema,
    }),
    /** The torch checkpoint of the same weights (`mu.pt`), which the sidecar's `mu.load` reads: the torch backend. */
    checkpoint: ModelFilePath.optional(),
    /**
     * The step prompt μ was trained to read (style, environment, budget label, observation cut):
     * every backend writes steps this way unless a caller overrides a field. Absent: the defaults
     * (ARCO's QA wording).
     */
    prompt: StepPromptSettingsSchema.optional(),
    /** Where these weights came from: the sidecar's parameter fingerprint and optimiser steps taken. */
    training: z.strictObject({ fingerprint: z.string().min(1), steps: z.int().min(0) }),
    // Keys are checked below rather than by a key schema, whose issue would not name the key's rule.
    files: z.record(z.string(), FileEntrySchema),
  })
  .superRefine((manifest, context) => {
    for (const path of Object.keys(manifest.files)) {
      if (!isModelFilePath(path))
        context.addIssue({ code: "custom", path: ["files"], message: `key ${JSON.stringify(path)}: ${PATH_RULE}` });
    }
    const listed = (path: string, at: (string | number)[]) => {
      if (!(path in manifest.files)) {
        context.addIssue({ code: "custom", path: at, message: `${JSON.stringify(path)} is not listed under files` });
      }
    };
    manifest.tokenizer.files.forEach((path, i) => listed(path, ["tokenizer", "files", i]));
    if (manifest.checkpoint !== undefined) listed(manifest.checkpoint, ["checkpoint"]);
    for (const name of ["score", "prefill", "decode"] as const)
      listed(manifest.graphs[name].file, ["graphs", name, "file"]);
    if (manifest.maxLengths.criteria >= manifest.maxLengths.sequence)
      context.addIssue({
        code: "custom",
        path: ["maxLengths", "criteria"],
        message: `must be below maxLengths.sequence (${manifest.maxLengths.sequence}), leaving room for the prompt`,
      });
  });
export type ModelManifest = z.infer<typeof ModelManifestSchema>;

/** A model directory whose every file was found whole. */
export interface VerifiedModel {
  readonly directory: string;
  readonly manifest: ModelManifest;
}

/**
 * Reads a model directory's manifest and checks every file it lists against its size and SHA-256.
 * A missing, unreadable or invalid manifest, and any file missing, of the wrong size or with the
 * wrong hash, is a `ModelCorruptError` naming the file; a manifest of another format version is a
 * `ModelFormatError`. Sizes are checked first, so a half-copied export fails without hashing.
 *
 * @example
 * const { manifest } = await readManifest("models/mu/v3");
 * manifest.k; // 3
 */
export async function readManifest(directory: string): Promise<VerifiedModel> {
  const corrupt = (file: string, detail: string) => new ModelCorruptError(directory, file, detail);
  const text = await asCorrupt(directory, MANIFEST_FILE, async () =>
    readInputText(join(directory, MANIFEST_FILE), MODEL_FILE),
  );
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw corrupt(MANIFEST_FILE, `is not JSON (${(error as Error).message})`);
  }
  const version = (value as { formatVersion?: unknown } | null)?.formatVersion;
  if (typeof version === "number" && version !== MANIFEST_FORMAT_VERSION) {
    throw new ModelFormatError(directory, `formatVersion ${version}; this version reads ${MANIFEST_FORMAT_VERSION}`);
  }
  const parsed = ModelManifestSchema.safeParse(value);
  if (!parsed.success) throw corrupt(MANIFEST_FILE, formatZodIssues(parsed.error, { separator: "; " }));
  const manifest = parsed.data;

  const entries = Object.entries(manifest.files);
  for (const [path, entry] of entries) {
    const bytes = await asCorrupt(directory, path, async () => {
      const { fd, size } = openInputFileSync(join(directory, path), MODEL_FILE);
      closeSync(fd);
      return size;
    });
    if (bytes !== entry.bytes) throw corrupt(path, `has ${bytes} bytes, the manifest says ${entry.bytes}`);
  }
  for (const [path, entry] of entries) {
    const digest = await asCorrupt(directory, path, () => sha256Of(join(directory, path)));
    if (digest !== entry.sha256) throw corrupt(path, `has SHA-256 ${digest}, the manifest says ${entry.sha256}`);
  }
  return { directory, manifest };
}

/** SHA-256 of a file, streamed: ONNX graphs run to hundreds of megabytes. */
async function sha256Of(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of readInputChunks(path, MODEL_FILE)) hash.update(chunk);
  return hash.digest("hex");
}

/**
 * How a model directory's files are read (core's reader): regular files only, links refused. A
 * model directory may come from elsewhere; a link in it could stand for any file of this machine,
 * and a FIFO would hang the hash. The manifest's hashes vouch for contents, not for what a path is.
 */
const MODEL_FILE = { symlinks: "refuse" } as const;

/** `read()`, its input-file faults (missing, a link, a FIFO, too large) reported as the model's corruption. */
async function asCorrupt<T>(directory: string, file: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (isInputFileError(error)) throw new ModelCorruptError(directory, file, error.detail);
    throw error;
  }
}

/** A verified model directory with its tokenizer loaded: everything a backend needs besides its graphs or weights. */
export interface OpenedModel extends VerifiedModel {
  readonly tokenizer: MuTokenizer;
}

/**
 * `readManifest`, then the tokenizer the manifest names. A tokenizer of a kind this version does not read is a
 * `ModelFormatError`; one that does not parse, or holds more ids than the model's vocabulary, a
 * `ModelCorruptError`.
 */
export async function readModel(directory: string): Promise<OpenedModel> {
  const verified = await readManifest(directory);
  const { manifest } = verified;
  const { kind } = manifest.tokenizer;
  if (!isTokenizerKind(kind))
    throw new ModelFormatError(
      directory,
      `tokenizer.kind ${JSON.stringify(kind)}; this version reads ${TOKENIZER_KINDS.map((k) => JSON.stringify(k)).join(" and ")}`,
    );
  const file = manifest.tokenizer.files[0]!;
  const text = await asCorrupt(directory, file, async () => readInputText(join(directory, file), MODEL_FILE));
  let tokenizer: MuTokenizer;
  try {
    tokenizer = muTokenizer(kind, JSON.parse(text));
  } catch (error) {
    throw new ModelCorruptError(directory, file, `is not a ${kind} tokenizer file: ${(error as Error).message}`);
  }
  if (tokenizer.vocabularySize > manifest.model.vocabularySize)
    throw new ModelCorruptError(
      directory,
      file,
      `has ${tokenizer.vocabularySize} ids but the model's vocabulary holds ${manifest.model.vocabularySize}`,
    );
  return { ...verified, tokenizer };
}
