import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { BOS_ID, type ByteBpeTokenizer, EOS_ID, promptText, byteBpeTokenizer, trainByteBpe } from "@rubric/arco-heads";
import { type PolicyInitParams, RemotePolicy, type SidecarClient } from "@rubric/sidecar";
import { formatZodIssues } from "@rubric/core";
import { z } from "zod";
import type { AgentView } from "../environment/environment.js";
import { RlxarInputError } from "../errors.js";
import { fitHistories } from "../history/fit.js";
import { rowSeed } from "./llm-policy.js";
import type {
  ActOptions,
  PolicyDecision,
  PolicySample,
  PolicySftExample,
  PolicyUpdateMetrics,
  PolicyUpdateOptions,
  TrainablePolicy,
} from "./policy.js";
import { type PolicyPromptOptions, type PromptEnvironment, policyMessages } from "./prompts.js";

/** What the sidecar policy needs of a tokenizer: text to ids and back (arco-heads' byte-level BPE is one). */
export type PolicyTokenizer = Pick<ByteBpeTokenizer, "encode" | "decode"> & Partial<Pick<ByteBpeTokenizer, "toFile">>;

export interface SidecarPolicyOptions extends PolicyPromptOptions {
  readonly environment: PromptEnvironment;
  /**
   * Text ↔ ids on this side (the small transformer's byte-level BPE, {@link trainPolicyTokenizer}).
   * Absent: the model's own tokenizer in the sidecar (a transformers model), with its chat
   * template when it has one (see `promptFormat`).
   */
  readonly tokenizer?: PolicyTokenizer;
  /**
   * How a prompt is written for the model's own tokenizer: `chat-template` (the model's template,
   * the assistant's turn opened: what a chat model such as Qwen3-4B was trained to answer; the
   * default when the tokenizer has one) or `role-lines` (arco-heads' `promptText`, after the
   * model's start token: the default for a tokenizer without a template). A `tokenizer` given
   * here always writes role lines.
   */
  readonly promptFormat?: PolicyPromptFormat;
  /** `policy.init`'s params: the model (its vocabulary must hold every id the tokenizer writes), seed, device. */
  readonly init: PolicyInitParams;
  /** Default `sidecar`. */
  readonly name?: string;
  /** New tokens per action (default 64, ARCO's). */
  readonly maxNewTokens?: number;
  /** The id that ends an action (default arco-heads' `<eos>`, or the model's own end token). */
  readonly eosId?: number;
  /** The id every role-lines prompt starts with (default arco-heads' `<bos>`, or the model's own; `null` for none). */
  readonly bosId?: number | null;
}

export type PolicyPromptFormat = "chat-template" | "role-lines";

/**
 * The sidecar's temperature for a greedy (temperature 0) row: `policy.sample` draws from
 * softmax(logits / T) and takes T > 0 only. At 1e-6 over float64 logits every token more than
 * ~1e-3 below the top one has probability exp(−1000) = 0, so the draw is the argmax unless two
 * logits are within about that of each other.
 */
export const GREEDY_TEMPERATURE = 1e-6;

/** What a sidecar decision keeps for learning: the sampled ids (with the `<eos>` that ended them). */
export const SidecarTraceSchema = z.strictObject({ tokens: z.array(z.int().nonnegative()).min(1) });
export type SidecarTrace = z.infer<typeof SidecarTraceSchema>;

/** The traces `update` can learn from: the sidecar's ids, an LLM policy's finish reason (its text is re-tokenised), or none. */
const DecisionTraceSchema = z.union([SidecarTraceSchema, z.object({ finishReason: z.string() }), z.undefined()]);

/**
 * A byte-level BPE for the policy's prompts, learnt from the prompt's fixed wording and `texts`
 * (questions, paragraphs, actions): its merges make the system prompt short, which a small model
 * with few positions needs.
 *
 * @example
 * const tokenizer = trainPolicyTokenizer(env, ["Search[Ed Wood]", "Finish[yes]"], 512);
 */
