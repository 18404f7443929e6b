import { describe, expect, it } from "vitest";
import { chatCompletionsUrl } from "./chat-completion-wire.js";

describe("chatCompletionsUrl", () => {
  it.each([
    ["http://127.0.0.1:8080", "http://127.0.0.1:8080/v1/chat/completions"],
    ["http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1/chat/completions"],
    ["https://api.openai.com/v1", "https://api.openai.com/v1/chat/completions"],
    ["https://x.endpoints.huggingface.cloud/v1/", "https://x.endpoints.huggingface.cloud/v1/chat/completions"],
    ["http://host/openai/v1/chat/completions", "http://host/openai/v1/chat/completions"],
    ["http://host/proxy", "http://host/proxy/v1/chat/completions"],
  ])("%s → %s", (base, url) => {
    expect(chatCompletionsUrl(base)).toBe(url);
  });
});
