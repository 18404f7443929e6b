import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseFlatRubric } from "@rubric/core";
import { llamaCpp } from "@rubric/providers";
import { describe, expect, it } from "vitest";
import { scoreOutputs } from "../engine/engine.js";
import { rulesRegistry } from "../registry/registry.js";
import { llmJudge } from "./llm-judge.js";

// The shared 260K-parameter TinyStories model (no instruction following): it proves the judge's
// plumbing on a real local model — grammar, rationale bound, verdicts — not any judgement's quality.
const MODEL_PATH = fileURLToPath(new URL("../../../../../shared/models/stories260K.gguf", import.meta.url));
if (!existsSync(MODEL_PATH))
  throw new Error(`${MODEL_PATH} is missing: these tests run the real local model from ../shared/models`);

describe("llmJudge on stories260K", () => {
  it("with rationaleMaxLength, the grammar holds the rationale to it and the verdict still scores", async () => {
    const model = llamaCpp({ modelPath: MODEL_PATH, threads: 1 });
    try {
      const rubric = parseFlatRubric({
        id: "story",
        criteria: [
          {
            id: "cat",
            text: "The story has a cat",
            weight: 1,
            verifier: { kind: "llm-judge", scale: { min: 0, max: 4 } },
          },
          { id: "ending", text: "The story ends happily", weight: 1, verifier: { kind: "llm-judge" } },
        ],
      });
      const registry = rulesRegistry().register(
        llmJudge(model, { rationaleMaxLength: 5, maxTokens: 120, parseRetries: 0 }),
      );
      const outputs = [0, 1].map((i) => ({
        id: `o${i}`,
        input: "Write a story about a cat.",
        output: `Once upon a time there was a cat number ${i}.`,
      }));
      const results = await scoreOutputs(rubric, outputs, { registry });
      for (const result of results) {
        expect(result.verdicts.map((v) => v.status)).toEqual(["ok", "ok"]);
        for (const verdict of result.verdicts)
          expect((verdict as { rationale?: string }).rationale?.length ?? 99).toBeLessThanOrEqual(5); // unbound, it writes 11–16 characters here
        expect(result.score?.normalized).toBeGreaterThanOrEqual(0);
      }
    } finally {
      await model.dispose();
    }
  });
});
