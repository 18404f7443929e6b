import { statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type {
  ChatMessage,
  GeneratedChoice,
  GenerateRequest,
  GenerateResponse,
  LanguageModel,
  TokenLogprob,
} from "@rubric/core";
import { Effect } from "effect";
import type {
  ChatHistoryItem,
  ChatWrapper,
  ControlledEvaluateInputItem,
  GbnfJsonSchema,
  Llama,
  LlamaCompletion,
  LlamaContext,
  LlamaContextSequence,
  LlamaGrammar,
  LlamaModel,
  LlamaText,
  Token,
} from "node-llama-cpp";
import { z } from "zod";
import { ProviderConfigError, ProviderRequestError } from "../errors.js";
import { extractJson, formatZodIssues } from "@rubric/core";
import { runEffect } from "@rubric/core/effect";

export interface LlamaCppOptions {
  /** A local `.gguf` file. */
  readonly modelPath: string;
  /**
   * CPU threads for evaluation. Default {@link defaultLlamaThreads}: half the logical cores,
   * at least 1. More threads than physical cores makes llama.cpp's spinning threads fight: on a
   * 2-core machine 128 tokens of a tiny model took ≈100 ms with 1 thread and ≈3.4 s with 2
   * (and 44 s with node-llama-cpp's own default of 4).
   */
  readonly threads?: number;
  /** Context window in tokens; prompt plus answer must fit. Default 2048. */
  readonly contextSize?: number;
  /** GPU offload; default `false` (CPU only). `true` lets node-llama-cpp pick. */
  readonly gpu?: boolean | "cuda" | "vulkan" | "metal";
  /**
   * How messages become the prompt. `auto` (default): the GGUF's chat template when it has one,
   * else `plain`, a `User:`/`Assistant:` transcript for base models without a template.
   */
  readonly promptFormat?: "auto" | "chat-template" | "plain";
  /** `maxTokens` for requests that set none; generation also stops at end-of-text. Default 512. */
  readonly defaultMaxTokens?: number;
  /** Model id reported (and used in cache keys). Default: the file name, e.g. `stories260K.gguf`. */
  readonly modelId?: string;
  /**
   * llama.cpp's flash attention. Default `false` on the CPU, where it is the slower kernel: a
   * 5,236-token prompt of stories260K took 27 s with it and 5.2 s without (one thread);
   * with `gpu` set, node-llama-cpp decides (`"auto"`).
   */
  readonly flashAttention?: boolean;
  /**
   * Prompt cache: how many recent calls' evaluated tokens are kept, each in its own context
   * sequence of `contextSize` tokens (KV memory grows with it). A call continues from the kept
   * state that shares the longest prefix with its prompt and evaluates only the rest — the
   * worker's N samples of one brief, or the judge's outputs after one long task, pay for the
   * shared text once. Default 1; 0 evaluates every prompt from an empty context.
   * `usage.cachedInputTokens` says how much was reused. On the CPU a reused prefix gives the same
   * tokens as a fresh evaluation (tested with stories260K); other backends may split batches
   * differently and change the last bits of the logits, so use 0 where a request must give the
   * same text whatever ran before it.
   */
  readonly promptCache?: number;
}

/** A local model; holds native memory until {@link LlamaCppModel.dispose} is called. */
export interface LlamaCppModel extends LanguageModel {
  /** Frees the model and context. Waits for a running generation; later calls reject. */
  dispose(): Promise<void>;
}

const LlamaCppOptionsSchema = z.strictObject({
  modelPath: z.string().min(1),
  threads: z.int().positive().optional(),
  contextSize: z.int().min(64).optional(),
  gpu: z.union([z.boolean(), z.enum(["cuda", "vulkan", "metal"])]).optional(),
  promptFormat: z.enum(["auto", "chat-template", "plain"]).optional(),
  defaultMaxTokens: z.int().positive().optional(),
  modelId: z.string().min(1).optional(),
  flashAttention: z.boolean().optional(),
  promptCache: z.int().min(0).max(64).optional(),
});

/** Half the logical cores (≈ the physical ones on SMT machines), at least 1; see `threads`. */
export function defaultLlamaThreads(): number {
  return Math.max(1, Math.floor(os.availableParallelism() / 2));
}

/**
 * A `LanguageModel` on a local GGUF file through node-llama-cpp. The model loads on the first
 * call (once; concurrent first calls share the load) and calls run one at a time.
 *
 * - JSON formats are enforced with a grammar from `createGrammarForJsonSchema`, so the text is
 *   always JSON of the schema's shape — except that integer `minimum`/`maximum` are NOT
 *   enforced by that grammar: bound integers with `enum` (e.g. `{ enum: [0, 1, 2, 3] }`).
 * - Sampling is reproducible: sample k uses seed `seed + k` (`seed` defaults to 0);
 *   `temperature` defaults to 1 as in the OpenAI API; 0 is greedy.
 * - `topLogprobs` asks for a second, teacher-forced pass over prompt + answer that reports each
 *   answer token's log-probability under the model's unconstrained distribution (no grammar,
 *   temperature 1), with the `topLogprobs` likeliest alternatives.
 *
 * @example
 * const model = llamaCpp({ modelPath: "models/qwen2.5-0.5b-instruct-q4_k_m.gguf" });
 * const { choices } = await model.generate({
 *   messages: [{ role: "user", content: "Score 0-3: …" }],
 *   responseFormat: { type: "json-schema", name: "verdict", schema: { type: "object", properties: { score: { enum: [0, 1, 2, 3] } }, required: ["score"] } },
 *   seed: 7,
 * });
 * await model.dispose();
 */
export function llamaCpp(options: LlamaCppOptions): LlamaCppModel {
  const parsed = LlamaCppOptionsSchema.safeParse(options);
  if (!parsed.success) throw new ProviderConfigError(`llamaCpp: ${formatZodIssues(parsed.error, { separator: "; " })}`);
  const settings = {
    modelPath: path.resolve(parsed.data.modelPath),
    threads: parsed.data.threads ?? defaultLlamaThreads(),
    contextSize: parsed.data.contextSize ?? 2048,
    gpu: parsed.data.gpu ?? false,
    promptFormat: parsed.data.promptFormat ?? "auto",
    defaultMaxTokens: parsed.data.defaultMaxTokens ?? 512,
    flashAttention:
      parsed.data.flashAttention ??
      (parsed.data.gpu === undefined || parsed.data.gpu === false ? false : ("auto" as const)),
    promptCache: parsed.data.promptCache ?? 1,
  };
  const modelId = parsed.data.modelId ?? path.basename(settings.modelPath);

  // One sequence, one generation at a time: a second call would interleave with the first's
  // history resets and seeds. Declared with an Effect semaphore rather than a promise chain.
  const lock = Effect.unsafeMakeSemaphore(1);
  const exclusive = <A>(task: () => Promise<A>): Promise<A> =>
    runEffect(lock.withPermits(1)(Effect.tryPromise({ try: task, catch: (error): unknown => error })));

  let loading: Promise<LoadedModel> | undefined;
  let disposed = false;
  const load = (): Promise<LoadedModel> => {
    loading ??= loadModel(settings).catch((error: unknown) => {
      loading = undefined; // a later call may find the file, or the memory, that this one lacked
      throw error;
    });
    return loading;
  };

  return {
    provider: "llama-cpp",
    modelId,
    async generate(request: GenerateRequest): Promise<GenerateResponse> {
      const whenDisposed = () => new ProviderConfigError(`llamaCpp(${modelId}) was disposed`);
      if (disposed) throw whenDisposed();
      const loaded = await load();
      return exclusive(async () => {
        // dispose() may have taken the lock while this call waited for it.
        if (disposed) throw whenDisposed();
        return generateWith(loaded, request, settings.defaultMaxTokens);
      });
    },
    async dispose(): Promise<void> {
      if (disposed) return;
      disposed = true;
      const pending = loading;
      loading = undefined;
      if (pending === undefined) return;
      const loaded = await pending.catch(() => undefined);
      if (loaded === undefined) return;
      await exclusive(async () => {
        await loaded.context.dispose();
        await loaded.model.dispose();
        await loaded.llama.dispose();
      });
    },
  };
}

/** One context sequence and what last ran in it. */
interface Slot {
  readonly sequence: LlamaContextSequence;
  readonly completion: LlamaCompletion;
  /** Call counter at its last use: the least recently used slot is evicted first. */
  lastUsed: number;
}

interface LoadedModel {
  readonly llama: Llama;
  readonly model: LlamaModel;
  readonly context: LlamaContext;
  /** One slot per kept prompt (`promptCache`, at least one). */
  readonly slots: readonly Slot[];
  /** Whether a call may continue from a slot's kept tokens (`promptCache` > 0). */
  readonly reusePrefix: boolean;
  calls: number;
  /** Set when prompts go through a chat template; undefined for the plain transcript. */
  readonly chatWrapper: ChatWrapper | undefined;
  /** The token LlamaCompletion prepends to every prompt, if any. */
  readonly beginningToken: Token | null;
  /** Grammars compiled per schema (by its JSON text): compiling costs more than a short answer. */
  readonly grammars: Map<string, Promise<LlamaGrammar>>;
}

/**
 * That `modelPath` is a file: what loading checks first, and what `providerFromSpec({checkFiles})`
 * checks up front, so a command refuses a missing model before any work rather than on its first call.
 */
export function checkModelFile(modelPath: string): void {
  const file = (() => {
    try {
      return statSync(modelPath);
    } catch {
      return undefined;
    }
  })();
  if (!file?.isFile()) throw new ProviderConfigError(`llamaCpp: no model file at ${modelPath}`);
}

async function loadModel(settings: {
  modelPath: string;
  threads: number;
  contextSize: number;
  gpu: boolean | "cuda" | "vulkan" | "metal";
  promptFormat: "auto" | "chat-template" | "plain";
  flashAttention: boolean | "auto";
  promptCache: number;
}): Promise<LoadedModel> {
  checkModelFile(settings.modelPath);

  // Imported on first use: node-llama-cpp takes ≈0.8 s to import and ~70 MB to install, a cost
  // every user of this package would otherwise pay, local model or not; it is an optional peer.
  const lib = await importNodeLlamaCpp();
  const llama = await lib.getLlama({
    gpu: settings.gpu === true ? "auto" : settings.gpu,
    // Never compile llama.cpp from source inside a verifier run: use the prebuilt binary or fail.
    build: "never",
    ...(settings.gpu === false ? { maxThreads: settings.threads } : {}),
    logLevel: lib.LlamaLogLevel.error,
    progressLogs: false,
  });
  const model = await llama.loadModel({ modelPath: settings.modelPath });
  const sequences = Math.max(1, settings.promptCache);
  const context = await model.createContext({
    contextSize: settings.contextSize,
    threads: settings.threads,
    sequences,
    flashAttention: settings.flashAttention,
  });
  const slots = Array.from({ length: sequences }, (): Slot => {
    const sequence = context.getSequence();
    return { sequence, completion: new lib.LlamaCompletion({ contextSequence: sequence }), lastUsed: -1 };
  });
  const hasTemplate = typeof model.fileInfo.metadata.tokenizer?.chat_template === "string";
  // stories260K (and other base models) carry no chat template: node-llama-cpp would fall back
  // to a guessed wrapper (Llama 2's [INST] format) the model never saw, so `auto` uses a plain
  // role-labelled transcript completed by LlamaCompletion instead.
  const useTemplate = settings.promptFormat === "chat-template" || (settings.promptFormat === "auto" && hasTemplate);
  return {
    llama,
    model,
    context,
    slots,
    reusePrefix: settings.promptCache > 0,
    calls: 0,
    chatWrapper: useTemplate ? lib.resolveChatWrapper(model) : undefined,
    beginningToken: beginningToken(lib, model),
    grammars: new Map(),
  };
}

interface Prompt {
  /** Tokens handed to LlamaCompletion (it prepends the BOS token itself where the model wants one). */
  readonly tokens: Token[];
  readonly stopTriggers: readonly (string | LlamaText)[];
}

const PLAIN_STOP_TRIGGERS = ["\nUser:", "\nSystem:", "\nAssistant:"];

function buildPrompt(loaded: LoadedModel, messages: readonly ChatMessage[]): Prompt {
  const { model, chatWrapper, beginningToken: begin } = loaded;
  // A trailing assistant message is a prefix for the model to continue, as in node-llama-cpp.
  const continuesAssistant = messages.at(-1)?.role === "assistant";
  if (chatWrapper === undefined) {
    const label = { system: "System", user: "User", assistant: "Assistant" } as const;
    const transcript = messages.map((m) => `${label[m.role]}: ${m.content}`).join("\n\n");
    const text = continuesAssistant ? transcript : `${transcript}${transcript ? "\n\n" : ""}Assistant:`;
    return { tokens: model.tokenize(text, false, "trimLeadingSpace"), stopTriggers: PLAIN_STOP_TRIGGERS };
  }
  const history: ChatHistoryItem[] = messages.map(
    (m): ChatHistoryItem =>
      m.role === "assistant" ? { type: "model", response: [m.content] } : { type: m.role, text: m.content },
  );
  if (!continuesAssistant) history.push({ type: "model", response: [] });
  const state = chatWrapper.generateContextState({ chatHistory: history });
  const tokens = state.contextText.tokenize(model.tokenizer);
  // The rendered template already starts with BOS; LlamaCompletion would add a second one.
  return {
    tokens: begin !== null && tokens[0] === begin ? tokens.slice(1) : tokens,
    stopTriggers: state.stopGenerationTriggers,
  };
}

/** The token LlamaCompletion prepends (mirrors node-llama-cpp's internal `resolveBeginningTokenToPrepend`). */
async function importNodeLlamaCpp(): Promise<typeof import("node-llama-cpp")> {
  try {
    return await import("node-llama-cpp");
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") {
      throw new ProviderConfigError(
        "llamaCpp needs node-llama-cpp, an optional peer dependency of @rubric/providers: " +
          "install it beside it (npm install node-llama-cpp@^3.21.1)",
      );
    }
    throw error;
  }
}

