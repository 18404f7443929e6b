import { request } from "node:http";
import { parseFlatRubric } from "@rubric/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { rulesRegistry } from "../registry/registry.js";
import { okDraft, type Verifier } from "../verifier/verifier.js";
import { rubricScorer, serveRewards, type RewardServer } from "./reward-server.js";

const rubric = parseFlatRubric({
  id: "answer",
  criteria: [
    { id: "cites", text: "Cites a source", weight: 1, verifier: { kind: "citations", min: 1 } },
    {
      id: "json",
      text: "Ends with a JSON verdict",
      weight: 1,
      verifier: { kind: "json-schema", schema: { type: "object", required: ["answer"] } },
    },
  ],
});

let server: RewardServer;
beforeAll(async () => {
  server = await serveRewards(rubricScorer(rubric, { registry: rulesRegistry() }), { maxBodyBytes: 4096, maxBatch: 3 });
});
afterAll(() => server.close());

const post = (body: unknown, raw?: string) =>
  fetch(`${server.url}/score`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: raw ?? JSON.stringify(body),
  });

describe("serveRewards", () => {
  it("answers health checks on 127.0.0.1", async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await (await fetch(`${server.url}/health`)).json()).toEqual({ ok: true, name: "rubric-rewards" });
  });

  it("scores prompts and completions, one reward per completion, with verdicts", async () => {
    const response = await post({
      prompts: ["q1", "q2"],
      completions: ['See [1].\n```json\n{"answer": 4}\n```', "no idea"],
      ids: ["a", "b"],
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { rewards: number[]; results: unknown[] };
    expect(body.rewards).toEqual([1, 0]);
    expect(body.results[1]).toMatchObject({
      id: "b",
      errors: 0,
      verdicts: [
        { criterionId: "cites", score: 0, status: "ok" },
        { criterionId: "json", score: 0 },
      ],
    });
  });

  it("rejects bad requests with the path of the fault", async () => {
    const mismatch = await post({ prompts: ["only one"], completions: ["a", "b"] });
    expect(mismatch.status).toBe(400);
    expect(((await mismatch.json()) as { error: string }).error).toBe(
      "prompts: expected 2 prompts (one per completion), got 1",
    );
    expect((await post(undefined, "{nope")).status).toBe(400);
    expect((await post({ prompts: ["a", "b", "c", "d"], completions: ["a", "b", "c", "d"] })).status).toBe(413);
    expect((await post({ prompts: ["x"], completions: ["y".repeat(5000)] })).status).toBe(413);
    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
    expect((await fetch(`${server.url}/score`)).status).toBe(405);
  });
});

/** A slow verifier kind that records how many of its calls run at once, and which were cancelled. */
function slowKind(delayMs: number) {
  const stats = { inFlight: 0, maxInFlight: 0, started: 0, aborted: 0 };
  const verifier: Verifier<{ kind: "includes"; terms: string[] }> = {
    kind: "includes",
    specSchema: z.strictObject({ kind: z.literal("includes"), terms: z.array(z.string()) }),
    async verify(_criterion, _spec, _input, { signal } = {}) {
      stats.started++;
      stats.inFlight++;
      stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
      try {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, delayMs);
          signal?.addEventListener("abort", () => {
            clearTimeout(timer);
            stats.aborted++;
            reject(signal.reason);
          });
        });
        return okDraft(1);
      } finally {
        stats.inFlight--;
      }
    },
  };
  return { stats, registry: rulesRegistry().register(verifier, { replace: true }) };
}

const slowRubric = parseFlatRubric({
  id: "slow",
  criteria: [{ id: "c", text: "Says hi", weight: 1, verifier: { kind: "includes", terms: ["hi"] } }],
});

