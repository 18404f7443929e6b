import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { GenerateRequest } from "@rubric/core";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ProviderConfigError, ProviderRequestError } from "../errors.js";
import { llamaCpp } from "./llama-cpp.js";

// The shared 260K-parameter TinyStories model: no chat template, no instruction following;
// it proves the plumbing (seeds, grammar, samples), not the quality of any answer.
const MODEL_PATH = fileURLToPath(new URL("../../../../../shared/models/stories260K.gguf", import.meta.url));
// The model is part of the project's shared data: its absence is a failure, not a skip.
if (!existsSync(MODEL_PATH))
  throw new Error(`${MODEL_PATH} is missing: these tests run the real local model from ../shared/models`);

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
    expect(
      logprobs
        .map((t) => t.token)
        .join("")
        .trim(),
    ).toBe(response.choices[0]?.text);
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
    const [a, b] = await Promise.all([model.generate({ ...story, seed: 7 }), model.generate({ ...story, seed: 100 })]);
    const again = await model.generate({ ...story, seed: 7 });
    expect(a.choices[0]?.text).toBe(again.choices[0]?.text);
    expect(b.choices[0]?.text.length).toBeGreaterThan(0);
  });
});

describe("llamaCpp prompt cache", () => {
  // Requests that share long prefixes, as a judge's calls share the task before each response.
  const opening = "Once upon a time there was a little girl named Lily. She loved to play in the park with her dog. ";
  const request = (i: number, prefixSentences: number): GenerateRequest => ({
    messages: [
      { role: "system", content: "Tell stories." },
      { role: "user", content: `${opening.repeat(prefixSentences)}Then story ${i} began:` },
    ],
    temperature: 1,
    seed: i,
    maxTokens: 24,
  });
  const calls = [request(0, 6), request(1, 6), request(2, 3), request(3, 6), request(4, 1), request(5, 6)];

  it("gives the same text from a reused prefix as from an empty context, and reports what it reused", async () => {
    const cached = llamaCpp({ modelPath: MODEL_PATH, threads: 1, promptCache: 2 });
    const fresh = llamaCpp({ modelPath: MODEL_PATH, threads: 1, promptCache: 0 });
    try {
      for (const call of calls) {
        const [a, b] = [await cached.generate(call), await fresh.generate(call)];
        expect(a.choices[0]?.text).toBe(b.choices[0]?.text);
        expect(a.usage.inputTokens).toBe(b.usage.inputTokens);
        expect(b.usage.cachedInputTokens).toBeUndefined();
      }
      // The second six-sentence request finds the first one's state: all but its tail is reused.
      const again = await cached.generate(request(9, 6));
      expect(again.usage.cachedInputTokens).toBeGreaterThan(again.usage.inputTokens * 0.8);
    } finally {
      await Promise.all([cached.dispose(), fresh.dispose()]);
    }
  });

  it("reads log-probs from the kept prompt: greedy tokens are the argmax, and a reused prefix changes nothing", async () => {
    const cached = llamaCpp({ modelPath: MODEL_PATH, threads: 1, promptCache: 2 });
    const fresh = llamaCpp({ modelPath: MODEL_PATH, threads: 1, promptCache: 0 });
    try {
      const greedy: GenerateRequest = { ...request(7, 6), temperature: 0, maxTokens: 12, topLogprobs: 2 };
      await cached.generate(request(8, 6)); // leaves a state sharing most of the prompt
      const [a, b] = [await cached.generate(greedy), await fresh.generate(greedy)];
      expect(a.usage.cachedInputTokens).toBeGreaterThan(100);
      const logprobs = a.choices[0]?.logprobs ?? [];
      expect(logprobs.length).toBeGreaterThan(0);
      // Greedy decoding takes the likeliest token at every step: an off-by-one position would not.
      for (const t of logprobs) expect(t.logprob).toBe(t.top![0]!.logprob);
      expect(logprobs).toEqual(b.choices[0]?.logprobs);
    } finally {
      await Promise.all([cached.dispose(), fresh.dispose()]);
    }
  });

  it("keeps one state per slot: with two slots an interleaved short prompt does not evict the long one", async () => {
    const long = request(0, 8);
    const other: GenerateRequest = { messages: [{ role: "user", content: "A dog ran." }], seed: 1, maxTokens: 8 };
    const reusedAfterInterleaving = async (promptCache: number) => {
      const model = llamaCpp({ modelPath: MODEL_PATH, threads: 1, promptCache });
      try {
        await model.generate(long);
        await model.generate(other);
        return (await model.generate(request(1, 8))).usage.cachedInputTokens ?? 0;
      } finally {
        await model.dispose();
      }
    };
    const [one, two] = [await reusedAfterInterleaving(1), await reusedAfterInterleaving(2)];
    expect(one).toBeLessThan(5); // only what "A dog ran." shares with it
    expect(two).toBeGreaterThan(100);
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