function beginningToken(lib: typeof import("node-llama-cpp"), model: LlamaModel): Token | null {
  const vocabulary = model.vocabularyType;
  if (vocabulary === lib.LlamaVocabularyType.rwkv || vocabulary === lib.LlamaVocabularyType.ugm) return null;
  if (vocabulary === lib.LlamaVocabularyType.wpm) return model.tokens.bos;
  return model.tokens.shouldPrependBosToken ? model.tokens.bos : null;
}

async function grammarFor(loaded: LoadedModel, schema: Readonly<Record<string, unknown>>): Promise<LlamaGrammar> {
  const key = JSON.stringify(schema);
  let grammar = loaded.grammars.get(key);
  if (grammar === undefined) {
    // The schema is runtime data; the method's static schema-to-type inference has nothing to infer from.
    const createGrammar = loaded.llama.createGrammarForJsonSchema.bind(loaded.llama) as (
      schema: GbnfJsonSchema,
    ) => Promise<LlamaGrammar>;
    grammar = createGrammar(schema as GbnfJsonSchema).catch((error: unknown) => {
      loaded.grammars.delete(key);
      throw new ProviderRequestError(
        `llamaCpp cannot build a grammar for this JSON schema (${error instanceof Error ? error.message : String(error)})`,
      );
    });
    loaded.grammars.set(key, grammar);
  }
  return grammar;
}

