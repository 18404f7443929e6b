import { restoreRng } from "@rubric/core";
import { ArcoInputError, CriteriaUnparsedError } from "../errors.js";
import { parseCriteria } from "../step/criteria.js";
import { type StepPromptOptions, withPromptSettings } from "../step/prompt.js";
import type { Step } from "../step/step.js";
import { EOS_ID, PAD_ID } from "../tokenizer/byte-bpe.js";
import type { MuTokenizer } from "../tokenizer/tokenizer.js";
import { type Decoding, type DecodingPlan, decodingPlan, pickToken } from "./decoding.js";
import type { ModelManifest } from "./manifest.js";
import { criteriaIds, fitPrompt, type PromptFit, type StepIds } from "./sequence.js";

/**
 * A backend that runs μ on token ids: onnxruntime-node (`RubricModel`) or torch through the
 * sidecar. Everything above ids — prompts, tokenizer, parsing, padding to K — is shared, so two
 * backends with the same weights give the same criteria and scores.
 */
export interface MuEngine {
  readonly manifest: ModelManifest;
  readonly tokenizer: MuTokenizer;
  /**
   * Up to `maxNewTokens` ids per prompt, stopping at EOS (not included; `finished` says it came)
   * or when prompt + criteria fill the model's positions. The token choice is `pickToken`'s.
   */
  generate(
    prompts: readonly number[][],
    maxNewTokens: number,
    plan: DecodingPlan,
  ): Promise<{ ids: number[][]; finished: boolean[] }>;
  /** d_t, the score head's K values in [−1, 1], for each (prompt, criteria). */
  score(rows: readonly StepIds[]): Promise<number[][]>;
}

/** Options of the criteria-writing calls. */
export interface GenerateOptions extends StepPromptOptions {
  /** Greedy by default. */
  readonly decoding?: Decoding;
  /** New tokens per step at most; the manifest's `maxLengths.criteria` by default. */
  readonly maxNewTokens?: number;
}

/** The criteria μ wrote for one step. */
export interface GeneratedCriteria {
  /** Exactly K criteria. */
  readonly criteria: string[];
  /**
   * `padded` / `truncated`: μ wrote fewer / more than K (padded with "" or cut to K); `unparsed`:
   * its text held no `{"criteria": [...]}` (K empty criteria stand in, so the step is still
   * scored, and the flag says these are not μ's). Absent when μ wrote exactly K.
   */
  readonly adjusted?: "padded" | "truncated" | "unparsed";
  /** The generation's text, as decoded. */
  readonly text: string;
  /** Whether μ ended with EOS rather than running out of tokens. */
  readonly finished: boolean;
  /** Tokens μ generated, EOS included: the cost of this step's criteria. */
  readonly tokens: number;
  /** Oldest history turns left out of the prompt to fit the model (0 almost always). */
  readonly droppedTurns: number;
}

/** One step's scores. */
export interface StepScores {
  /** d_t ∈ [−1, 1]^K. */
  readonly scores: number[];
  /** s_t = mean_k d_t,k. */
  readonly s: number;
  /**
   * The ids the score head read: the fitted prompt and the criteria. A trainer updates μ on these
   * exact rows (the sidecar's `mu.step`) rather than tokenizing and fitting the text a second time.
   */
  readonly ids: { readonly prompt: readonly number[]; readonly criteria: readonly number[] };
}

/** One step, rated: the criteria μ wrote and its scores of them. */
export type RatedStep = GeneratedCriteria & StepScores;

/** The prompt budget: positions left once the criteria's share is kept back. */
const promptBudget = (manifest: ModelManifest) => manifest.maxLengths.sequence - manifest.maxLengths.criteria;

function maxNewTokensOf(manifest: ModelManifest, value: number | undefined): number {
  const n = value ?? manifest.maxLengths.criteria;
  if (!Number.isInteger(n) || n < 1 || n > manifest.maxLengths.criteria)
    throw new ArcoInputError("maxNewTokens", `expected an integer in [1, ${manifest.maxLengths.criteria}], got ${n}`);
  return n;
}

/** The criteria μ writes for each step, in one batched generation. */
export async function generateCriteria(
  engine: MuEngine,
  steps: readonly Step[],
  options: GenerateOptions = {},
): Promise<GeneratedCriteria[]> {
  return generateFor(engine, fitPrompts(engine, steps, options), options);
}

/** Every step's prompt ids, fitted to the prompt budget. */
function fitPrompts(engine: MuEngine, steps: readonly Step[], options: StepPromptOptions): PromptFit[] {
  const { manifest, tokenizer } = engine;
  const prompt = promptOptionsOf(manifest, options);
  return steps.map((step, i) => fitPrompt(tokenizer, step, promptBudget(manifest), prompt, `steps[${i}]`));
}

/** The prompt options a step is written with: the caller's over the model's saved settings, at the model's K. */
function promptOptionsOf(manifest: ModelManifest, options: StepPromptOptions): StepPromptOptions {
  return { ...withPromptSettings(manifest.prompt, options), k: manifest.k };
}