export function trainPolicyTokenizer(
  environment: PromptEnvironment,
  texts: readonly string[],
  vocabularySize: number,
): ByteBpeTokenizer {
  const template: AgentView = {
    taskId: "",
    task: "",
    history: [{ action: "", observation: "" }],
    budgetLeft: 2,
    mustFinish: false,
  };
  const prompts = [template, { ...template, budgetLeft: 0, mustFinish: true }].map((view) =>
    promptText(policyMessages(environment, view)),
  );
  return byteBpeTokenizer(trainByteBpe([...prompts, ...prompts, ...texts], vocabularySize));
}

/** Prompt ids of a view and how many of its oldest turns had to go to leave room for the action. */
export interface PolicyPromptIds {
  readonly ids: number[];
  readonly droppedTurns: number;
}

type Encoding = Pick<SidecarPolicyOptions, "environment" | "bosId" | "maxObservationChars"> & {
  readonly tokenizer: PolicyTokenizer;
};

/**
 * The ids the sidecar's model reads for `view`: `<bos>` + the chat rendered as arco-heads'
 * `promptText` (role lines: a small model has no chat template), at most `maxTokens` long. When
 * it does not fit, the oldest turns are left out first (the latest observations matter most to
 * the next action); a prompt too long with no history is an `RlxarInputError`.
 *
 * @example
 * const { ids, droppedTurns } = policyPromptIds({ environment: env, tokenizer }, view, 449);
 */
export function policyPromptIds(options: Encoding, view: AgentView, maxTokens: number): PolicyPromptIds {
  const bos = options.bosId === undefined ? [BOS_ID] : options.bosId === null ? [] : [options.bosId];
  const idsOf = (v: AgentView) => [
    ...bos,
    ...options.tokenizer.encode(promptText(policyMessages(options.environment, v, options))),
  ];
  let ids = idsOf(view);
  let dropped = 0;
  while (ids.length > maxTokens && dropped < view.history.length) {
    dropped++;
    ids = idsOf({ ...view, history: view.history.slice(dropped) });
  }
  if (ids.length > maxTokens)
    throw new RlxarInputError(
      `view ${view.taskId}`,
      `its prompt takes ${ids.length} tokens with no history, more than the ${maxTokens} the model leaves for a prompt`,
    );
  return { ids, droppedTurns: dropped };
}

/**
 * Text ↔ ids for one policy, and its prompts: a tokenizer on this side, or the model's own in
 * the sidecar (asynchronous, because each is a request).
 */
interface PolicyCodec {
  readonly eos: number;
  /** What the prompts are written as. */
  readonly format: PolicyPromptFormat;
  /** Each view's prompt ids, at most `maxTokens` long (oldest turns dropped first, as {@link policyPromptIds}). */
  prompts(views: readonly AgentView[], maxTokens: number): Promise<number[][]>;
  encode(texts: readonly string[]): Promise<number[][]>;
  decode(ids: readonly (readonly number[])[]): Promise<string[]>;
}

function localCodec(options: SidecarPolicyOptions, tokenizer: PolicyTokenizer): PolicyCodec {
  const encoding = { ...options, tokenizer };
  return {
    eos: options.eosId ?? EOS_ID,
    format: "role-lines",
    prompts: async (views, maxTokens) => views.map((view) => policyPromptIds(encoding, view, maxTokens).ids),
    encode: async (texts) => texts.map((text) => tokenizer.encode(text)),
    decode: async (ids) => ids.map((row) => tokenizer.decode([...row])),
  };
}

/**
 * The model's own tokenizer, through the sidecar: `policy.chat` renders the chat template,
 * `policy.tokenize` the role lines. Every view's whole prompt is asked for in one request; the
 * few that do not fit are asked again with their oldest turns dropped, one request per round.
 */
