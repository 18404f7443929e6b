import {
  criteriaTarget,
  EOS_ID,
  type ModelManifest,
  ModelCorruptError,
  ModelFormatError,
  type MuEngine,
  promptText,
  readModel,
  type Step,
  stepPrompt,
  trainByteBpe,
  type ByteBpeTokenizer,
  byteBpeTokenizer,
} from "@rubric/arco-heads";
import type { SidecarClient } from "@rubric/gspo";

/** The backbone μ gets from `createMu`: a small causal transformer sized for a CPU. */
export interface MuShape {
  /** Hidden width (default 64). */
  readonly dModel?: number;
  /** Attention heads (default 4). */
  readonly heads?: number;
  /** Transformer blocks (default 2). */
  readonly layers?: number;
  /** Positions: prompt + criteria (default 1024). */
  readonly maxSequence?: number;
}

export interface CreateMuOptions {
  /** Criteria per step (default 3). */
  readonly k?: number;
  readonly seed?: number;
  /** ARCO's `prompt+criteria` (default) or `criteria` only. */
  readonly pooling?: "prompt+criteria" | "criteria";
  readonly shape?: MuShape;
  /** New tokens μ may write for a step's criteria (default 128, ARCO's). */
  readonly maxCriteriaTokens?: number;
  /** The tokenizer's vocabulary (default 1024). */
  readonly vocabularySize?: number;
  /**
   * Steps whose prompts the tokenizer learns its merges from: the agent's own steps keep μ's
   * sequences short. Without them it learns from the prompt's fixed wording alone.
   */
  readonly corpus?: readonly Step[];
}

/** An export that `mu.export` wrote. */
export interface MuExport {
  readonly directory: string;
  readonly version: number;
}

const TOKENIZER_FILE = "tokenizer.json";

/** A step that carries only the prompt's fixed wording, for a tokenizer with no corpus. */
const TEMPLATE_STEP: Step = { task: "", history: [{ action: "", observation: "" }], budgetLeft: 3, action: "" };

/**
 * The tokenizer `createMu` trains: byte-level BPE over the step prompts of `corpus` (or of the
 * prompt's fixed wording) and the criteria's JSON frame, so both sides encode alike.
 */
export function trainMuTokenizer(corpus: readonly Step[], k: number, vocabularySize: number): ByteBpeTokenizer {
  const prompts = (corpus.length > 0 ? corpus : [TEMPLATE_STEP]).map((step) => promptText(stepPrompt(step, { k })));
  const frame = criteriaTarget(Array.from({ length: k }, (_, i) => `criterion ${i + 1}`));
  return byteBpeTokenizer(trainByteBpe([...prompts, frame, frame], vocabularySize));
}

/**
 * A new μ in the sidecar (`mu.init`) with a tokenizer trained here, exported as the first
 * version under `root` (`root/v0001`, tokenizer and torch checkpoint inside).
 */
export async function createMu(client: SidecarClient, root: string, options: CreateMuOptions = {}): Promise<MuExport> {
  const k = options.k ?? 3;
  const shape = options.shape ?? {};
  const tokenizer = trainMuTokenizer(options.corpus ?? [], k, options.vocabularySize ?? 1024);
  await client.request("mu.init", {
    model: {
      kind: "tiny",
      vocab_size: tokenizer.vocabularySize,
      d_model: shape.dModel ?? 64,
      n_heads: shape.heads ?? 4,
      n_layers: shape.layers ?? 2,
      max_seq_len: shape.maxSequence ?? 1024,
    },
    k,
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.pooling === undefined ? {} : { pooling: options.pooling }),
  });
  return exportMu(client, root, tokenizer, options.maxCriteriaTokens ?? 128);
}

/** Exports the sidecar's μ as the next version under `root`, with `tokenizer` travelling inside it. */
export async function exportMu(
  client: SidecarClient,
  root: string,
  tokenizer: ByteBpeTokenizer,
  maxCriteriaTokens: number,
): Promise<MuExport> {
  const { dir, version } = await client.request("mu.export", {
    dir: root,
    tokenizer: { kind: "byte-bpe", files: { [TOKENIZER_FILE]: JSON.stringify(tokenizer.toFile()) } },
    max_criteria_tokens: maxCriteriaTokens,
  });
  return { directory: dir, version };
}

/** Rows per sidecar call, as onnxruntime-node's default. */
const BATCH = 16;

/**
 * μ's torch backend: the export's checkpoint loaded into the sidecar (`mu.load`), behind the same
 * `MuEngine` seam as onnxruntime-node, so `generateCriteria`/`scoreSteps`/`rateSteps` give the
 * same criteria and scores from both. The sidecar's parameter fingerprint must match the
 * manifest's: a checkpoint of other weights is a `ModelCorruptError`.
 */
export async function sidecarMuEngine(client: SidecarClient, directory: string): Promise<MuEngine> {
  const { manifest, tokenizer } = await readModel(directory);
  // The sidecar's mu.load reads `mu.pt` in the directory it is given.
  if (manifest.checkpoint !== "mu.pt")
    throw new ModelFormatError(
      directory,
      manifest.checkpoint === undefined
        ? "no checkpoint: this export carries ONNX graphs only, not torch weights"
        : `checkpoint ${JSON.stringify(manifest.checkpoint)}; the sidecar loads "mu.pt"`,
    );
  await client.request("mu.load", { dir: directory });
  const { fingerprint } = await client.request("mu.fingerprint", {});
  if (fingerprint !== manifest.training.fingerprint)
    throw new ModelCorruptError(
      directory,
      manifest.checkpoint,
      `holds weights with fingerprint ${fingerprint}, the manifest says ${manifest.training.fingerprint}`,
    );
  return engineOf(client, manifest, tokenizer);
}

function engineOf(client: SidecarClient, manifest: ModelManifest, tokenizer: ByteBpeTokenizer): MuEngine {
  return {
    manifest,
    tokenizer,
    async generate(prompts, maxNewTokens, plan) {
      const ids: number[][] = [];
      const finished: boolean[] = [];
      for (let start = 0; start < prompts.length; start += BATCH) {
        const streams = plan.streams?.slice(start, start + BATCH);
        const out = await client.request("mu.generate", {
          prompts: prompts.slice(start, start + BATCH),
          max_new_tokens: maxNewTokens,
          eos_id: EOS_ID,
          ...(plan.temperature > 0
            ? { temperature: plan.temperature, rng: streams!.map((s) => ({ ...s, words: [...s.words] })) }
            : {}),
        });
        ids.push(...out.ids);
        finished.push(...out.finished);
      }
      return { ids, finished };
    },
    async score(rows) {
      const d: number[][] = [];
      for (let start = 0; start < rows.length; start += BATCH) {
        const out = await client.request("mu.scores", {
          steps: rows.slice(start, start + BATCH).map((r) => ({ prompt: r.prompt, criteria: r.criteria })),
        });
        d.push(...out.d);
      }
      return d;
    },
  };
}