async function generateFor(
  engine: MuEngine,
  prompts: readonly PromptFit[],
  options: GenerateOptions,
): Promise<GeneratedCriteria[]> {
  const { manifest, tokenizer } = engine;
  const maxNewTokens = maxNewTokensOf(manifest, options.maxNewTokens);
  if (prompts.length === 0) return [];
  const plan = decodingPlan(
    options.decoding ?? { mode: "greedy" },
    prompts.map((_, i) => i),
  );
  const { ids, finished } = await engine.generate(
    prompts.map((p) => p.ids),
    maxNewTokens,
    plan,
  );
  return ids.map((row, i) => {
    const text = tokenizer.decode(row);
    const base = {
      text,
      finished: finished[i]!,
      tokens: row.length + (finished[i] ? 1 : 0),
      droppedTurns: prompts[i]!.droppedTurns,
    };
    try {
      const parsed = parseCriteria(text, manifest.k);
      return { ...base, criteria: parsed.criteria, ...(parsed.adjusted ? { adjusted: parsed.adjusted } : {}) };
    } catch (error) {
      if (!(error instanceof CriteriaUnparsedError)) throw error;
      return { ...base, criteria: Array.from({ length: manifest.k }, () => ""), adjusted: "unparsed" as const };
    }
  });
}

/**
 * μ's scores of `criteria[i]` for `steps[i]`: the score head reads the step prompt followed by the
 * criteria's canonical text (what μ is trained to write, and what a trace prints), so scoring the
 * criteria a trace shows gives the trace's scores. `[]` criteria score the prompt alone (the "no
 * rubric" ablation, K = 1).
 */
export async function scoreSteps(
  engine: MuEngine,
  steps: readonly Step[],
  criteria: readonly (readonly string[])[],
  options: StepPromptOptions = {},
): Promise<StepScores[]> {
  return scoreFor(engine, steps, criteria, options);
}

/** `scoreSteps`, reusing prompts already fitted (by the generation of the same call) where they fit beside the criteria. */
async function scoreFor(
  engine: MuEngine,
  steps: readonly Step[],
  criteria: readonly (readonly string[])[],
  options: StepPromptOptions,
  fitted?: readonly PromptFit[],
): Promise<StepScores[]> {
  const { manifest, tokenizer } = engine;
  if (criteria.length !== steps.length)
    throw new ArcoInputError("criteria", `expected one list per step (${steps.length}), got ${criteria.length}`);
  const promptOptions = promptOptionsOf(manifest, options);
  const rows = steps.map((step, i) => {
    const list = criteria[i]!;
    if (list.length !== 0 && list.length !== manifest.k)
      throw new ArcoInputError(
        `criteria[${i}]`,
        `expected ${manifest.k} criteria (K of this model) or none, got ${list.length}`,
      );
    const ids = criteriaIds(tokenizer, list);
    if (manifest.pooling === "criteria" && ids.length === 0)
      throw new ArcoInputError(`criteria[${i}]`, "empty, but this model pools over the criteria tokens only");
    const room = manifest.maxLengths.sequence - ids.length;
    if (room < 2) throw new ArcoInputError(`criteria[${i}]`, `${ids.length} tokens leave no room for the prompt`);
    const limit = Math.min(room, promptBudget(manifest));
    // A prompt fitted to the budget that also fits this limit is what fitting to the limit gives.
    const reuse = fitted?.[i];
    const prompt =
      reuse !== undefined && reuse.ids.length <= limit
        ? reuse
        : fitPrompt(tokenizer, step, limit, promptOptions, `steps[${i}]`);
    return { prompt: prompt.ids, criteria: ids };
  });
  if (rows.length === 0) return [];
  const d = await engine.score(rows);
  return d.map((scores, i) => ({ scores, s: scores.reduce((a, b) => a + b, 0) / scores.length, ids: rows[i]! }));
}

/** Criteria then scores for every step, on one engine: what ARCO's policy update reads. */
export async function rateSteps(
  engine: MuEngine,
  steps: readonly Step[],
  options: GenerateOptions = {},
): Promise<RatedStep[]> {
  const prompts = fitPrompts(engine, steps, options);
  const generated = await generateFor(engine, prompts, options);
  const scored = await scoreFor(
    engine,
    steps,
    generated.map((g) => g.criteria),
    options,
    prompts,
  );
  return generated.map((g, i) => ({ ...g, ...scored[i]! }));
}

/**
 * The greedy/sampled decoding loop over logits, shared by backends that hand out last-position
 * logits (onnxruntime-node here; a test drives it over torch's). `step(tokens, live)` feeds one
 * token per row (PAD for rows already done) and returns the next logits.
 */
export async function decodeRows(
  first: (row: number) => ArrayLike<number>,
  advance: (tokens: readonly number[], live: readonly boolean[]) => Promise<(row: number) => ArrayLike<number>>,
  promptLengths: readonly number[],
  maxNewTokens: number,
  maxPositions: number,
  plan: DecodingPlan,
): Promise<{ ids: number[][]; finished: boolean[] }> {
  const rows = promptLengths.length;
  const streams = plan.streams?.map(restoreRng);
  const ids: number[][] = Array.from({ length: rows }, () => []);
  const finished = new Array<boolean>(rows).fill(false);
  const live = promptLengths.map((length) => length < maxPositions);
  let logitsOf = first;
  for (;;) {
    const fed: number[] = new Array<number>(rows).fill(PAD_ID);
    for (let r = 0; r < rows; r++) {
      if (!live[r]) continue;
      const token = pickToken(logitsOf(r), plan.temperature, streams?.[r]);
      if (token === EOS_ID) {
        finished[r] = true;
        live[r] = false;
        continue;
      }
      ids[r]!.push(token);
      fed[r] = token;
      if (ids[r]!.length >= maxNewTokens || promptLengths[r]! + ids[r]!.length >= maxPositions) live[r] = false;
    }
    if (!live.some(Boolean)) return { ids, finished };
    logitsOf = await advance(fed, live);
  }
}
