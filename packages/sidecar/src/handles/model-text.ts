import type { ChatMessage } from "@rubric/core";
import type { CallOptions, SidecarClient } from "../client/client.js";

/**
 * Text through a transformers model's own tokenizer in the sidecar: `policy.*` for π and `mu.*`
 * for μ, one code path. An empty list asks nothing. A small transformer (no tokenizer of its own)
 * refuses each, "unavailable"; a model whose tokenizer has no template refuses `chat`.
 */
export interface ModelText {
  /** Each text's ids, no special token added. */
  tokenize(texts: readonly string[]): Promise<number[][]>;
  /** Each row's text, special tokens left out. */
  detokenize(ids: readonly (readonly number[])[]): Promise<string[]>;
  /**
   * Each conversation's ids through the model's chat template, with the assistant's turn opened:
   * the prompt a chat model answers. The template places its own special tokens.
   */
  chat(conversations: readonly (readonly ChatMessage[])[]): Promise<number[][]>;
}

export function modelText(client: SidecarClient, subject: "policy" | "mu", call: CallOptions): ModelText {
  return {
    async tokenize(texts) {
      if (texts.length === 0) return [];
      return (await client.request(`${subject}.tokenize`, { texts: [...texts] }, call)).ids;
    },
    async detokenize(ids) {
      if (ids.length === 0) return [];
      return (await client.request(`${subject}.detokenize`, { ids: ids.map((row) => [...row]) }, call)).texts;
    },
    async chat(conversations) {
      if (conversations.length === 0) return [];
      const params = {
        conversations: conversations.map((turns) => turns.map((t) => ({ role: t.role, content: t.content }))),
      };
      return (await client.request(`${subject}.chat`, params, call)).ids;
    },
  };
}