function modelCodec(options: SidecarPolicyOptions, remote: RemotePolicy): PolicyCodec {
  const tokenizer = remote.summary.tokenizer;
  if (tokenizer === null)
    throw new RlxarInputError(
      "options.tokenizer",
      "the sidecar's model has no tokenizer of its own (the small transformer): pass a tokenizer (trainPolicyTokenizer)",
    );
  const eos = options.eosId ?? tokenizer.eos_token_id;
  if (eos === null)
    throw new RlxarInputError(
      "options.eosId",
      "the model's tokenizer has no end token: pass the id that ends an action",
    );
  const format = options.promptFormat ?? (tokenizer.chat_template ? "chat-template" : "role-lines");
  if (format === "chat-template" && !tokenizer.chat_template)
    throw new RlxarInputError(
      "options.promptFormat",
      'is "chat-template", but the model\'s tokenizer has no chat template: use "role-lines"',
    );
  const bos = options.bosId === undefined ? tokenizer.bos_token_id : options.bosId;
  const messagesOf = (view: AgentView) => policyMessages(options.environment, view, options);
  const render = async (views: readonly AgentView[]): Promise<number[][]> =>
    format === "chat-template"
      ? remote.chat(views.map(messagesOf))
      : (await remote.tokenize(views.map((view) => promptText(messagesOf(view))))).map((ids) =>
          bos === null ? ids : [bos, ...ids],
        );
  return {
    eos,
    format,
    async prompts(views, maxTokens) {
      const fitted = await fitHistories(views, render, maxTokens, (i) => `view ${views[i]!.taskId}`);
      return fitted.map((prompt) => prompt.ids);
    },
    encode: (texts) => remote.tokenize(texts),
    decode: (ids) => remote.detokenize(ids),
  };
}

/**
 * A {@link TrainablePolicy} whose causal LM lives in the Python sidecar (token ids on the wire):
 * the sidecar's small transformer with a tokenizer here, or a transformers model (a hub name or a
 * directory, LoRA when `init.model.lora` is set) with its own tokenizer and chat template there.
 * `act` samples through `policy.sample` with seed `rowSeed(seeds[i])`;
 * `update` is REINFORCE: each sample becomes a one-sequence group with its advantage and its
 * log-probs under the current weights as π_old (so every ratio is exactly 1), stepped with the
 * sidecar's Dr.GRPO objective at `max_tokens` 1, whose gradient is then −(1/N) Σ A·∇ Σ_t log π;
 * the KL term is the sidecar's per-token k3 to the reference set by `setReference`.
 *
 * @example
 * const client = await SidecarClient.start({ threads: 1 });
 * const tokenizer = trainPolicyTokenizer(env, [], 512);
 * const policy = await sidecarPolicy(client, {
 *   environment: env,
 *   tokenizer,
 *   init: { model: { kind: "tiny", vocab_size: 512, max_seq_len: 512 }, seed: 1 },
 * });
 * const decisions = await policy.act(views, { temperature: 0.7, seeds });
 * // A chat model with LoRA on q/v, its own tokenizer and template (no `tokenizer`):
 * // init: { model: { kind: "transformers", name: "Qwen/Qwen3-4B-Instruct-2507", lora: { r: 8, lora_alpha: 32 } }, device: "cuda", dtype: "bfloat16" }
 */
export async function sidecarPolicy(client: SidecarClient, options: SidecarPolicyOptions): Promise<TrainablePolicy> {
  return sidecarTrainer(await RemotePolicy.init(client, options.init), options);
}

