import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import {
  BOS_ID,
  type ByteBpeTokenizer,
  byteBpeTokenizer,
  CriteriaUnparsedError,
  criteriaTarget,
  EOS_ID,
  type GenerateOptions,
  type MuSftExample,
  parseCriteria,
  promptText,
  type RatedStep,
  type Step,
  stepPrompt,
  type StepPromptOptions,
  StepPromptSettingsSchema,
  type StepPromptSettings,
  type StepScores,
  withPromptSettings,
} from "@rubric/arco-heads";
import { type ChatMessage, definedFields, formatZodIssues } from "@rubric/core";
import { RemoteMu, type SidecarClient } from "@rubric/sidecar";
import { z } from "zod";
import { RlxarFileError, RlxarInputError } from "../errors.js";
import { type FittedPrompt, fitHistories } from "../history/fit.js";
import { type MuExport, type SftMuOptions, type SftRow, sftRows } from "./sidecar-mu.js";

/**
 * How μ's text becomes ids: a byte-level BPE trained here (the small μ; role lines after `<bos>`,
 * as arco-heads writes a step), or a transformers μ's own tokenizer in the sidecar, through its
 * chat template (`chat-template`, as ARCO's μ reads its prompt) or as role lines after the model's
 * start token (`role-lines`, for a tokenizer without a template).
 */
export type MuTextFormat = "byte-bpe" | "chat-template" | "role-lines";

/** The file that says what a version directory of a sidecar-served μ holds. */
export const SIDECAR_MU_FILE = "sidecar-mu.json";
const FORMAT = "rubric/sidecar-mu/1";
const TOKENIZER_FILE = "tokenizer.json";

const SidecarMuManifestSchema = z.strictObject({
  format: z.literal(FORMAT),
  version: z.int().positive(),
  k: z.int().positive(),
  /** Positions of prompt + criteria, and the criteria's share of them (new tokens at most). */
  maxLengths: z.strictObject({ sequence: z.int().min(2), criteria: z.int().positive() }),
  text: z.enum(["byte-bpe", "chat-template", "role-lines"]),
  prompt: StepPromptSettingsSchema.optional(),
  /** The sidecar's parameter fingerprint of the weights in `mu.pt` (and its adapter directories). */
  fingerprint: z.string().min(1),
  steps: z.int().min(0),
});
export type SidecarMuManifest = z.infer<typeof SidecarMuManifestSchema>;

/** Text ↔ ids for μ: one code path for both tokenizers, the model's own a request each. */
interface MuText {
  readonly format: MuTextFormat;
  /** The token that ends μ's criteria. */
  readonly eos: number;
  /** Each conversation's prompt ids, as μ reads a step. */
  render(conversations: readonly (readonly ChatMessage[])[]): Promise<number[][]>;
  encode(texts: readonly string[]): Promise<number[][]>;
  decode(ids: readonly (readonly number[])[]): Promise<string[]>;
}

function byteBpeText(tokenizer: ByteBpeTokenizer): MuText {
  return {
    format: "byte-bpe",
    eos: EOS_ID,
    render: async (conversations) => conversations.map((m) => [BOS_ID, ...tokenizer.encode(promptText(m))]),
    encode: async (texts) => texts.map((text) => tokenizer.encode(text)),
    decode: async (ids) => ids.map((row) => tokenizer.decode([...row])),
  };
}

