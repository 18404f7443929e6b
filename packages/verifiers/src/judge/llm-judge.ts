import type { GenerateResponse, GeneratedChoice, LanguageModel } from "@rubric/core";
import { z } from "zod";
import { checkLanguageModel, choiceJson, mean } from "@rubric/core";
import {
  errorDraft,
  okDraft,
  type CriterionToVerify,
  type VerdictDraft,
  type VerificationInput,
  type Verifier,
  type VerifyOptions,
} from "../verifier/verifier.js";
import {
  JUDGE_SYSTEM_PROMPT,
  batchedPrompt,
  batchedSchema,
  singleCriterionPrompt,
  verdictSchema,
  type JudgedCriterion,
} from "./prompts.js";
import { DEFAULT_SCALE, ScaleSchema, scaleValues, toFraction, type Scale } from "./scale.js";
import { VerifierOptionsError } from "../errors.js";

export const LlmJudgeSpecSchema = z.strictObject({
  kind: z.literal("llm-judge"),
  /** Instructions for the judge; the criterion text alone is used when absent. */
  prompt: z.string().optional(),
  /** What a response that fully satisfies the criterion does. */
  expectation: z.string().optional(),
  /** The scale the judge grades on (default 0–10); verdicts are fractions of it. */
  scale: ScaleSchema.optional(),
});
export type LlmJudgeSpec = z.output<typeof LlmJudgeSpecSchema>;

export interface LlmJudgeOptions {
  /** `batched` (default): one call judges all llm-judge criteria of an output; `per-criterion`: one call each. */
  readonly mode?: "batched" | "per-criterion";
  /** k samples per judgement (one request with n = k). Default 1. */
  readonly samples?: number;
  /** How k samples combine: `mean` (default) or `majority` (the most frequent score; ties → the lower). */
  readonly aggregate?: "mean" | "majority";
  /** Default 0 for one sample, 0.7 for several. */
  readonly temperature?: number;
  readonly seed?: number;
  readonly maxTokens?: number;
  /** Per-criterion mode: weight the score by the token log-probabilities when the provider returns them. Default true. */
  readonly logprobWeighted?: boolean;
  /** Re-asks when no sample of a reply parses; after that the verdict is an error carrying the raw text. Default 2. */
  readonly parseRetries?: number;
  /**
   * Caps each rationale at this many characters through the verdict schema (`maxLength`). For
   * local grammar-constrained models (`llamaCpp`), whose rationale can otherwise run past
   * `maxTokens` and leave no score; hosted strict structured-output modes may reject length
   * keywords, so it is off by default.
   */
  readonly rationaleMaxLength?: number;
  /** USD per million tokens, for cost accounting when the provider reports none. */
  readonly pricing?: { readonly inputPerMillion: number; readonly outputPerMillion: number };
}

const VerdictReplySchema = z.object({ rationale: z.string(), score: z.number() }).loose();

interface ParsedSample {
  readonly score: number;
  readonly rationale: string;
  readonly weighted?: boolean;
}

function judged(criterion: CriterionToVerify, spec: LlmJudgeSpec): JudgedCriterion {
  return {
    id: criterion.id,
    text: criterion.text,
    prompt: spec.prompt,
    expectation: spec.expectation,
    scale: spec.scale ?? DEFAULT_SCALE,
  };
}

function onScale(score: number, scale: Scale): boolean {
  return scaleValues(scale).some((v) => Math.abs(v - score) < 1e-9);
}

/**
 * The score a reply's token log-probabilities imply: Σ p(v)·v over the scale values among the
 * alternatives for the score token. Undefined when the reply has no usable log-probabilities.
 */
