import { createRng, definedFields, shuffle } from "@rubric/core";
import {
  ArcoInputError,
  BOS_ID,
  criteriaIds,
  type MuSftExample,
  criteriaTarget,
  EOS_ID,
  MANIFEST_FILE,
  type ModelManifest,
  ModelCorruptError,
  ModelFormatError,
  type MuEngine,
  type MuPooling,
  promptText,
  readModel,
  type Step,
  stepPrompt,
  type StepPromptSettings,
  trainByteBpe,
  type ByteBpeTokenizer,
  byteBpeTokenizer,
} from "@rubric/arco-heads";
import { type MuSummary, RemoteMu, type SidecarClient } from "@rubric/sidecar";
import { tokenEmbeddings, type WordVectors } from "../word-vectors/word-vectors.js";

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
  /** What the score head reads: ARCO's `prompt+criteria` (default), `criteria` or `last` (`MU_POOLINGS`, ours). */
  readonly pooling?: MuPooling;
  readonly shape?: MuShape;
  /** New tokens μ may write for a step's criteria (default 128, ARCO's). */
  readonly maxCriteriaTokens?: number;
  /** The tokenizer's vocabulary (default 1024). */
  readonly vocabularySize?: number;
  /**
   * Steps whose prompts the tokenizer learns its merges from: the agent's own steps keep μ's
   * sequences short. Without them (and without `sft`) it learns from the prompt's fixed wording alone.
   */
  readonly corpus?: readonly Step[];
  /** Further texts the tokenizer learns from (e.g. a teacher's criteria, so μ writes them in few tokens). */
  readonly texts?: readonly string[];
  /**
   * μ-SFT examples to fine-tune on before the first export (their prompts and targets join the
   * tokenizer's corpus). Each has K scores and K criteria, or no criteria at all: ARCO's "no
   * rubric" ablation (`--rubric_mode direct`), a K = 1 score head regressed on a scalar with no
   * criteria text, which `MuCritic`'s `criteria: { kind: "none" }` then scores.
   */
  readonly sft?: { readonly examples: readonly MuSftExample[] } & SftMuOptions;
  /**
   * Language-model pretraining before the warm-up (ours, not ARCO's, whose μ starts from a
   * pretrained LM): passes of next-token CE over `texts` (`mu.pretrain`), after the word vectors
   * are set and before `sft`. The tokenizer is learned as without them, so a μ pretrained this
   * way differs from one that is not in its weights alone.
   */
  readonly pretrain?: { readonly texts: readonly string[] } & PretrainMuOptions;
  /**
   * Pretrained word vectors for the token embeddings (`readWordVectors`): every token that is a
   * whole word they know starts from its vector (`tokenEmbeddings`), set by `mu.embed` before
   * any training. Without them every row starts random, as a μ trained from scratch does.
   */
  readonly wordVectors?: WordVectors;
  /**
   * The step prompt this μ will read (style, environment, budget label, observation cut): the
   * tokenizer learns its wording, SFT prompts must use it, and the export keeps it in its manifest.
   */
  readonly prompt?: StepPromptSettings;
  /** Told how many tokens the word vectors covered, once they are set. */
  readonly onEmbedded?: (embedded: { readonly matched: number; readonly vocabularySize: number }) => void;
  /** torch's device for μ (default the sidecar's: "cpu"); its checkpoints and exports record it. */
  readonly device?: string;
}

export interface SftMuOptions {
  /** Passes over the examples (default 10, ARCO's). */
  readonly epochs?: number;
  /** Examples per `mu.sft` step (default 8). */
  readonly batchSize?: number;
  /** The backbone's learning rate (default 5e-5, ARCO's for its LoRA μ; a small μ from scratch wants ~3e-3). */
  readonly learningRate?: number;
  /** The score head's (default 1e-3, ARCO's). */
  readonly headLearningRate?: number;
  /** The order of the examples in each epoch (default 0). */
  readonly seed?: number;
  /** After each epoch: its mean loss, CE and MSE. */
  readonly onEpoch?: (epoch: SftEpoch) => void;
}