function ownText(mu: RemoteMu, format: MuTextFormat | undefined): MuText {
  const tokenizer = mu.summary.tokenizer;
  if (tokenizer === undefined || tokenizer === null)
    throw new RlxarInputError(
      "tokenizer",
      "this μ has no tokenizer of its own (the sidecar's small transformer): pass the byte-level BPE its ids were made with",
    );
  if (tokenizer.eos_token_id === null)
    throw new RlxarInputError("tokenizer", "the μ model's tokenizer has no end token to close its criteria with");
  const chosen = format ?? (tokenizer.chat_template ? "chat-template" : "role-lines");
  if (chosen === "byte-bpe")
    throw new RlxarInputError("text", 'is "byte-bpe", but this μ reads text with its own tokenizer');
  if (chosen === "chat-template" && !tokenizer.chat_template)
    throw new RlxarInputError("text", 'is "chat-template", but the μ model\'s tokenizer has no chat template');
  const bos = tokenizer.bos_token_id;
  return {
    format: chosen,
    eos: tokenizer.eos_token_id,
    render: async (conversations) =>
      chosen === "chat-template"
        ? mu.chat(conversations)
        : (await mu.tokenize(conversations.map((m) => promptText(m)))).map((ids) =>
            bos === null ? ids : [bos, ...ids],
          ),
    encode: (texts) => mu.tokenize(texts),
    decode: (ids) => mu.detokenize(ids),
  };
}

export interface SidecarMuModelOptions {
  /** The step prompt μ reads (style, environment, observation cut), kept in every version. */
  readonly prompt?: StepPromptSettings;
  /** New tokens of criteria at most (default 128, ARCO's `mu_max_new_tokens`). */
  readonly maxCriteriaTokens?: number;
  /** Positions of prompt + criteria (default the smaller of 2,048, ARCO's, and the model's). */
  readonly maxSequence?: number;
  /** The small μ's byte-level BPE; absent: the μ model's own tokenizer. */
  readonly tokenizer?: ByteBpeTokenizer;
  /** How a transformers μ's prompt is written (default its chat template when it has one). */
  readonly text?: MuTextFormat;
  /** Rows per `mu.generate` and `mu.scores` call (default 8, ARCO's scoring mini-batch). */
  readonly batch?: number;
  /** μ-SFT (ARCO's warm-up) on these examples before the first version is saved (`sftRows`). */
  readonly sft?: { readonly examples: readonly MuSftExample[] } & SftMuOptions;
}

/**
 * ARCO's μ served by the sidecar itself: it writes criteria with `mu.generate` (greedy, the model's
 * own key/value cache) and scores them with `mu.scores`, on the weights as they are at each call,
 * so there is nothing to export or reload after a `mu.step`. This is how a transformers μ (a
 * pretrained LM through LoRA, ARCO's setting, `mu.init` with `model.kind "transformers"`) runs:
 * its prompts go through its own chat template, its criteria end at its own end token. The small
 * μ runs the same path with the byte-level BPE it was trained with.
 *
 * Versions are directories `root/vNNNN` holding the sidecar's checkpoint (`mu.pt`, and with LoRA
 * the peft adapter directories) and {@link SIDECAR_MU_FILE}; {@link save} writes the next one in
 * one rename, {@link open} reads one back, checking the weights' fingerprint.
 *
 * @example
 * const mu = await RemoteMu.init(client, {
 *   model: { kind: "transformers", name: "/models/Qwen3-4B-Instruct-2507" },
 *   lora: {}, k: 3, device: "cuda", dtype: "bfloat16",
 * });
 * const model = await SidecarMuModel.create(mu, "runs/mu");
 * const [rated] = await model.rateSteps([{ task: "Who?", history: [], budgetLeft: 3, action: "Search[X]" }]);
 */
export class SidecarMuModel {
  #manifest: SidecarMuManifest;
  #directory: string;
  readonly #text: MuText;
  readonly #tokenizer: ByteBpeTokenizer | undefined;
  readonly #batch: number;

  private constructor(
    /** The sidecar's μ this model serves and trains. */
    readonly mu: RemoteMu,
    /** Where its versions go. */
    readonly root: string,
    manifest: SidecarMuManifest,
    directory: string,
    text: MuText,
    tokenizer: ByteBpeTokenizer | undefined,
    batch: number,
  ) {
    this.#manifest = manifest;
    this.#directory = directory;
    this.#text = text;
    this.#tokenizer = tokenizer;
    this.#batch = batch;
  }

