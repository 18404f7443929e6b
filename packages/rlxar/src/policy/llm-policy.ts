import { createRng, type GeneratedChoice, type LanguageModel } from "@rubric/core";
import { runEffect } from "@rubric/core/effect";
import { Effect } from "effect";
import type { AgentView } from "../environment/environment.js";
import { PolicyGenerateError, RlxarInputError } from "../errors.js";
import type { ActOptions, Policy, PolicyDecision } from "./policy.js";
import { type PolicyPromptOptions, type PromptEnvironment, policyMessages } from "./prompts.js";

export interface LlmPolicyOptions extends PolicyPromptOptions {
  /** The environment whose description and action forms go into the system prompt. */
  readonly environment: PromptEnvironment;
  /** Default `llm:<provider>:<modelId>`. */
  readonly name?: string;
  /** New tokens per action (default 64, ARCO's). */
  readonly maxTokens?: number;
  /** Requests in flight at once (default 8). */
  readonly concurrency?: number;
  /**
   * Ask the provider for the generated tokens' log-probabilities (`topLogprobs: 0`) and report
   * their sum as `logProb`. Default false: llama-cpp pays a second, teacher-forced pass for them.
   */
  readonly logProbs?: boolean;
}

/** What an LLM decision keeps: why the provider ended the text (`stop`, `length`). */
export interface LlmTrace {
  readonly finishReason: string;
}

/**
 * The integer seed of a row: the first draw of `createRng(seed)`, below 2³¹ so every provider takes it.
 *
 * @example
 * rowSeed("run1/q1/0/2") === rowSeed("run1/q1/0/2"); // true: the same row, the same draw
 */
export function rowSeed(seed: string): number {
  return createRng(seed).int(2 ** 31);
}

function positiveInteger(value: number, path: string): number {
  if (!Number.isInteger(value) || value < 1) throw new RlxarInputError(path, `expected an integer ≥ 1, got ${value}`);
  return value;
}

/** log π(text) as the provider reported it, when it reported every token's. */
function choiceLogProb(choice: GeneratedChoice): number | undefined {
  if (choice.logprobs === undefined || choice.logprobs.length === 0) return undefined;
  return choice.logprobs.reduce((sum, token) => sum + token.logprob, 0);
}

/**
 * A policy over any `LanguageModel` (an OpenAI-compatible server, Hugging Face, a local GGUF
 * model): each view becomes ARCO's chat (`policyMessages`), one request per view, at most
 * `concurrency` in flight; row i asks for seed `rowSeed(seeds[i])` at the batch's temperature.
 * A failed call (after the provider's own retries) rejects the batch with a
 * `PolicyGenerateError` naming the task and step, never an empty action.
 *
 * @example
 * const policy = llmPolicy(openAICompatible({ baseUrl: "http://127.0.0.1:8000/v1", model: "qwen" }), { environment: env });
 * const [decision] = await policy.act([episode.view()], { temperature: 0.7, seeds: ["run1/q1/0/0"] });
 * episode.step(decision.text);
 */
export function llmPolicy(model: LanguageModel, options: LlmPolicyOptions): Policy {
  const name = options.name ?? `llm:${model.provider}:${model.modelId}`;
  const maxTokens = positiveInteger(options.maxTokens ?? 64, "options.maxTokens");
  const concurrency = positiveInteger(options.concurrency ?? 8, "options.concurrency");

  const decide = (view: AgentView, seed: string, temperature: number) =>
    Effect.tryPromise({
      // The signal aborts the request when another row has failed the batch, so no orphan call
      // (or its retries) runs on after `act` has rejected.
      try: (signal) =>
        model.generate({
          signal,
          messages: policyMessages(options.environment, view, options),
          temperature,
          maxTokens,
          seed: rowSeed(seed),
          ...(options.logProbs === true ? { topLogprobs: 0 } : {}),
        }),
      catch: (error) =>
        new PolicyGenerateError(name, view.taskId, view.history.length, (error as Error).message ?? String(error), {
          cause: error,
        }),
    }).pipe(
      Effect.flatMap((response) => {
        const choice = response.choices[0];
        if (choice === undefined)
          return Effect.fail(
            new PolicyGenerateError(name, view.taskId, view.history.length, "the provider returned no choice"),
          );
        const logProb = choiceLogProb(choice);
        // Why the text ended, for a trainer that re-tokenises it: a `stop` ended on the model's
        // end-of-sequence, a `length` was cut at maxTokens.
        const trace: LlmTrace | undefined =
          choice.finishReason === undefined ? undefined : { finishReason: choice.finishReason };
        const decision: PolicyDecision = { text: choice.text, logProb, trace };
        return Effect.succeed(decision);
      }),
    );

  return {
    name,
    act(views: readonly AgentView[], act: ActOptions): Promise<PolicyDecision[]> {
      if (act.seeds.length !== views.length)
        return Promise.reject(
          new RlxarInputError("options.seeds", `expected one seed per view (${views.length}), got ${act.seeds.length}`),
        );
      return runEffect(
        Effect.forEach(views, (view, i) => decide(view, act.seeds[i] as string, act.temperature), { concurrency }),
      );
    },
  };
}
