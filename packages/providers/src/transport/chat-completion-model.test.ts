import { afterEach, describe, expect, it, vi } from "vitest";
import { ProviderConfigError } from "../errors.js";
import { HF_AMBIENT_KEY, OPENAI_AMBIENT_KEY, apiKeyFor } from "./chat-completion-model.js";

afterEach(() => vi.unstubAllEnvs());

describe("apiKeyFor", () => {
  it("sends the ambient key only to the provider's own host, and only over https", () => {
    vi.stubEnv("OPENAI_API_KEY", "sk-ambient");
    vi.stubEnv("HF_TOKEN", "hf-ambient");
    expect(apiKeyFor("https://api.openai.com/v1", undefined, OPENAI_AMBIENT_KEY)).toBe("sk-ambient");
    expect(apiKeyFor("http://api.openai.com/v1", undefined, OPENAI_AMBIENT_KEY)).toBeUndefined();
    expect(apiKeyFor("https://api.openai.com.evil.example/v1", undefined, OPENAI_AMBIENT_KEY)).toBeUndefined();
    expect(apiKeyFor("https://evil.example/api.openai.com", undefined, OPENAI_AMBIENT_KEY)).toBeUndefined();
    expect(apiKeyFor("http://127.0.0.1:8000/v1", undefined, OPENAI_AMBIENT_KEY)).toBeUndefined();
    expect(apiKeyFor("https://x.endpoints.huggingface.cloud/v1", undefined, HF_AMBIENT_KEY)).toBe("hf-ambient");
    expect(apiKeyFor("https://me-app.hf.space", undefined, HF_AMBIENT_KEY)).toBe("hf-ambient");
    expect(apiKeyFor("https://nothuggingface.co", undefined, HF_AMBIENT_KEY)).toBeUndefined();
    expect(apiKeyFor("https://api.openai.com/v1", undefined, HF_AMBIENT_KEY)).toBeUndefined();
  });

  it("sends a named key anywhere, requires it to be set, and sends none for false", () => {
    vi.stubEnv("MY_KEY", "named");
    expect(apiKeyFor("http://10.0.0.5:8080", "MY_KEY", OPENAI_AMBIENT_KEY)).toBe("named");
    vi.stubEnv("MY_KEY", "");
    expect(() => apiKeyFor("http://10.0.0.5:8080", "MY_KEY", OPENAI_AMBIENT_KEY)).toThrow(ProviderConfigError);
    vi.stubEnv("OPENAI_API_KEY", "sk-ambient");
    expect(apiKeyFor("https://api.openai.com/v1", false, OPENAI_AMBIENT_KEY)).toBeUndefined();
  });

  it("reads no ambient key that is set but empty", () => {
    vi.stubEnv("OPENAI_API_KEY", "");
    expect(apiKeyFor("https://api.openai.com/v1", undefined, OPENAI_AMBIENT_KEY)).toBeUndefined();
  });
});