/** The sidecar side of a policy, shared with the served policy, whose `act` goes elsewhere. */
export function sidecarTrainer(remote: RemotePolicy, options: SidecarPolicyOptions): TrainablePolicy {
  const name = options.name ?? "sidecar";
  const maxNewTokens = options.maxNewTokens ?? 64;
  if (!Number.isInteger(maxNewTokens) || maxNewTokens < 1)
    throw new RlxarInputError("options.maxNewTokens", `expected an integer ≥ 1, got ${maxNewTokens}`);
  const codec = options.tokenizer === undefined ? modelCodec(options, remote) : localCodec(options, options.tokenizer);
  const eos = codec.eos;
  // prompt + new tokens − 1 ≤ positions: the last new token is predicted, never fed back.
  const promptsOf = (views: readonly AgentView[]) =>
    codec.prompts(views, remote.summary.max_seq_len - maxNewTokens + 1);
  const tokensOf = async (decision: PolicyDecision, path: string): Promise<number[]> => {
    const parsed = DecisionTraceSchema.safeParse(decision.trace);
    if (!parsed.success) throw new RlxarInputError(`${path}.trace`, formatZodIssues(parsed.error, { separator: "; " }));
    const trace = parsed.data;
    if (trace !== undefined && "tokens" in trace) return trace.tokens;
    // A decision from elsewhere (a served model) is text: its ids here, with the end-of-sequence
    // the model wrote unless the server cut the text at its token limit.
    const [ids] = (await codec.encode([decision.text])) as [number[]];
    return trace?.finishReason === "length" && ids.length > 0 ? ids : [...ids, eos];
  };

  return {
    name,
    async act(views: readonly AgentView[], act: ActOptions): Promise<PolicyDecision[]> {
      if (act.seeds.length !== views.length)
        throw new RlxarInputError(
          "options.seeds",
          `expected one seed per view (${views.length}), got ${act.seeds.length}`,
        );
      const prompts = await promptsOf(views);
      const sampled: { tokens: number[]; logprobs: number[] }[] = [];
      // One request per view: the sidecar samples one prompt at a time (and serves one request at a time).
      for (const [i, prompt] of prompts.entries()) {
        const sequences = await remote.sample(prompt, 1, {
          seed: rowSeed(act.seeds[i] as string),
          temperature: act.temperature === 0 ? GREEDY_TEMPERATURE : act.temperature,
          maxNewTokens,
          eosTokenId: eos,
        });
        const [sequence] = sequences;
        if (sequence === undefined) throw new RlxarInputError(`views[${i}]`, "the sidecar returned no sequence");
        sampled.push(sequence);
      }
      const texts = await codec.decode(
        sampled.map(({ tokens }) => (tokens.at(-1) === eos ? tokens.slice(0, -1) : tokens)),
      );
      return sampled.map((sequence, i) => {
        const trace: SidecarTrace = { tokens: sequence.tokens };
        return { text: texts[i]!, logProb: sequence.logprobs.reduce((s, x) => s + x, 0), trace };
      });
    },

    async update(samples: readonly PolicySample[], update: PolicyUpdateOptions): Promise<PolicyUpdateMetrics> {
      if (samples.length === 0) throw new RlxarInputError("samples", "expected at least one sample");
      if (update.klCoef > 0 && !remote.summary.reference)
        throw new RlxarInputError(
          "options.klCoef",
          `is ${update.klCoef}, but no reference is set: call setReference() first`,
        );
      const prompts = await promptsOf(samples.map((sample) => sample.view));
      const groups = [];
      let weighted = 0;
      for (const [i, sample] of samples.entries()) {
        const prompt = prompts[i]!;
        const tokens = await tokensOf(sample.decision, `samples[${i}].decision`);
        // π_old = π now: the ratio is exactly 1 and clipping never acts, whatever weights sampled it.
        const [logpOld] = (await remote.logprobs(prompt, [tokens])) as [number[]];
        weighted += sample.advantage * logpOld.reduce((s, x) => s + x, 0);
        groups.push({ prompt, sequences: [{ tokens, logpOld, advantage: sample.advantage }] });
      }
      const metrics = await remote.step(groups, {
        objective: "dr-grpo",
        maxTokens: 1,
        learningRate: update.learningRate,
        klCoef: update.klCoef,
        maxGradNorm: update.maxGradNorm,
      });
      return {
        policyLoss: -weighted / samples.length,
        kl: metrics.kl,
        gradNorm: metrics.gradNorm,
        samples: samples.length,
      };
    },

    async sft(examples: readonly PolicySftExample[], sft: { readonly learningRate: number }) {
      if (examples.length === 0) throw new RlxarInputError("examples", "expected at least one example");
      const [prompts, targets] = await Promise.all([
        promptsOf(examples.map((e) => e.view)),
        codec.encode(examples.map((e) => e.text)),
      ]);
      const { nll } = await remote.sftStep(
        examples.map((_, i) => ({ prompt: prompts[i]!, tokens: [...targets[i]!, eos] })),
        { learningRate: sft.learningRate },
      );
      return { loss: nll };
    },

    setReference: () => remote.setReference(),
    resetOptimizer: () => remote.resetOptimizer(),

    /** `dir/policy.pt` (weights, optimiser, reference) from the sidecar, and `dir/tokenizer.json` when the tokenizer has a file. */
    async save(directory: string) {
      await remote.save(directory);
      if (options.tokenizer?.toFile !== undefined)
        await writeFile(join(directory, "tokenizer.json"), `${JSON.stringify(options.tokenizer.toFile())}\n`);
    },

    async load(directory: string) {
      await remote.load(directory);
    },
  };
}
