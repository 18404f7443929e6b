import type { GenerateRequest, GenerateResponse, LanguageModel } from "@rubric/core";
import { Duration, Effect, Schedule } from "effect";
import { z } from "zod";
import { ProviderConfigError, ProviderHttpError, ProviderNetworkError, ProviderTimeoutError } from "./errors.js";
import { runEffect } from "./run-effect.js";

export interface RetryOptions {
  /** Retries after the first attempt (so `retries + 1` attempts at most). Default 4. */
  readonly retries?: number;
  /** First backoff delay; doubles each retry, with ±20 % jitter. Default 250 ms. */
  readonly baseDelayMs?: number;
  /** Cap on one backoff delay (before `Retry-After` is applied). Default 8 s. */
  readonly maxDelayMs?: number;
  /** Budget of each attempt; the attempt is aborted when it runs out. Default 60 s. */
  readonly timeoutMs?: number;
  /**
   * Longest `Retry-After` obeyed; a server asking for more is waited on only this long (it will
   * answer 429 again, and the retries run out as they should). Default 60 s.
   */
  readonly maxRetryAfterMs?: number;
}

const RetryOptionsSchema = z.strictObject({
  retries: z.int().min(0).optional(),
  baseDelayMs: z.number().min(0).optional(),
  maxDelayMs: z.number().min(0).optional(),
  timeoutMs: z.number().positive().optional(),
  maxRetryAfterMs: z.number().min(0).optional(),
});

const DEFAULTS: Required<RetryOptions> = {
  retries: 4,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  timeoutMs: 60_000,
  maxRetryAfterMs: 60_000,
};

/**
 * Whether a failed attempt is worth repeating: rate limits, server errors, timeouts and network
 * failures are transient; any other 4xx (bad request, auth, unknown model) would fail the same
 * way again, and so would a malformed response or a programming error.
 */
export function isRetryableProviderError(error: unknown): boolean {
  if (error instanceof ProviderHttpError) return error.status === 429 || error.status >= 500;
  return error instanceof ProviderTimeoutError || error instanceof ProviderNetworkError;
}

/**
 * Wraps a model so each call gets a per-attempt timeout (its own `AbortSignal`) and is retried
 * on transient failures with capped, jittered exponential backoff. A `Retry-After` on a 429 is
 * honoured: the next attempt waits at least that long. The caller's `request.signal` cancels
 * everything, including a pending backoff sleep.
 *
 * @example
 * const model = withRetries(openAICompatible({ baseUrl, model: "qwen" }, { retry: false }), {
 *   retries: 2,
 *   timeoutMs: 10_000,
 * });
 */
export function withRetries(model: LanguageModel, options: RetryOptions = {}): LanguageModel {
  const parsed = RetryOptionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new ProviderConfigError(`invalid retry options: ${z.prettifyError(parsed.error)}`);
  }
  const settings = { ...DEFAULTS, ...definedOnly(parsed.data) };
  const schedule = retrySchedule(settings);
  return {
    provider: model.provider,
    modelId: model.modelId,
    generate: (request: GenerateRequest): Promise<GenerateResponse> => {
      let attempt = 0;
      const oneAttempt = Effect.suspend(() => {
        attempt++;
        const thisAttempt = attempt;
        return Effect.tryPromise({
          // Effect aborts this signal when the timeout (or the caller's signal) interrupts the fiber.
          try: (signal) => model.generate({ ...request, signal }),
          catch: (error): unknown => error,
        }).pipe(
          Effect.timeoutFail({
            duration: Duration.millis(settings.timeoutMs),
            onTimeout: (): unknown =>
              new ProviderTimeoutError(settings.timeoutMs, thisAttempt, settings.retries + 1),
          }),
        );
      });
      return runEffect(oneAttempt.pipe(Effect.retry(schedule)), request.signal);
    },
  };
}

function retrySchedule(settings: Required<RetryOptions>): Schedule.Schedule<unknown, unknown> {
  return Schedule.exponential(Duration.millis(settings.baseDelayMs), 2).pipe(
    Schedule.jittered,
    Schedule.modifyDelay((_, delay) => Duration.min(delay, Duration.millis(settings.maxDelayMs))),
    Schedule.intersect(Schedule.recurs(settings.retries)),
    // Pair each decision with the error that caused it, so the delay can read its Retry-After.
    Schedule.intersect(Schedule.identity<unknown>()),
    Schedule.modifyDelay(([, error], delay) => {
      const retryAfterMs = error instanceof ProviderHttpError ? error.retryAfterMs : undefined;
      if (retryAfterMs === undefined) return delay;
      return Duration.max(delay, Duration.millis(Math.min(retryAfterMs, settings.maxRetryAfterMs)));
    }),
    Schedule.whileInput(isRetryableProviderError),
  );
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
