import type { GenerateRequest, GenerateResponse, LanguageModel } from "@rubric/core";
import { describe, expect, it } from "vitest";
import {
  ProviderConfigError,
  ProviderDeadlineError,
  ProviderHttpError,
  ProviderResponseError,
  ProviderTimeoutError,
} from "../errors.js";
import { isRetryableProviderError, withRetries } from "./retry.js";

const ask: GenerateRequest = { messages: [{ role: "user", content: "hi" }] };
const ok: GenerateResponse = { choices: [{ text: "ok" }], usage: { inputTokens: 1, outputTokens: 1 } };

/** A model that fails with the given errors in turn, then answers. */
function flaky(errors: unknown[]): LanguageModel & { calls: number } {
  const model = {
    provider: "test",
    modelId: "flaky",
    calls: 0,
    generate: async (): Promise<GenerateResponse> => {
      model.calls++;
      const error = errors.shift();
      if (error !== undefined) throw error;
      return ok;
    },
  };
  return model;
}

/** A model that never answers until its attempt's signal aborts; records each attempt's signal. */
function hangingModel(): { model: LanguageModel; signals: AbortSignal[] } {
  const signals: AbortSignal[] = [];
  const model: LanguageModel = {
    provider: "test",
    modelId: "hangs",
    generate: ({ signal }) =>
      new Promise((_, reject) => {
        signals.push(signal!);
        signal!.addEventListener("abort", () => reject(signal!.reason));
      }),
  };
  return { model, signals };
}

describe("isRetryableProviderError", () => {
  it("retries 429 and 5xx, not other 4xx or malformed responses", () => {
    expect(isRetryableProviderError(new ProviderHttpError("u", 429, ""))).toBe(true);
    expect(isRetryableProviderError(new ProviderHttpError("u", 502, ""))).toBe(true);
    expect(isRetryableProviderError(new ProviderHttpError("u", 404, ""))).toBe(false);
    expect(isRetryableProviderError(new ProviderResponseError("bad"))).toBe(false);
    expect(isRetryableProviderError(new TypeError("bug"))).toBe(false);
  });
});

describe("withRetries", () => {
  it("keeps provider and model id", () => {
    const wrapped = withRetries(flaky([]));
    expect([wrapped.provider, wrapped.modelId]).toEqual(["test", "flaky"]);
  });

  it("retries transient errors up to `retries` times", async () => {
    const model = flaky([new ProviderHttpError("u", 500, ""), new ProviderHttpError("u", 503, "")]);
    await expect(withRetries(model, { retries: 2, baseDelayMs: 1 }).generate(ask)).resolves.toEqual(ok);
    expect(model.calls).toBe(3);
  });

  it("does not retry programming errors", async () => {
    const model = flaky([new TypeError("undefined is not a function")]);
    await expect(withRetries(model, { baseDelayMs: 1 }).generate(ask)).rejects.toBeInstanceOf(TypeError);
    expect(model.calls).toBe(1);
  });

  it("caps backoff at maxDelayMs", async () => {
    const errors = Array.from({ length: 4 }, () => new ProviderHttpError("u", 500, ""));
    const model = flaky(errors);
    const started = performance.now();
    await withRetries(model, { retries: 4, baseDelayMs: 1_000, maxDelayMs: 10 }).generate(ask);
    expect(performance.now() - started).toBeLessThan(5_000); // uncapped it would be ≥ 12 s
  });

  it("rejects invalid options by name", () => {
    expect(() => withRetries(flaky([]), { retries: -1 })).toThrow(ProviderConfigError);
    expect(() => withRetries(flaky([]), { retries: -1 })).toThrow(/retries/);
  });

  it("aborts an attempt's signal when its budget runs out, and retries", async () => {
    const { model: hanging, signals } = hangingModel();
    const error = await withRetries(hanging, { retries: 1, baseDelayMs: 1, timeoutMs: 30 })
      .generate(ask)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderTimeoutError);
    expect(error).toMatchObject({ timeoutMs: 30, attempt: 2, maxAttempts: 2 });
    expect(signals.map((s) => s.aborted)).toEqual([true, true]);
  });

  it("gives the whole call one deadline: the attempt in flight is aborted and no retry follows", async () => {
    const { model: hanging, signals } = hangingModel();
    // 1,000 retries of 40 ms attempts would take 40 s; the 150 ms deadline ends the call after a few.
    const error = await withRetries(hanging, {
      retries: 1_000,
      baseDelayMs: 1,
      maxDelayMs: 1,
      timeoutMs: 40,
      deadlineMs: 150,
    })
      .generate(ask)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderDeadlineError);
    expect(error).toMatchObject({ code: "provider.deadline", deadlineMs: 150, isRetryable: false });
    const { attempts } = error as ProviderDeadlineError;
    expect(attempts).toBeGreaterThanOrEqual(1);
    expect(attempts).toBeLessThan(50);
    expect(signals).toHaveLength(attempts);
    expect(signals.every((s) => s.aborted)).toBe(true);
    // Nothing runs on after the deadline.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(signals).toHaveLength(attempts);
  });

  it("treats a synchronous throw as a failed attempt", async () => {
    let calls = 0;
    const model: LanguageModel = {
      provider: "test",
      modelId: "throws",
      generate: () => {
        if (calls++ === 0) throw new ProviderHttpError("u", 503, "");
        return Promise.resolve(ok);
      },
    };
    await expect(withRetries(model, { baseDelayMs: 1 }).generate(ask)).resolves.toEqual(ok);
    expect(calls).toBe(2);
  });

  it("cancels the attempt in flight when the caller aborts", async () => {
    let inner: AbortSignal | undefined;
    const model: LanguageModel = {
      provider: "test",
      modelId: "slow",
      generate: ({ signal }) => {
        inner = signal;
        return new Promise(() => {});
      },
    };
    const controller = new AbortController();
    const pending = withRetries(model).generate({ ...ask, signal: controller.signal });
    setTimeout(() => controller.abort(new Error("stop")), 20);
    await expect(pending).rejects.toThrow("stop");
    expect(inner?.aborted).toBe(true);
  });
});