export function logprobWeightedScore(choice: GeneratedChoice, scale: Scale): number | undefined {
  const tokens = choice.logprobs;
  if (!tokens || tokens.length === 0) return undefined;
  const match = /"score"\s*:\s*(-?\d+(?:\.\d+)?)/.exec(choice.text);
  if (!match) return undefined;
  const valueStart = match.index + match[0].length - match[1]!.length;
  let offset = 0;
  for (const token of tokens) {
    if (offset === valueStart) {
      // Only when the whole value is one token can its alternatives be read as whole values.
      if (token.token.trim() !== match[1]) return undefined;
      const values = scaleValues(scale);
      const candidates = (token.top ?? [{ token: token.token, logprob: token.logprob }])
        .map((t) => ({ value: Number(t.token.trim()), p: Math.exp(t.logprob) }))
        .filter((c) => Number.isFinite(c.value) && values.some((v) => Math.abs(v - c.value) < 1e-9));
      const mass = candidates.reduce((sum, c) => sum + c.p, 0);
      return mass > 0 ? candidates.reduce((sum, c) => sum + c.p * c.value, 0) / mass : undefined;
    }
    offset += token.token.length;
    if (offset > valueStart) return undefined;
  }
  return undefined;
}

function aggregateSamples(samples: readonly ParsedSample[], how: "mean" | "majority"): number {
  if (how === "mean") return mean(samples.map((s) => s.score));
  const counts = new Map<number, number>();
  for (const s of samples) counts.set(s.score, (counts.get(s.score) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]![0];
}

function costOf(response: GenerateResponse, options: LlmJudgeOptions): number | undefined {
  if (response.costUsd !== undefined) return response.costUsd;
  if (!options.pricing) return undefined;
  return (
    (response.usage.inputTokens * options.pricing.inputPerMillion +
      response.usage.outputTokens * options.pricing.outputPerMillion) /
    1e6
  );
}

/**
 * The `llm-judge` verifier: a model grades criteria on an enum-bounded scale through JSON-schema
 * structured output. By default one call judges every llm-judge criterion of an output; k
 * samples combine by mean or majority; per-criterion calls can use log-probability weighting.
 * Replies are parsed leniently (fenced JSON, trailing text); one that still does not parse is
 * asked again, and in the end becomes an error verdict carrying the raw text — never a 0.
 * Retries on 429/5xx/timeouts belong to the model (see `withRetries`).
 *
 * @example
 * const registry = rulesRegistry().register(llmJudge(openAICompatible({ baseUrl, model: "qwen2.5-7b" }), { samples: 3 }));
 */
export function llmJudge(model: LanguageModel, options: LlmJudgeOptions = {}): Verifier<LlmJudgeSpec> {
  // A model of another interface version is refused here, not as an error verdict on every criterion.
  checkLanguageModel(model, "llmJudge(model)");
  const samples = options.samples ?? 1;
  if (!Number.isInteger(samples) || samples < 1)
    throw new VerifierOptionsError(`samples must be an integer ≥ 1, got ${samples}`);
  const mode = options.mode ?? "batched";
  const aggregate = options.aggregate ?? "mean";
  const temperature = options.temperature ?? (samples > 1 ? 0.7 : 0);
  const seed = options.seed ?? 0;
  const parseRetries = options.parseRetries ?? 2;
  const logprobWeighted = options.logprobWeighted ?? true;
  if (
    options.rationaleMaxLength !== undefined &&
    !(Number.isInteger(options.rationaleMaxLength) && options.rationaleMaxLength >= 1)
  )
    throw new VerifierOptionsError(`rationaleMaxLength must be an integer ≥ 1, got ${options.rationaleMaxLength}`);

  async function ask(
    userPrompt: string,
    schema: Record<string, unknown>,
    maxTokens: number,
    wantLogprobs: boolean,
    signal: AbortSignal | undefined,
  ) {
    return model.generate({
      messages: [
        { role: "system", content: JUDGE_SYSTEM_PROMPT },
        { role: "user", content: userPrompt },
      ],
      responseFormat: { type: "json-schema", name: "verdict", schema },
      temperature,
      seed,
      n: samples,
      maxTokens,
      ...(wantLogprobs ? { topLogprobs: 5 } : {}),
      signal,
    });
  }

  /** Calls until at least one sample parses (or retries run out); returns parsed samples per criterion. */
  async function judge(
    criteria: readonly JudgedCriterion[],
    input: VerificationInput,
    verifyOptions: VerifyOptions,
  ): Promise<VerdictDraft[]> {
    const batched = criteria.length > 1;
    const wantLogprobs = !batched && logprobWeighted;
    const prompt = batched ? batchedPrompt(criteria, input) : singleCriterionPrompt(criteria[0]!, input);
    const schema = batched
      ? batchedSchema(criteria, options.rationaleMaxLength)
      : verdictSchema(criteria[0]!.scale, options.rationaleMaxLength);
    const maxTokens = options.maxTokens ?? 200 + 300 * criteria.length;
    const raws: string[] = [];
    let tokens = 0;
    let cost: number | undefined;
    for (let attempt = 0; attempt <= parseRetries; attempt++) {
      const response = await ask(prompt, schema, maxTokens, wantLogprobs, verifyOptions.signal);
      tokens += response.usage.inputTokens + response.usage.outputTokens;
      const c = costOf(response, options);
      if (c !== undefined) cost = (cost ?? 0) + c;
      const perCriterion: ParsedSample[][] = criteria.map(() => []);
      for (const choice of response.choices) {
        raws.push(choice.text);
        const json = choiceJson(choice);
        criteria.forEach((criterion, i) => {
          const reply = VerdictReplySchema.safeParse(
            batched ? (json as Record<string, unknown> | undefined)?.[criterion.id] : json,
          );
          if (!reply.success || !onScale(reply.data.score, criterion.scale)) return;
          const weighted = wantLogprobs ? logprobWeightedScore(choice, criterion.scale) : undefined;
          perCriterion[i]!.push({
            score: weighted ?? reply.data.score,
            rationale: reply.data.rationale,
            ...(weighted === undefined ? {} : { weighted: true }),
          });
        });
      }
      // Re-ask only while some criterion has no usable sample at all.
      if (perCriterion.every((s) => s.length > 0) || attempt === parseRetries) {
        const share = (x: number | undefined) => (x === undefined ? undefined : x / criteria.length);
        return criteria.map((criterion, i) => {
          const parsed = perCriterion[i]!;
          const accounting = {
            tokens: Math.round(tokens / criteria.length),
            ...(cost === undefined ? {} : { costUsd: share(cost)! }),
          };
          if (parsed.length === 0) {
            const draft = errorDraft(
              `the judge's reply did not parse as a verdict on the ${criterion.scale.min}–${criterion.scale.max} scale after ${attempt + 1} attempt(s)`,
              { raw: raws },
            );
            return { ...draft, ...accounting };
          }
          const score = aggregateSamples(parsed, aggregate);
          const draft = okDraft(toFraction(score, criterion.scale), parsed[0]!.rationale, {
            scores: parsed.map((p) => p.score),
            scale: criterion.scale,
            ...(parsed.some((p) => p.weighted) ? { logprobWeighted: true } : {}),
            ...(parsed.length < samples ? { unparsedSamples: samples - parsed.length } : {}),
          });
          return { ...draft, ...accounting };
        });
      }
    }
    throw new Error("unreachable: the loop returns on its last attempt");
  }

  return {
    kind: "llm-judge",
    specSchema: LlmJudgeSpecSchema,
    cacheIdentity: () => ({
      provider: model.provider,
      model: model.modelId,
      mode,
      samples,
      aggregate,
      temperature,
      seed,
      logprobWeighted,
      maxTokens: options.maxTokens ?? null,
      rationaleMaxLength: options.rationaleMaxLength,
    }),
    async verify(criterion, spec, input, verifyOptions) {
      const [draft] = await judge([judged(criterion, spec)], input, verifyOptions);
      return draft!;
    },
    ...(mode === "batched"
      ? {
          async verifyMany(items, input, verifyOptions) {
            return judge(
              items.map((i) => judged(i.criterion, i.spec)),
              input,
              verifyOptions,
            );
          },
        }
      : {}),
  };
}
