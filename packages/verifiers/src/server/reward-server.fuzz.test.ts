import { parseFlatRubric } from "@rubric/core";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rulesRegistry } from "../registry/registry.js";
import { rubricScorer, serveRewards, type RewardServer } from "./reward-server.js";

/**
 * `POST /score` fuzzed with any body: the server answers each with 200 and one reward (a number in
 * [0, 1], or null) per completion, or with a 4xx naming the fault — never a 500, never a dropped
 * connection, and it goes on answering /health.
 */
const rubric = parseFlatRubric({
  id: "r",
  criteria: [
    { id: "cites", text: "Cites", weight: 1, verifier: { kind: "citations", min: 1 } },
    { id: "short", text: "Short", weight: 1, verifier: { kind: "length", max: 20, unit: "words" } },
    { id: "re", text: "Has a year", weight: 1, verifier: { kind: "regex", pattern: "\\b(19|20)\\d\\d\\b" } },
  ],
});

let server: RewardServer;
beforeAll(async () => {
  server = await serveRewards(rubricScorer(rubric, { registry: rulesRegistry() }), {
    maxBodyBytes: 64 * 1024,
    maxBatch: 16,
  });
});
afterAll(() => server.close());

const text = fc.oneof(fc.string(), fc.string({ unit: "grapheme" }), fc.constant("See [1]. In 2024."));
const body = fc.oneof(
  fc.string(),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc
    .record(
      {
        prompts: fc.array(text, { maxLength: 20 }),
        completions: fc.array(text, { maxLength: 20 }),
        ids: fc.array(fc.string(), { maxLength: 20 }),
        extra: fc.jsonValue(),
      },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(v)),
);

describe("fuzz: reward server bodies", () => {
  it("answers every body with rewards or a named 4xx, and stays up", async () => {
    await fc.assert(
      fc.asyncProperty(body, async (raw) => {
        const reply = await fetch(`${server.url}/score`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: raw,
        });
        const answer = (await reply.json()) as { rewards?: (number | null)[]; error?: string };
        expect([200, 400, 413]).toContain(reply.status);
        if (reply.status === 200) {
          const parsed = JSON.parse(raw) as { completions: unknown[] };
          expect(answer.rewards).toHaveLength(parsed.completions.length);
          for (const r of answer.rewards!) expect(r === null || (r >= 0 && r <= 1)).toBe(true);
        } else expect(typeof answer.error).toBe("string");
      }),
      { seed: 20261203, numRuns: 150 },
    );
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });
});
