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
  type MuTokenizer,
  sentencePieceFileOfGguf,
  sentencePieceTokenizer,
} from "@rubric/arco-heads";
import { type GgufVocabulary, type MuSummary, RemoteMu, type SidecarClient } from "@rubric/sidecar";
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
  /**
   * A pretrained llama as μ's backbone (ours, on a CPU: the inductive bias ARCO's pretrained μ
   * has): a GGUF file of F32 or F16 tensors, as the sidecar's file system names it. Its weights,
   * shape and SentencePiece vocabulary replace the small transformer and the tokenizer trained
   * here, so `shape` (but for `maxSequence`, a cap on the file's context), `vocabularySize`,
   * `corpus`, `texts` and `wordVectors` do not apply and are refused. It trains whole (no LoRA).
   */
  readonly backbone?: { readonly gguf: string };
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
  tokenizer: MuTokenizer,
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
export function sftIds(tokenizer: MuTokenizer, example: MuSftExample) {
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
  tokenizer: MuTokenizer,
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
  // Checked before a tokenizer is trained or the sidecar's μ replaced.
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
  const maxCriteriaTokens = options.maxCriteriaTokens ?? 128;
  const { mu, tokenizer } =
    options.backbone === undefined
      ? await tinyMu(client, k, options)
      : await llamaMu(client, k, options.backbone, options);
  if (options.pretrain !== undefined) {
    await pretrainMu(mu, tokenizer, options.pretrain.texts, mu.summary.max_seq_len, options.pretrain);
  }
  if (options.sft !== undefined) {
    await sftMu(mu, tokenizer, options.sft.examples, options.sft);
  }
  return { ...(await exportMu(mu, root, tokenizer, maxCriteriaTokens, options.prompt)), mu };
}

/**
 * The small μ: a byte-level BPE trained here on the corpus, the prompt's wording and the SFT
 * texts, then `mu.init` of a small transformer of `shape` over its vocabulary. The SFT prompts
 * are checked against the positions before the sidecar's μ is replaced.
 */
async function tinyMu(
  client: SidecarClient,
  k: number,
  options: CreateMuOptions,
): Promise<{ mu: RemoteMu; tokenizer: MuTokenizer }> {
  const shape = options.shape ?? {};
  const sftTexts = [
    ...(options.texts ?? []),
    ...(options.sft?.examples ?? []).flatMap((e) => [promptText(e.messages), e.target]),
  ];
  const tokenizer = trainMuTokenizer(options.corpus ?? [], k, options.vocabularySize ?? 1024, sftTexts, options.prompt);
  const maxSequence = shape.maxSequence ?? 1024;
  checkPromptsFit(tokenizer, options, maxSequence);
  const mu = await RemoteMu.init(client, {
    model: {
      kind: "tiny",
      vocab_size: tokenizer.vocabularySize,
      d_model: shape.dModel ?? 64,
      n_heads: shape.heads ?? 4,
      n_layers: shape.layers ?? 2,
      max_seq_len: maxSequence,
    },
    ...muInitSettings(k, options),
  });
  if (options.wordVectors !== undefined) {
    const embeddings = tokenEmbeddings(tokenizer, options.wordVectors, {
      dModel: shape.dModel ?? 64,
      seed: options.seed ?? 0,
    });
    if (embeddings.matched > 0) await mu.embed(embeddings.ids, embeddings.rows);
    options.onEmbedded?.({ matched: embeddings.matched, vocabularySize: embeddings.vocabularySize });
  }
  return { mu, tokenizer };
}

/**
 * The export fits a prompt into the positions its criteria leave (older turns dropped), so a
 * longer SFT prompt would teach μ a text it is never scored on: refused, naming the example.
 */
function checkPromptsFit(tokenizer: MuTokenizer, options: CreateMuOptions, maxSequence: number): void {
  const budget = maxSequence - (options.maxCriteriaTokens ?? 128);
  (options.sft?.examples ?? []).forEach((example, i) => {
    const tokens = sftIds(tokenizer, example).prompt.length;
    if (tokens > budget)
      throw new ArcoInputError(
        `sft.examples[${i}]`,
        `its prompt takes ${tokens} tokens, more than the ${budget} the export leaves for a prompt (maxSequence − maxCriteriaTokens): shorten its history or observations, or widen the model`,
      );
  });
}