  /**
   * The sidecar's μ as the first version under `root` (after any a stopped run left), fine-tuned
   * on `sft` first when given.
   */
  static async create(mu: RemoteMu, root: string, options: SidecarMuModelOptions = {}): Promise<SidecarMuModel> {
    const text = options.tokenizer === undefined ? ownText(mu, options.text) : byteBpeText(options.tokenizer);
    const criteria = options.maxCriteriaTokens ?? 128;
    const sequence = Math.min(options.maxSequence ?? 2048, mu.summary.max_seq_len);
    if (!Number.isInteger(criteria) || criteria < 1 || criteria >= sequence - 1)
      throw new RlxarInputError(
        "maxCriteriaTokens",
        `expected an integer in [1, ${sequence - 2}] (below the ${sequence} positions), got ${criteria}`,
      );
    const prompt = options.prompt === undefined ? undefined : definedFields(options.prompt);
    const manifest: SidecarMuManifest = {
      format: FORMAT,
      version: 1,
      k: mu.summary.k,
      maxLengths: { sequence, criteria },
      text: text.format,
      ...(prompt === undefined || Object.keys(prompt).length === 0 ? {} : { prompt }),
      fingerprint: "",
      steps: mu.summary.steps,
    };
    const model = new SidecarMuModel(mu, resolve(root), manifest, "", text, options.tokenizer, options.batch ?? 8);
    if (options.sft !== undefined) await sftRows(mu, await model.sftRows(options.sft.examples), options.sft);
    await model.save();
    return model;
  }