const FINISH_REASONS: Record<string, string> = {
  eogToken: "stop",
  stopGenerationTrigger: "stop",
  customStopTrigger: "stop",
  maxTokens: "length",
  abort: "abort",
};

async function generateWith(
  loaded: LoadedModel,
  request: GenerateRequest,
  defaultMaxTokens: number,
): Promise<GenerateResponse> {
  request.signal?.throwIfAborted();
  const prompt = buildPrompt(loaded, request.messages);
  const begin = loaded.beginningToken;
  const evaluatedPrompt = begin === null ? prompt.tokens : [begin, ...prompt.tokens];
  const contextSize = loaded.context.contextSize;
  if (evaluatedPrompt.length >= contextSize) {
    throw new ProviderRequestError(
      `llamaCpp: the prompt is ${evaluatedPrompt.length} tokens, the context holds ${contextSize}; raise contextSize`,
    );
  }
  const grammar =
    request.responseFormat === undefined ? undefined : await grammarFor(loaded, request.responseFormat.schema);
  const samples = request.n ?? 1;
  const baseSeed = request.seed ?? 0;

  const { slot, cachedTokens } = await slotFor(loaded, evaluatedPrompt);
  const choices: GeneratedChoice[] = [];
  let outputTokens = 0;
  for (let k = 0; k < samples; k++) {
    const generated: Token[] = [];
    const result = await slot.completion.generateCompletionWithMeta(prompt.tokens, {
      maxTokens: request.maxTokens ?? defaultMaxTokens,
      temperature: request.temperature ?? 1,
      seed: baseSeed + k,
      grammar,
      customStopTriggers: prompt.stopTriggers,
      // Stop at the end of the context rather than shifting the prompt (the rubric) out of it.
      disableContextShift: true,
      signal: request.signal,
      onToken: (tokens) => generated.push(...tokens),
    });
    outputTokens += generated.length;
    const text = result.response.trim();
    const answerTokens = tokensCovering(loaded.model, evaluatedPrompt, generated, result.response.length);
    const logprobs =
      request.topLogprobs === undefined
        ? undefined
        : await scoreTokens(slot.sequence, loaded.model, evaluatedPrompt, answerTokens, request.topLogprobs);
    choices.push({
      text,
      ...(request.responseFormat === undefined ? {} : { json: extractJson(text) }),
      logprobs,
      finishReason: FINISH_REASONS[result.metadata.stopReason] ?? result.metadata.stopReason,
    });
  }
  // As in the OpenAI API, the prompt counts once however many samples share it.
  return {
    choices,
    usage: {
      inputTokens: evaluatedPrompt.length,
      outputTokens,
      ...(loaded.reusePrefix ? { cachedInputTokens: cachedTokens } : {}),
    },
  };
}