describe("serveRewards under load and abuse", () => {
  // Issue 29 item 5: one 40-character completion against this schema left /health unanswered for
  // over 22 s, the schema's pattern running on JavaScript's backtracking engine.
  it("stays responsive while scoring a completion against a schema with a catastrophic pattern", async () => {
    const words = parseFlatRubric({
      id: "words",
      criteria: [
        {
          id: "w",
          text: "Is words",
          weight: 1,
          verifier: { kind: "json-schema", extract: "whole", schema: { type: "string", pattern: "^(\\w+\\s?)*$" } },
        },
      ],
    });
    const guarded = await serveRewards(rubricScorer(words, { registry: rulesRegistry() }));
    try {
      const body = JSON.stringify({ prompts: ["", ""], completions: [`"${"a".repeat(40)}!"`, '"two words"'] });
      const [scored, health] = await Promise.all([
        fetch(`${guarded.url}/score`, { method: "POST", headers: { "content-type": "application/json" }, body }),
        fetch(`${guarded.url}/health`),
      ]);
      expect(health.status).toBe(200);
      expect(((await scored.json()) as { rewards: number[] }).rewards).toEqual([0, 1]);
    } finally {
      await guarded.close();
    }
  }, 10_000);

  it("bounds verifier calls across requests, not per request", async () => {
    const { stats, registry } = slowKind(40);
    const limited = await serveRewards(rubricScorer(slowRubric, { registry, concurrency: 2 }));
    try {
      const body = JSON.stringify({ prompts: ["", "", ""], completions: ["a", "b", "c"] });
      const replies = await Promise.all(
        Array.from({ length: 8 }, () =>
          fetch(`${limited.url}/score`, { method: "POST", headers: { "content-type": "application/json" }, body }),
        ),
      );
      expect(replies.map((r) => r.status)).toEqual(Array(8).fill(200));
      expect(stats.started).toBe(24);
      expect(stats.maxInFlight).toBe(2);
    } finally {
      await limited.close();
    }
  });

  it("cancels a batch whose client went away", async () => {
    const { stats, registry } = slowKind(5_000);
    const slow = await serveRewards(rubricScorer(slowRubric, { registry, concurrency: 4 }));
    try {
      const body = JSON.stringify({ prompts: ["", ""], completions: ["a", "b"] });
      await new Promise<void>((resolve) => {
        const req = request(`${slow.url}/score`, { method: "POST", headers: { "content-type": "application/json" } });
        req.on("error", () => resolve());
        req.end(body);
        // Hang up once the verifiers have started.
        const poll = setInterval(() => {
          if (stats.started === 2) {
            clearInterval(poll);
            req.destroy();
            resolve();
          }
        }, 5);
      });
      await expect.poll(() => stats.aborted, { timeout: 2_000 }).toBe(2);
      expect(stats.inFlight).toBe(0);
    } finally {
      await slow.close();
    }
  });

  it("takes only application/json, so a web page cannot post a form or text/plain to it", async () => {
    const body = JSON.stringify({ prompts: ["q"], completions: ["a"] });
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
      const reply = await fetch(`${server.url}/score`, { method: "POST", headers: { "content-type": type }, body });
      expect(reply.status, type).toBe(415);
      expect(((await reply.json()) as { error: string }).error).toContain("content-type application/json");
    }
    const withCharset = await fetch(`${server.url}/score`, {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8" },
      body,
    });
    expect(withCharset.status).toBe(200);
  });

  it("needs the bearer token when one is set; /health stays open", async () => {
    const guarded = await serveRewards(rubricScorer(rubric, { registry: rulesRegistry() }), { token: "s3cret" });
    try {
      const body = JSON.stringify({ prompts: ["q"], completions: ["a"] });
      const ask = (authorization?: string) =>
        fetch(`${guarded.url}/score`, {
          method: "POST",
          headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
          body,
        });
      expect((await ask()).status).toBe(401);
      expect((await ask("Bearer wrong!")).status).toBe(401);
      expect((await ask("Bearer s3cret")).status).toBe(200);
      expect((await fetch(`${guarded.url}/health`)).status).toBe(200);
    } finally {
      await guarded.close();
    }
  });

  it("refuses duplicate ids in one request, naming the second", async () => {
    const reply = await post({ prompts: ["q", "q", "q"], completions: ["a", "b", "c"], ids: ["x", "y", "x"] });
    expect(reply.status).toBe(400);
    expect(((await reply.json()) as { error: string }).error).toBe('ids[2]: duplicate id "x" (first at ids[0])');
  });
});