  /**
   * A version directory read back into the sidecar (`mu.load`, on `device` instead of the one it
   * was trained on when given), its weights checked against the fingerprint it was saved with.
   */
  static async open(
    client: SidecarClient,
    directory: string,
    options: { readonly device?: string; readonly batch?: number } = {},
  ): Promise<SidecarMuModel> {
    const path = join(directory, SIDECAR_MU_FILE);
    const raw = await readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
      throw new RlxarFileError(path, [
        error.code === "ENOENT" ? "missing: not a sidecar μ's version directory" : error.message,
      ]);
    });
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (error) {
      throw new RlxarFileError(path, [`not JSON: ${(error as Error).message}`]);
    }
    const parsed = SidecarMuManifestSchema.safeParse(json);
    if (!parsed.success) throw new RlxarFileError(path, formatZodIssues(parsed.error).split("\n"));
    const manifest = parsed.data;
    let tokenizer: ByteBpeTokenizer | undefined;
    if (manifest.text === "byte-bpe") {
      const file = join(directory, TOKENIZER_FILE);
      try {
        tokenizer = byteBpeTokenizer(JSON.parse(await readFile(file, "utf8")));
      } catch (error) {
        throw new RlxarFileError(file, [(error as Error).message]);
      }
    }
    const mu = await RemoteMu.load(client, directory, options.device === undefined ? {} : { device: options.device });
    const { fingerprint } = await mu.fingerprint();
    if (fingerprint !== manifest.fingerprint)
      throw new RlxarFileError(path, [
        `fingerprint: the weights in ${directory} have ${fingerprint}, the file says ${manifest.fingerprint}`,
      ]);
    if (mu.summary.k !== manifest.k)
      throw new RlxarFileError(path, [`k: is ${manifest.k} but the μ in its checkpoint has K = ${mu.summary.k}`]);
    const text = tokenizer === undefined ? ownText(mu, manifest.text) : byteBpeText(tokenizer);
    const root = resolve(directory, "..");
    return new SidecarMuModel(mu, root, manifest, resolve(directory), text, tokenizer, options.batch ?? 8);
  }

  get manifest(): SidecarMuManifest {
    return this.#manifest;
  }
  /** The version in service. */
  get version(): number {
    return this.#manifest.version;
  }
  /** Its directory. */
  get directory(): string {
    return this.#directory;
  }
  get k(): number {
    return this.#manifest.k;
  }

  /**
   * The sidecar's μ as it is now, as the next version `root/vNNNN`: its checkpoint and this
   * model's settings written into a hidden directory and renamed into place, so a reader never
   * sees half a version.
   */
  async save(): Promise<MuExport> {
    await mkdir(this.root, { recursive: true });
    const newest = await newestVersion(this.root);
    const version = Math.max(this.#directory === "" ? 1 : this.#manifest.version + 1, (newest ?? 0) + 1);
    const name = `v${String(version).padStart(4, "0")}`;
    const staging = join(this.root, `.${name}.partial`);
    await rm(staging, { recursive: true, force: true });
    await this.mu.save(staging);
    const { fingerprint } = await this.mu.fingerprint();
    const manifest = { ...this.#manifest, version, fingerprint, steps: this.mu.summary.steps };
    if (this.#tokenizer !== undefined)
      await writeFile(join(staging, TOKENIZER_FILE), `${JSON.stringify(this.#tokenizer.toFile())}\n`);
    await writeFile(join(staging, SIDECAR_MU_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    const directory = join(this.root, name);
    await rename(staging, directory);
    this.#manifest = manifest;
    this.#directory = directory;
    return { directory, version };
  }

  /** The prompt options a step is written with: the caller's over the saved settings, at this μ's K. */
  #promptOptions(options: StepPromptOptions): StepPromptOptions {
    return { ...withPromptSettings(this.#manifest.prompt, options), k: this.#manifest.k };
  }

  /** Each step's prompt ids, at most `maxTokens` (oldest turns dropped first). */
  async #prompts(steps: readonly Step[], options: StepPromptOptions, maxTokens: number): Promise<FittedPrompt[]> {
    const prompt = this.#promptOptions(options);
    return fitHistories(
      steps,
      (rows) => this.#text.render(rows.map((step) => stepPrompt(step, prompt))),
      maxTokens,
      (i) => `steps[${i}]`,
      "this μ",
    );
  }

  /** The criteria's canonical text's ids (what μ is trained to write), [] for none. */
  async #criteriaIds(lists: readonly (readonly string[])[]): Promise<number[][]> {
    const written = lists.flatMap((list, i) => (list.length === 0 ? [] : [i]));
    const ids = await this.#text.encode(written.map((i) => criteriaTarget(lists[i]!)));
    const out = lists.map(() => [] as number[]);
    written.forEach((i, k) => {
      out[i] = ids[k]!;
    });
    return out;
  }

  /**
   * μ-SFT rows for `mu.sft` (`sftRows`): each example's prompt as μ reads a step, its criteria
   * target closed by μ's end token. A prompt longer than the positions the criteria leave is
   * refused, naming the example: training on a prompt μ is never scored with teaches nothing.
   */
  async sftRows(examples: readonly MuSftExample[]): Promise<SftRow[]> {
    const prompts = await this.#text.render(examples.map((example) => example.messages));
    const targets = await this.#criteriaIds(examples.map((example) => example.criteria));
    const budget = this.#manifest.maxLengths.sequence - this.#manifest.maxLengths.criteria;
    return examples.map((example, i) => {
      if (example.scores.length !== this.k)
        throw new RlxarInputError(
          `examples[${i}].scores`,
          `expected K = ${this.k} scores, got ${example.scores.length}`,
        );
      if (prompts[i]!.length > budget)
        throw new RlxarInputError(
          `examples[${i}]`,
          `its prompt takes ${prompts[i]!.length} tokens, more than the ${budget} this μ leaves for a prompt`,
        );
      const criteria = targets[i]!.length === 0 ? [] : [...targets[i]!, this.#text.eos];
      return { prompt: prompts[i]!, criteria, scores: example.scores };
    });
  }

  /** Criteria, then scores of them, for every step (greedy; ≤ `maxNewTokens` new tokens each). */
  async rateSteps(steps: readonly Step[], options: GenerateOptions = {}): Promise<RatedStep[]> {
    if (options.decoding !== undefined && options.decoding.mode !== "greedy")
      throw new RlxarInputError("options.decoding", "a sidecar-served μ writes its criteria greedily");
    if (steps.length === 0) return [];
    const { sequence, criteria } = this.#manifest.maxLengths;
    const maxNewTokens = options.maxNewTokens ?? criteria;
    if (!Number.isInteger(maxNewTokens) || maxNewTokens < 1 || maxNewTokens > criteria)
      throw new RlxarInputError("maxNewTokens", `expected an integer in [1, ${criteria}], got ${maxNewTokens}`);
    const prompts = await this.#prompts(steps, options, sequence - criteria);
    const ids: number[][] = [];
    const finished: boolean[] = [];
    for (let start = 0; start < prompts.length; start += this.#batch) {
      const out = await this.mu.generate({
        prompts: prompts.slice(start, start + this.#batch).map((p) => p.ids),
        max_new_tokens: maxNewTokens,
        eos_id: this.#text.eos,
      });
      ids.push(...out.ids);
      finished.push(...out.finished);
    }
    const texts = await this.#text.decode(ids);
    const generated = texts.map((text, i) => {
      const base = {
        text,
        finished: finished[i]!,
        tokens: ids[i]!.length + (finished[i] ? 1 : 0),
        droppedTurns: prompts[i]!.droppedTurns,
      };
      try {
        const parsed = parseCriteria(text, this.k);
        return { ...base, criteria: parsed.criteria, ...(parsed.adjusted ? { adjusted: parsed.adjusted } : {}) };
      } catch (error) {
        if (!(error instanceof CriteriaUnparsedError)) throw error;
        return { ...base, criteria: Array.from({ length: this.k }, () => ""), adjusted: "unparsed" as const };
      }
    });
    const scored = await this.#score(
      steps,
      generated.map((g) => g.criteria),
      options,
      prompts,
    );
    return generated.map((g, i) => ({ ...g, ...scored[i]! }));
  }

  /** μ's scores of `criteria[i]` for `steps[i]` (K criteria, or none for a K = 1 μ without a rubric). */
  scoreSteps(
    steps: readonly Step[],
    criteria: readonly (readonly string[])[],
    options: StepPromptOptions = {},
  ): Promise<StepScores[]> {
    return this.#score(steps, criteria, options);
  }

  async #score(
    steps: readonly Step[],
    criteria: readonly (readonly string[])[],
    options: StepPromptOptions,
    fitted?: readonly FittedPrompt[],
  ): Promise<StepScores[]> {
    if (criteria.length !== steps.length)
      throw new RlxarInputError("criteria", `expected one list per step (${steps.length}), got ${criteria.length}`);
    criteria.forEach((list, i) => {
      if (list.length !== 0 && list.length !== this.k)
        throw new RlxarInputError(
          `criteria[${i}]`,
          `expected ${this.k} criteria (K of this μ) or none, got ${list.length}`,
        );
    });
    if (steps.length === 0) return [];
    const { sequence, criteria: share } = this.#manifest.maxLengths;
    const criteriaIds = await this.#criteriaIds(criteria);
    const prompts = fitted === undefined ? await this.#prompts(steps, options, sequence - share) : [...fitted];
    // The canonical text of what μ wrote can outgrow what it wrote: those prompts give way.
    for (const [i, ids] of criteriaIds.entries()) {
      if (prompts[i]!.ids.length + ids.length <= sequence) continue;
      if (ids.length > sequence - 2)
        throw new RlxarInputError(`criteria[${i}]`, `${ids.length} tokens leave no room for the prompt`);
      prompts[i] = (await this.#prompts([steps[i]!], options, sequence - ids.length))[0]!;
    }
    const rows = prompts.map((prompt, i) => ({ prompt: prompt.ids, criteria: criteriaIds[i]! }));
    const d: number[][] = [];
    for (let start = 0; start < rows.length; start += this.#batch) {
      d.push(...(await this.mu.scores(rows.slice(start, start + this.#batch))).d);
    }
    return d.map((scores, i) => ({ scores, s: scores.reduce((a, b) => a + b, 0) / scores.length, ids: rows[i]! }));
  }
}

/** The newest `vNNNN` under a root, if any. */
async function newestVersion(root: string): Promise<number | undefined> {
  const names = await readdir(root).catch(() => [] as string[]);
  const versions = names.filter((name) => /^v\d+$/.test(name)).map((name) => Number(name.slice(1)));
  return versions.length === 0 ? undefined : Math.max(...versions);
}