export interface PretrainMuOptions {
  /** Passes over the texts (default 1). */
  readonly epochs?: number;
  /** Windows per `mu.pretrain` step (default 8). */
  readonly batchSize?: number;
  /** The backbone's learning rate (default 3e-3, a small μ from scratch). */
  readonly learningRate?: number;
  /** The order of the windows in each epoch (default 0). */
  readonly seed?: number;
  /** After each epoch: its mean CE per token. */
  readonly onEpoch?: (epoch: PretrainEpoch) => void;
}

export interface PretrainEpoch {
  readonly epoch: number;
  readonly ce: number;
  /** Tokens predicted in the epoch. */
  readonly tokens: number;
}

/**
 * Language-model pretraining of μ in the sidecar (ours): each text is `<bos>` + its tokens, cut
 * into windows of `maxSequence` positions (a last window of one token is dropped: nothing to
 * predict), and `epochs` passes of next-token CE run over the windows in seeded random order.
 * Returns each epoch's CE per token, weighted by tokens.
 */
export async function pretrainMu(
  mu: RemoteMu,
  tokenizer: ByteBpeTokenizer,
  texts: readonly string[],
  maxSequence: number,
  options: PretrainMuOptions = {},
): Promise<PretrainEpoch[]> {
  const windows = texts.flatMap((text) => {
    const ids = [BOS_ID, ...tokenizer.encode(text)];
    const out: number[][] = [];
    for (let start = 0; start < ids.length; start += maxSequence) {
      const window = ids.slice(start, start + maxSequence);
      if (window.length >= 2) out.push(window);
    }
    return out;
  });
  if (windows.length === 0) throw new ArcoInputError("pretrain.texts", "expected a text of at least one token");
  const size = options.batchSize ?? 8;
  const rng = createRng(options.seed ?? 0).fork("mu-pretrain");
  const out: PretrainEpoch[] = [];
  for (let epoch = 1; epoch <= (options.epochs ?? 1); epoch++) {
    const order = shuffle(windows, rng.fork(`epoch:${epoch}`));
    let weighted = 0;
    let tokens = 0;
    for (let start = 0; start < order.length; start += size) {
      const metrics = await mu.pretrain(order.slice(start, start + size), {
        learningRate: options.learningRate ?? 3e-3,
      });
      weighted += metrics.ce * metrics.tokens;
      tokens += metrics.tokens;
    }
    const summary = { epoch, ce: weighted / tokens, tokens };
    options.onEpoch?.(summary);
    out.push(summary);
  }
  return out;
}

