import { isRubricError, RubricError } from "@rubric/core";
import { describe, expect, it } from "vitest";
import {
  ProviderConfigError,
  ProviderError,
  ProviderHttpError,
  ProviderNetworkError,
  ProviderRequestError,
  ProviderResponseError,
  ProviderSpecError,
  ProviderTimeoutError,
} from "./errors.js";
import { isRetryableProviderError } from "./retry/retry.js";

describe("ProviderError", () => {
  it("gives every provider failure one base, a stable code and isRetryable as a field", () => {
    const cases: [ProviderError, string, boolean][] = [
      [new ProviderHttpError("http://x", 429, "slow down", 1000), "provider.http", true],
      [new ProviderHttpError("http://x", 503, ""), "provider.http", true],
      [new ProviderHttpError("http://x", 401, "bad key"), "provider.http", false],
      [new ProviderHttpError("http://x", 404, "no such model"), "provider.http", false],
      [new ProviderTimeoutError(100, 1, 3), "provider.timeout", true],
      [new ProviderNetworkError("http://x", new Error("ECONNREFUSED")), "provider.network", true],
      [new ProviderResponseError("not a chat completion", "<html>"), "provider.response", false],
      [new ProviderSpecError("nope", "no provider prefix"), "provider.spec", false],
      [new ProviderConfigError("HF_TOKEN is not set"), "provider.config", false],
      [new ProviderRequestError("prompt longer than the context"), "provider.request", false],
    ];
    for (const [error, code, retryable] of cases) {
      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toBeInstanceOf(RubricError);
      expect(isRubricError(error)).toBe(true);
      expect(error.code).toBe(code);
      expect(error.isRetryable).toBe(retryable);
      expect(Object.keys(error)).toContain("isRetryable"); // a field, visible to a logger's JSON
      expect(isRetryableProviderError(error)).toBe(retryable);
    }
  });

  it("does not call other errors retryable", () => {
    expect(isRetryableProviderError(new Error("boom"))).toBe(false);
    expect(isRetryableProviderError(Object.assign(new Error("x"), { isRetryable: true }))).toBe(false);
    expect(isRubricError(Object.assign(new Error("x"), { code: "ECONNRESET" }))).toBe(false);
  });
});
