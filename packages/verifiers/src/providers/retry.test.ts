import type { GenerateRequest, GenerateResponse, LanguageModel } from "@rubric/core";
import { describe, expect, it } from "vitest";
import { ProviderConfigError, ProviderHttpError, ProviderResponseError } from "./errors.js";
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
});