/** What `mu.init` takes whatever the backbone: K, the seed, the pooling, the device. */
function muInitSettings(k: number, options: CreateMuOptions) {
  return {
    k,
    seed: options.seed,
    pooling: options.pooling,
    ...(options.device === undefined ? {} : { device: options.device }),
  };
}

/**
 * A μ on a pretrained llama (`backbone.gguf`): the sidecar reads the file's weights and shape and
 * returns its vocabulary, which becomes μ's tokenizer. The options that size or tokenize the small
 * μ are refused by name, before the sidecar's μ is replaced.
 */
async function llamaMu(
  client: SidecarClient,
  k: number,
  backbone: { readonly gguf: string },
  options: CreateMuOptions,
): Promise<{ mu: RemoteMu; tokenizer: MuTokenizer }> {
  const { dModel, heads, layers } = options.shape ?? {};
  const notWith = Object.entries({
    "shape.dModel": dModel,
    "shape.heads": heads,
    "shape.layers": layers,
    vocabularySize: options.vocabularySize,
    corpus: options.corpus,
    texts: options.texts,
    wordVectors: options.wordVectors,
  }).find(([, value]) => value !== undefined)?.[0];
  if (notWith !== undefined)
    throw new ArcoInputError(
      notWith,
      "does not apply with a llama backbone: the GGUF file sets μ's shape, vocabulary and token embeddings",
    );
  const mu = await RemoteMu.init(client, {
    model: {
      kind: "llama",
      gguf: backbone.gguf,
      ...(options.shape?.maxSequence === undefined ? {} : { max_seq_len: options.shape.maxSequence }),
    },
    ...muInitSettings(k, options),
  });
  if (mu.vocabulary === undefined)
    throw new ArcoInputError(
      "backbone.gguf",
      "the sidecar returned no vocabulary for this llama μ (a sidecar older than llama μ?)",
    );
  const tokenizer = llamaTokenizer(mu.vocabulary, backbone.gguf);
  // After mu.init, unlike the small μ's check: the vocabulary comes from the sidecar's reading of the file.
  checkPromptsFit(tokenizer, options, mu.summary.max_seq_len);
  return { mu, tokenizer };
}

/**
 * μ's tokenizer from a llama vocabulary. μ frames its sequences with ids 1 (begin) and 2 (end), a
 * llama SentencePiece vocabulary's `<s>` and `</s>`; a file whose special ids are elsewhere is refused.
 */
export function llamaTokenizer(vocabulary: GgufVocabulary, file: string): MuTokenizer {
  if (vocabulary.bos !== BOS_ID || vocabulary.eos !== EOS_ID)
    throw new ArcoInputError(
      "backbone.gguf",
      `${file}: its vocabulary begins sequences with id ${vocabulary.bos} and ends them with ${vocabulary.eos}; μ frames them with ${BOS_ID} and ${EOS_ID}`,
    );
  return sentencePieceTokenizer(
    sentencePieceFileOfGguf({
      tokens: vocabulary.tokens,
      scores: vocabulary.scores,
      types: vocabulary.types,
      bos: vocabulary.bos,
      eos: vocabulary.eos,
      unknown: vocabulary.unknown,
      addSpacePrefix: vocabulary.add_space_prefix,
    }),
  );
}

/**
 * Exports the sidecar's μ as the next version under `root`, with `tokenizer` travelling inside it
 * and `prompt` (the step prompt μ reads) kept in its manifest.
 */
export async function exportMu(
  mu: RemoteMu,
  root: string,
  tokenizer: MuTokenizer,
  maxCriteriaTokens: number,
  prompt?: StepPromptSettings,
): Promise<MuExport> {
  const settings = prompt === undefined ? {} : definedFields(prompt);
  const { dir, version } = await mu.export(root, {
    tokenizer: { kind: tokenizer.kind, files: { [TOKENIZER_FILE]: JSON.stringify(tokenizer.toFile()) } },
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
function engineOf(mu: RemoteMu, manifest: ModelManifest, tokenizer: MuTokenizer, batch: number): MuEngine {
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