/**
 * The slot whose kept tokens share the longest prefix with the prompt, when that covers at
 * least half of it; otherwise the least recently used slot, so that an unrelated prompt (a
 * stakeholder's turn between a manager's) evicts the oldest state rather than the most useful.
 * Returns how many prompt tokens the slot already holds; LlamaCompletion itself erases what
 * differs and evaluates the rest. The last prompt token is always evaluated again, since the
 * next token is sampled from its output.
 */
async function slotFor(loaded: LoadedModel, prompt: readonly Token[]): Promise<{ slot: Slot; cachedTokens: number }> {
  loaded.calls += 1;
  if (!loaded.reusePrefix) {
    const slot = loaded.slots[0]!;
    await slot.sequence.clearHistory();
    return { slot, cachedTokens: 0 };
  }
  const shared = (slot: Slot) => slot.sequence.compareContextTokens(prompt as Token[]).firstDifferentIndex;
  const byAge = [...loaded.slots].sort((a, b) => a.lastUsed - b.lastUsed);
  let slot = byAge[0]!;
  let cached = shared(slot);
  for (const candidate of byAge.slice(1)) {
    const n = shared(candidate);
    if (n > cached) [slot, cached] = [candidate, n];
  }
  if (cached * 2 < prompt.length) {
    slot = byAge[0]!;
    cached = shared(slot);
  }
  slot.lastUsed = loaded.calls;
  return { slot, cachedTokens: Math.min(cached, prompt.length - 1) };
}

