import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { GenerateRequest } from "@rubric/core";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ProviderConfigError, ProviderRequestError } from "./errors.js";
import { llamaCpp } from "./llama-cpp.js";

// The shared 260K-parameter TinyStories model: no chat template, no instruction following;
// it proves the plumbing (seeds, grammar, samples), not the quality of any answer.
const MODEL_PATH = fileURLToPath(new URL("../../../../../shared/models/stories260K.gguf", import.meta.url));
// The model is part of the project's shared data: its absence is a failure, not a skip.
if (!existsSync(MODEL_PATH)) throw new Error(`${MODEL_PATH} is missing: these tests run the real local model from ../shared/models`);

const Verdict = z.strictObject({ score: z.literal([0, 1, 2, 3]), reason: z.string().max(40) });
const verdictSchema = z.toJSONSchema(Verdict) as Record<string, unknown>;
const story: GenerateRequest = {
  messages: [{ role: "user", content: "Once upon a time" }],
  temperature: 0.8,
  maxTokens: 24,
};

describe("llamaCpp with stories260K", () => {
  // threads: 1 explicitly — the suite runs beside other test files on a small machine.
  const model = llamaCpp({ modelPath: MODEL_PATH, threads: 1 });
  afterAll(() => model.dispose());

  it("is reported as llama-cpp, by file name", () => {
    expect([model.provider, model.modelId]).toEqual(["llama-cpp", "stories260K.gguf"]);
  });

  it("gives identical text for the same seed, and counts tokens", async () => {
    const first = await model.generate({ ...story, seed: 7 });
    const second = await model.generate({ ...story, seed: 7 });
    expect(first.choices[0]?.text.length).toBeGreaterThan(0);
    expect(second.choices[0]?.text).toBe(first.choices[0]?.text);
    expect(first.usage.inputTokens).toBeGreaterThan(0);
    expect(first.usage.outputTokens).toBeGreaterThan(0);
    expect(first.usage.outputTokens).toBeLessThanOrEqual(24);
  });

  it("returns JSON valid against the schema when a JSON format is asked for", async () => {
    const response = await model.generate({
      messages: [{ role: "user", content: "Score the story from 0 to 3." }],
      responseFormat: { type: "json-schema", name: "verdict", schema: verdictSchema },
      seed: 3,
      maxTokens: 120,
    });
    const [choice] = response.choices;
    expect(Verdict.safeParse(choice?.json).success, choice?.text).toBe(true);
  });

  it("draws n samples with seeds seed, seed+1, … (sample k equals a single call with seed+k)", async () => {
    const pair = await model.generate({ ...story, seed: 100, n: 2 });
    const second = await model.generate({ ...story, seed: 101 });
    expect(pair.choices).toHaveLength(2);
    expect(pair.choices[1]?.text).toBe(second.choices[0]?.text);
  });

  it("reports teacher-forced logprobs with sorted alternatives", async () => {
    const response = await model.generate({ ...story, seed: 1, maxTokens: 8, topLogprobs: 3 });
    const logprobs = response.choices[0]?.logprobs ?? [];
    expect(logprobs.length).toBeGreaterThan(0);
    for (const t of logprobs) {
      expect(t.logprob).toBeLessThanOrEqual(0);
      expect(t.top).toHaveLength(3);
      const tops = t.top!.map((a) => a.logprob);
      expect(tops).toEqual([...tops].sort((a, b) => b - a));
      expect(t.logprob).toBeLessThanOrEqual(tops[0]! + 1e-9);
    }
    expect(logprobs.map((t) => t.token).join("").trim()).toBe(response.choices[0]?.text);
  });

  it("renders through a chat template when told to (a guessed one, for this model)", async () => {
    const chat = llamaCpp({ modelPath: MODEL_PATH, threads: 1, promptFormat: "chat-template" });
    try {
      const response = await chat.generate({
        messages: [
          { role: "system", content: "Tell stories." },
          { role: "user", content: "A story about a cat." },
        ],
        seed: 2,
        maxTokens: 16,
      });
      expect(response.choices[0]?.text.length).toBeGreaterThan(0);
    } finally {
      await chat.dispose();
    }
  });

  it("refuses a prompt longer than the context", async () => {
    const small = llamaCpp({ modelPath: MODEL_PATH, threads: 1, contextSize: 64 });
    try {
      const long = "Once upon a time there was a cat. ".repeat(40);
      await expect(small.generate({ messages: [{ role: "user", content: long }] })).rejects.toBeInstanceOf(
        ProviderRequestError,
      );
    } finally {
      await small.dispose();
    }
  });

  it("serialises concurrent calls without mixing them up", async () => {
    const [a, b] = await Promise.all([
      model.generate({ ...story, seed: 7 }),
      model.generate({ ...story, seed: 100 }),
    ]);
    const again = await model.generate({ ...story, seed: 7 });
    expect(a.choices[0]?.text).toBe(again.choices[0]?.text);
    expect(b.choices[0]?.text.length).toBeGreaterThan(0);
  });
});

describe("llamaCpp configuration", () => {
  it("names a missing model file", async () => {
    const model = llamaCpp({ modelPath: "/nonexistent/model.gguf" });
    await expect(model.generate({ messages: [{ role: "user", content: "hi" }] })).rejects.toThrow(
      /no model file at \/nonexistent\/model.gguf/,
    );
  });

  it("rejects invalid options, and calls after dispose", async () => {
    expect(() => llamaCpp({ modelPath: "m.gguf", threads: 0 })).toThrow(ProviderConfigError);
    const model = llamaCpp({ modelPath: "m.gguf" });
    await model.dispose();
    await expect(model.generate({ messages: [] })).rejects.toThrow(/disposed/);
  });
});