export interface SftEpoch {
  readonly epoch: number;
  readonly loss: number;
  readonly ce: number;
  readonly mse: number;
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
export function trainMuTokenizer(
  corpus: readonly Step[],
  k: number,
  vocabularySize: number,
  texts: readonly string[] = [],
  prompt: StepPromptSettings = {},
): ByteBpeTokenizer {
  const prompts = (corpus.length > 0 || texts.length > 0 ? corpus : [TEMPLATE_STEP]).map((step) =>
    promptText(stepPrompt(step, { ...prompt, k })),
  );
  // The JSON skeleton alone: placeholder words here would become tokens an untrained μ can emit whole.
  const frame = criteriaTarget(Array.from({ length: k }, () => ""));
  return byteBpeTokenizer(trainByteBpe([...prompts, ...texts, frame, frame], vocabularySize));
}

/** The ids `mu.sft` trains on for one example: `<bos>` + its prompt, and its criteria with EOS. */
export function sftIds(tokenizer: ByteBpeTokenizer, example: MuSftExample) {
  return {
    prompt: [BOS_ID, ...tokenizer.encode(promptText(example.messages))],
    criteria: criteriaIds(tokenizer, example.criteria, true),
    scores: example.scores,
  };
}

/**
 * ARCO's μ warm-up in the sidecar: `epochs` passes of CE on the criteria + 10 × MSE on the
 * teacher's scores (`mu.sft`), in seeded random order. Returns each epoch's mean loss.
 */
export async function sftMu(
  mu: RemoteMu,
  tokenizer: ByteBpeTokenizer,
  examples: readonly MuSftExample[],
  options: SftMuOptions = {},
): Promise<SftEpoch[]> {
  return sftRows(
    mu,
    examples.map((example) => sftIds(tokenizer, example)),
    options,
  );
}

/** One μ-SFT row as `mu.sft` reads it: prompt ids, criteria ids (EOS-terminated), the K target scores. */
export interface SftRow {
  readonly prompt: readonly number[];
  readonly criteria: readonly number[];
  readonly scores: readonly number[];
}

/** {@link sftMu} on rows already tokenized (and fitted to the model's positions by the caller). */
export async function sftRows(mu: RemoteMu, rows: readonly SftRow[], options: SftMuOptions = {}): Promise<SftEpoch[]> {
  const epochs = options.epochs ?? 10;
  const size = options.batchSize ?? 8;
  const rng = createRng(options.seed ?? 0).fork("mu-sft");
  const out: SftEpoch[] = [];
  for (let epoch = 1; epoch <= epochs; epoch++) {
    const order = shuffle(rows, rng.fork(`epoch:${epoch}`));
    let loss = 0;
    let ce = 0;
    let mse = 0;
    let batches = 0;
    for (let start = 0; start < order.length; start += size) {
      const metrics = await mu.sft(order.slice(start, start + size), {
        learningRate: options.learningRate ?? 5e-5,
        headLearningRate: options.headLearningRate ?? 1e-3,
      });
      loss += metrics.loss;
      ce += metrics.ce;
      mse += metrics.mse;
      batches++;
    }
    const summary = { epoch, loss: loss / batches, ce: ce / batches, mse: mse / batches };
    options.onEpoch?.(summary);
    out.push(summary);
  }
  return out;
}

/**
 * A new μ in the sidecar (`mu.init`) with a tokenizer trained here, fine-tuned on `sft` when
 * given, exported as the first version under `root` (`root/v0001`, tokenizer and torch
 * checkpoint inside).
 */
export async function createMu(
  client: SidecarClient,
  root: string,
  options: CreateMuOptions = {},
): Promise<MuExport & { readonly mu: RemoteMu }> {
  const k = options.k ?? 3;
  // Checked before the tokenizer is trained or the sidecar's μ replaced.
  const bad = (options.sft?.examples ?? []).findIndex(
    (e) => (e.criteria.length !== k && e.criteria.length !== 0) || e.scores.length !== k,
  );
  if (bad !== -1)
    throw new ArcoInputError(`sft.examples[${bad}]`, `expected K = ${k} scores, and K criteria or none (no rubric)`);
  // A step prompt states its own K; one written for another K would teach μ a prompt it is
  // never scored with (the PRM row's warm-up bug).
  (options.sft?.examples ?? []).forEach((example, i) => {
    for (const message of example.messages) {
      const stated = /Write exactly (\d+) short criteria/.exec(message.content)?.[1];
      if (stated !== undefined && Number(stated) !== k)
        throw new ArcoInputError(
          `sft.examples[${i}]`,
          `its prompt asks for ${stated} criteria but this μ writes K = ${k}: build the prompt with the same K`,
        );
    }
  });
  const shape = options.shape ?? {};
  const sftTexts = [
    ...(options.texts ?? []),
    ...(options.sft?.examples ?? []).flatMap((e) => [promptText(e.messages), e.target]),
  ];
  const tokenizer = trainMuTokenizer(options.corpus ?? [], k, options.vocabularySize ?? 1024, sftTexts, options.prompt);
  const maxCriteriaTokens = options.maxCriteriaTokens ?? 128;
  // The export fits a prompt into the positions its criteria leave (older turns dropped), so a
  // longer training prompt would teach μ a text it is never scored on.
  const budget = (shape.maxSequence ?? 1024) - maxCriteriaTokens;
  (options.sft?.examples ?? []).forEach((example, i) => {
    const tokens = sftIds(tokenizer, example).prompt.length;
    if (tokens > budget)
      throw new ArcoInputError(
        `sft.examples[${i}]`,
        `its prompt takes ${tokens} tokens, more than the ${budget} the export leaves for a prompt (maxSequence − maxCriteriaTokens): shorten its history or observations, or widen the model`,
      );
  });
  const mu = await RemoteMu.init(client, {
    model: {
      kind: "tiny",
      vocab_size: tokenizer.vocabularySize,
      d_model: shape.dModel ?? 64,
      n_heads: shape.heads ?? 4,
      n_layers: shape.layers ?? 2,
      max_seq_len: shape.maxSequence ?? 1024,
    },
    k,
    seed: options.seed,
    pooling: options.pooling,
    ...(options.device === undefined ? {} : { device: options.device }),
  });
  if (options.wordVectors !== undefined) {
    const embeddings = tokenEmbeddings(tokenizer, options.wordVectors, {
      dModel: shape.dModel ?? 64,
      seed: options.seed ?? 0,
    });
    if (embeddings.matched > 0) await mu.embed(embeddings.ids, embeddings.rows);
    options.onEmbedded?.({ matched: embeddings.matched, vocabularySize: embeddings.vocabularySize });
  }
  if (options.pretrain !== undefined) {
    await pretrainMu(mu, tokenizer, options.pretrain.texts, shape.maxSequence ?? 1024, options.pretrain);
  }
  if (options.sft !== undefined) {
    await sftMu(mu, tokenizer, options.sft.examples, options.sft);
  }
  return { ...(await exportMu(mu, root, tokenizer, maxCriteriaTokens, options.prompt)), mu };
}

/**
 * Exports the sidecar's μ as the next version under `root`, with `tokenizer` travelling inside it
 * and `prompt` (the step prompt μ reads) kept in its manifest.
 */
export async function exportMu(
  mu: RemoteMu,
  root: string,
  tokenizer: ByteBpeTokenizer,
  maxCriteriaTokens: number,
  prompt?: StepPromptSettings,
): Promise<MuExport> {
  const settings = prompt === undefined ? {} : definedFields(prompt);
  const { dir, version } = await mu.export(root, {
    tokenizer: { kind: "byte-bpe", files: { [TOKENIZER_FILE]: JSON.stringify(tokenizer.toFile()) } },
    max_criteria_tokens: maxCriteriaTokens,
    ...(Object.keys(settings).length === 0 ? {} : { prompt: settings }),
  });
  return { directory: dir, version };
}

/** Rows per sidecar call by default, as onnxruntime-node's default. */
const BATCH = 8;

/**
 * μ's torch backend: the export's checkpoint loaded into the sidecar (`mu.load`), behind the same
 * `MuEngine` seam as onnxruntime-node, so `generateCriteria`/`scoreSteps`/`rateSteps` give the
 * same criteria and scores from both. The sidecar's parameter fingerprint must match the
 * manifest's: a checkpoint of other weights is a `ModelCorruptError`; so is a manifest that does
 * not describe the checkpoint it lists (`checkManifestFits`).
 */
export async function sidecarMuEngine(client: SidecarClient, directory: string): Promise<MuEngine> {
  return (await loadSidecarMu(client, directory)).engine;
}

/**
 * An export's checkpoint loaded into the sidecar, checked as {@link sidecarMuEngine} checks it:
 * the sidecar's μ (to train on) and the engine that runs it (to write and score criteria with
 * the weights as they are at each call, so criteria follow μ while it trains).
 */
export async function loadSidecarMu(
  client: SidecarClient,
  directory: string,
  options: {
    readonly batch?: number;
    /** Where to put μ instead of the device it was trained on ("cpu" for a μ trained on a GPU). */
    readonly device?: string;
  } = {},
): Promise<{ readonly mu: RemoteMu; readonly engine: MuEngine }> {
  const { manifest, tokenizer } = await readModel(directory);
  // The sidecar's mu.load reads `mu.pt` in the directory it is given.
  if (manifest.checkpoint !== "mu.pt")
    throw new ModelFormatError(
      directory,
      manifest.checkpoint === undefined
        ? "no checkpoint: this export carries ONNX graphs only, not torch weights"
        : `checkpoint ${JSON.stringify(manifest.checkpoint)}; the sidecar loads "mu.pt"`,
    );
  const mu = await RemoteMu.load(client, directory, options.device === undefined ? {} : { device: options.device });
  checkManifestFits(directory, manifest, mu.summary);
  const { fingerprint } = await mu.fingerprint();
  if (fingerprint !== manifest.training.fingerprint)
    throw new ModelCorruptError(
      directory,
      manifest.checkpoint,
      `holds weights with fingerprint ${fingerprint}, the manifest says ${manifest.training.fingerprint}`,
    );
  return { mu, engine: engineOf(mu, manifest, tokenizer, options.batch ?? BATCH) };
}

/**
 * The manifest against the μ its checkpoint holds. The manifest is not hashed, and the engine
 * reads K, the vocabulary and the positions from it: a manifest edited to K = 5 over a K = 3 μ gave
 * exit 0 with wrong criteria counts. Any field that differs is a `ModelCorruptError` naming
 * `manifest.json` and both values; the positions need only fit (a shorter limit is safe).
 */
function checkManifestFits(directory: string, manifest: ModelManifest, mu: MuSummary): void {
  const checkpoint = manifest.checkpoint ?? "mu.pt";
  const differs = (field: string, claimed: unknown, held: unknown) =>
    new ModelCorruptError(
      directory,
      MANIFEST_FILE,
      `${field} is ${JSON.stringify(claimed)} but the μ in ${checkpoint} has ${JSON.stringify(held)}`,
    );
  if (manifest.k !== mu.k) throw differs("k", manifest.k, mu.k);
  if (manifest.model.vocabularySize !== mu.vocab_size)
    throw differs("model.vocabularySize", manifest.model.vocabularySize, mu.vocab_size);
  if (manifest.pooling !== mu.pooling) throw differs("pooling", manifest.pooling, mu.pooling);
  if (manifest.model.parameters !== mu.parameters)
    throw differs("model.parameters", manifest.model.parameters, mu.parameters);
  if (manifest.maxLengths.sequence > mu.max_seq_len)
    throw new ModelCorruptError(
      directory,
      MANIFEST_FILE,
      `maxLengths.sequence is ${manifest.maxLengths.sequence} but ${checkpoint} holds a μ of ${mu.max_seq_len} positions`,
    );
}

/** The engine over the sidecar's μ, `batch` rows per call (a training loop rates whole batches at once). */
function engineOf(mu: RemoteMu, manifest: ModelManifest, tokenizer: ByteBpeTokenizer, batch: number): MuEngine {
  return {
    manifest,
    tokenizer,
    async generate(prompts, maxNewTokens, plan) {
      const ids: number[][] = [];
      const finished: boolean[] = [];
      for (let start = 0; start < prompts.length; start += batch) {
        const streams = plan.streams?.slice(start, start + batch);
        const out = await mu.generate({
          prompts: prompts.slice(start, start + batch),
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
      for (let start = 0; start < rows.length; start += batch) {
        const out = await mu.scores(rows.slice(start, start + batch));
        d.push(...out.d);
      }
      return d;
    },
  };
}