/** The generated tokens that make up the answer text (the rest spelled a stop trigger). */
function tokensCovering(
  model: LlamaModel,
  prompt: readonly Token[],
  generated: readonly Token[],
  textLength: number,
): Token[] {
  const answer: Token[] = [];
  let length = 0;
  for (const token of generated) {
    if (length >= textLength) break;
    length += tokenText(model, token, answer.length === 0 ? prompt : answer).length;
    answer.push(token);
  }
  return answer;
}

/** A token's text in place: SentencePiece drops a leading space unless it sees the tokens before. */
function tokenText(model: LlamaModel, token: Token, before: readonly Token[]): string {
  return model.detokenize([token], false, before.slice(-4));
}

/**
 * Teacher-forced scoring: continue from the prompt already in the sequence (the generation just
 * evaluated it) and feed the answer once, reading the next-token distribution at each answer
 * position. Costs the answer's length, not another pass over the prompt.
 */
async function scoreTokens(
  sequence: LlamaContextSequence,
  model: LlamaModel,
  prompt: readonly Token[],
  answer: readonly Token[],
  top: number,
): Promise<TokenLogprob[]> {
  if (answer.length === 0 || prompt.length === 0) return [];
  // Keep the prompt's state except its last token, whose output is the first distribution needed.
  const kept = sequence.compareContextTokens(prompt.slice(0, -1) as Token[]).firstDifferentIndex;
  if (kept < sequence.nextTokenIndex)
    await sequence.eraseContextTokenRanges([{ start: kept, end: sequence.nextTokenIndex }]);
  const withDistribution = (token: Token): ControlledEvaluateInputItem => [
    token,
    { generateNext: { probabilities: true } },
  ];
  // Position i's output is the distribution of token i+1: ask at the last prompt token and at
  // every answer token but the last.
  const input: ControlledEvaluateInputItem[] = [
    ...prompt.slice(kept, -1),
    withDistribution(prompt[prompt.length - 1]!),
    ...answer.slice(0, -1).map(withDistribution),
    answer[answer.length - 1]!,
  ];
  const outputs = await sequence.controlledEvaluate(input);
  return answer.map((token, i): TokenLogprob => {
    const probabilities = outputs[prompt.length - 1 - kept + i]?.next.probabilities;
    const before = i === 0 ? prompt.slice(-4) : answer.slice(Math.max(0, i - 4), i);
    const alternatives =
      probabilities === undefined
        ? []
        : [...probabilities.entries()]
            .slice(0, top)
            .map(([alt, p]) => ({ token: tokenText(model, alt, before), logprob: Math.log(p) }));
    return {
      token: tokenText(model, token, before),
      logprob: Math.log(probabilities?.get(token) ?? 0),
      ...(top > 0 ? { top: alternatives } : {}),
    };
  });
}
