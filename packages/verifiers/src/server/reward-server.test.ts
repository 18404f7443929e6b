import { parseFlatRubric } from "@rubric/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rulesRegistry } from "../registry/registry.js";
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
