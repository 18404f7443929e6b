import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseFlatRubric, registerVerifierKind, type VerifierKind } from "@rubric/core";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { fileCache, memoryCache } from "../verifier/cache.js";
import { verdictCacheKey } from "../verifier/cache-key.js";
import { VerifierRegistry, rulesRegistry } from "../registry/registry.js";
import { okDraft, type Verifier } from "../verifier/verifier.js";
import { gatedReport } from "./__fixtures__/gated-report.js";
import { VerificationSetupError } from "./errors.js";
import { scoreOutputs, scoreOutputsSync } from "./engine.js";

const memo = parseFlatRubric({
  id: "memo",
  criteria: [
    {
      id: "terms",
      text: "Mentions revenue and margin",
      weight: 2,
      verifier: { kind: "includes", terms: ["revenue", "margin"] },
    },
    { id: "short", text: "At most 12 words", weight: 1, verifier: { kind: "length", max: 12 } },
    {
      id: "hype",
      text: "Says 'guaranteed'",
      weight: 1,
      polarity: "penalty",
      verifier: { kind: "includes", terms: ["guaranteed"] },
    },
  ],
});

// The `judge` kind below is a downstream one: declared the way a third-party package declares its kinds.
declare module "@rubric/core" {
  interface VerifierKinds {
    judge: { kind: "judge"; scale?: unknown; prompt?: string; code?: string; maxScore?: number };
  }
}
registerVerifierKind("judge");

/** A downstream verifier kind, as a third-party package would register one; it counts its calls. */
function countingKind<K extends VerifierKind>(
  kind: K,
  behaviour: (output: string) => number | Error,
  options: { batch?: boolean; delayMs?: number } = {},
) {
  const stats = { calls: 0, batchCalls: 0, inFlight: 0, maxInFlight: 0 };
  const specSchema = z.strictObject({
    kind: z.literal(kind),
    scale: z.unknown().optional(),
    prompt: z.string().optional(),
    code: z.string().optional(),
    maxScore: z.number().optional(),
  });
  const judgeOne = async (output: string) => {
    stats.inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
    stats.inFlight--;
    const result = behaviour(output);
    if (result instanceof Error) throw result;
    return okDraft(result);
  };
  const verifier: Verifier<z.output<typeof specSchema>> = {
    kind,
    specSchema,
    cacheIdentity: () => ({ model: `${kind}-model`, temperature: 0 }),
    async verify(_c, _s, input) {
      stats.calls++;
      return judgeOne(input.output);
    },
    ...(options.batch
      ? {
          async verifyMany(items, input) {
            stats.batchCalls++;
            const draft = await judgeOne(input.output);
            return items.map(() => draft);
          },
        }
      : {}),
  };
  return { verifier, stats };
}

describe("scoreOutputs with rule verifiers", () => {
  it("verifies every criterion of every output and scores it, with provenance", async () => {
    const results = await scoreOutputs(
      memo,
      [
        { id: "good", output: "Revenue up, margin steady." },
        {
          id: "hype",
          output: "Guaranteed revenue growth, margins and more and more words beyond twelve words in total here.",
        },
      ],
      { registry: rulesRegistry() },
    );
    expect(results.map((r) => r.id)).toEqual(["good", "hype"]);
    expect(results[0]!.score?.normalized).toBe(1);
    // hype: terms 2·1 + short 1·0 − hype 1·1 = 1 → 1/3
    expect(results[1]!.score?.normalized).toBeCloseTo(1 / 3, 12);
    const v = results[1]!.verdicts[2]!;
    expect(v).toMatchObject({
      criterionId: "hype",
      status: "ok",
      score: 1,
      verifier: "includes",
      rationale: "all terms present",
    });
    // Rule checks are cheaper than hashing their input: no cache key, no cache entry.
    expect(v.cacheKey).toBeUndefined();
    expect(v.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it("refuses a rubric it cannot verify before doing any work, listing every problem", async () => {
    const bad = parseFlatRubric({
      id: "bad",
      criteria: [
        { id: "a", text: "a", weight: 1, verifier: { kind: "llm-judge", prompt: "?" } },
        { id: "b", text: "b", weight: 1, verifier: { kind: "length", unit: "pages", max: 2 } },
      ],
    });
    const error = await scoreOutputs(bad, [{ id: "x", output: "y" }], { registry: rulesRegistry() }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(VerificationSetupError);
    expect((error as VerificationSetupError).problems.map((p) => p.criterionId)).toEqual(["a", "b"]);
    expect((error as Error).message).toMatch(/no verifier for kind "llm-judge" \(configure a judge model/);
    expect((error as Error).message).toMatch(/invalid length spec at verifier.unit/);
  });
});

describe("errors, batching, gating, concurrency and caching", () => {
  const judged = parseFlatRubric({
    id: "judged",
    criteria: [
      { id: "j1", text: "clear", weight: 1, verifier: { kind: "judge" } },
      { id: "j2", text: "correct", weight: 1, verifier: { kind: "judge" } },
      { id: "r", text: "mentions revenue", weight: 1, verifier: { kind: "includes", terms: ["revenue"] } },
    ],
  });

  it("turns a verifier that throws into error verdicts: the score is withheld, never zeroed", async () => {
    const { verifier } = countingKind("judge", () => new Error("HTTP 503 after 4 retries"));
    const registry = rulesRegistry().register(verifier);
    const [failed] = await scoreOutputs(judged, [{ id: "x", output: "revenue" }], { registry });
    expect(failed!.errors).toBe(2);
    expect(failed!.score).toBeNull();
    expect(failed!.scoreError).toMatch(/CriterionErrorsError/);
    expect(failed!.verdicts[0]).toMatchObject({
      status: "error",
      score: null,
      error: expect.stringContaining("HTTP 503"),
    });
    const [renormalized] = await scoreOutputs(judged, [{ id: "x", output: "revenue" }], {
      registry,
      errorsAs: "renormalize",
    });
    expect(renormalized!.score?.normalized).toBe(1);
  });

  it("gives a batching verifier all its criteria of one output in one call", async () => {
    const { verifier, stats } = countingKind("judge", () => 0.5, { batch: true });
    const outputs = Array.from({ length: 5 }, (_, i) => ({ id: `o${i}`, output: `revenue ${i}` }));
    const results = await scoreOutputs(judged, outputs, { registry: rulesRegistry().register(verifier) });
    expect(stats.batchCalls).toBe(5);
    expect(stats.calls).toBe(0);
    expect(results.every((r) => r.score?.normalized === 2 / 3)).toBe(true);
  });

  it("bounds verifier calls in flight by `concurrency`", async () => {
    const { verifier, stats } = countingKind("judge", () => 1, { delayMs: 15 });
    const outputs = Array.from({ length: 12 }, (_, i) => ({ id: `o${i}`, output: `o${i}` }));
    await scoreOutputs(judged, outputs, { registry: rulesRegistry().register(verifier), concurrency: 3 });
    expect(stats.calls).toBe(24);
    expect(stats.maxInFlight).toBeLessThanOrEqual(3);
    expect(stats.maxInFlight).toBeGreaterThan(1);
  });

  it("stops verifying a staged rubric once a gate stops scoring", async () => {
    const staged = gatedReport();
    const code = countingKind("python", (output) => (output.includes("good") ? 1 : 0));
    const judge = countingKind("llm-judge", () => 0.5);
    const registry = new VerifierRegistry([code.verifier, judge.verifier]);
    const results = await scoreOutputs(
      staged,
      [
        { id: "bad", output: "bad shape" },
        { id: "good", output: "good shape" },
      ],
      { registry },
    );
    expect(results[0]!.verdicts.map((v) => v.criterionId)).toEqual(["s0.r0"]);
    expect(results[0]!.score).toMatchObject({ total: 0, stoppedAt: "gate" });
    expect(results[1]!.score).toMatchObject({ total: 7, stoppedAt: null });
    expect(judge.stats.calls).toBe(1);
  });

  it("reuses cached verdicts, across restarts, and keys them on everything they depend on", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rubric-cache-"));
    const first = countingKind("judge", () => 0.75);
    const outputs = [
      { id: "a", output: "revenue" },
      { id: "b", output: "no" },
    ];
    const before = await scoreOutputs(judged, outputs, {
      registry: rulesRegistry().register(first.verifier),
      cache: fileCache(dir),
    });
    expect(first.stats.calls).toBe(4);
    // A new cache object on the same directory stands for a new process.
    const second = countingKind("judge", () => 0.1);
    const after = await scoreOutputs(judged, outputs, {
      registry: rulesRegistry().register(second.verifier),
      cache: fileCache(dir),
    });
    expect(second.stats.calls).toBe(0);
    expect(after.map((r) => r.score?.normalized)).toEqual(before.map((r) => r.score?.normalized));
    expect(after[0]!.verdicts[0]).toMatchObject({ latencyMs: 0, cacheKey: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(after[0]!.verdicts[0]!.cacheKey).toBe(before[0]!.verdicts[0]!.cacheKey);
    // A torn last line (a crash mid-write) is skipped, not fatal.
    writeFileSync(join(dir, "verdicts.jsonl"), `${readFileSync(join(dir, "verdicts.jsonl"), "utf8")}{"key": "abc`);
    expect(await fileCache(dir).stats()).toMatchObject({ entries: 4, corruptLines: 1 });
    // Errors are not cached: the next run retries them.
    const cache = memoryCache();
    const failing = countingKind("judge", () => new Error("timeout"));
    await scoreOutputs(judged, outputs, { registry: rulesRegistry().register(failing.verifier), cache });
    expect(cache.size).toBe(0);
  });

  it("changes the cache key when any part changes", () => {
    const base = {
      spec: { kind: "judge" },
      criterionText: "clear",
      input: "task",
      output: "text",
      identity: { model: "m", temperature: 0 },
      sampleIndex: 0,
    };
    const key = verdictCacheKey(base);
    expect(verdictCacheKey({ ...base, identity: { temperature: 0, model: "m" } })).toBe(key);
    for (const change of [
      { spec: { kind: "judge", x: 1 } },
      { criterionText: "clearer" },
      { input: "other" },
      { output: "text." },
      { identity: { model: "m2", temperature: 0 } },
      { sampleIndex: 1 },
      { files: [{ name: "a.csv", sha256: "0".repeat(64) }] },
    ])
      expect(verdictCacheKey({ ...base, ...change })).not.toBe(key);
  });
});

describe("scoreOutputs without options", () => {
  it("scores rule and js criteria with the built-in kinds, and refuses a judge criterion up front by name", async () => {
    const rubric = parseFlatRubric({
      id: "memo",
      criteria: [
        { id: "revenue", text: "Mentions revenue", weight: 2, verifier: { kind: "includes", terms: ["revenue"] } },
        { id: "figure", text: "States 4.2M", weight: 1, verifier: { kind: "numeric", expected: 4.2, tolerance: 0.05 } },
        { id: "short", text: "Under 50 chars", weight: 1, verifier: { kind: "js", code: "output.length < 50" } },
      ],
    });
    const [result] = await scoreOutputs(rubric, [{ id: "a", input: "memo", output: "Revenue was 4.2M." }]);
    expect(result?.verdicts.map((v) => v.status)).toEqual(["ok", "ok", "ok"]);
    expect(result?.score?.normalized).toBe(1);

    const judged = parseFlatRubric({
      id: "j",
      criteria: [{ id: "clear", text: "Is clear", weight: 1, verifier: { kind: "llm-judge" } }],
    });
    await expect(scoreOutputs(judged, [{ id: "a", input: "", output: "x" }])).rejects.toThrow(/llm-judge/);
  });

  it("scores with weight overrides, in both paths, as core's scoreRubric does", async () => {
    const rubric = parseFlatRubric({
      id: "memo",
      criteria: [
        { id: "revenue", text: "Mentions revenue", weight: 2, verifier: { kind: "includes", terms: ["revenue"] } },
        { id: "costs", text: "Mentions costs", weight: 1, verifier: { kind: "includes", terms: ["costs"] } },
      ],
    });
    const outputs = [{ id: "a", input: "memo", output: "Revenue rose." }];
    const [plain] = await scoreOutputs(rubric, outputs);
    expect(plain?.score?.normalized).toBeCloseTo(2 / 3, 12);
    const weights = { costs: 6 };
    const [weighted] = await scoreOutputs(rubric, outputs, { weights });
    const [fast] = scoreOutputsSync(rubric, outputs, { weights });
    expect(weighted?.score?.normalized).toBeCloseTo(2 / 8, 12);
    expect(fast?.score?.normalized).toBeCloseTo(2 / 8, 12);
    await expect(scoreOutputs(rubric, outputs, { weights: { cost: 1 } })).rejects.toThrow(
      /weights\.cost: unknown criterion id/,
    );
  });
});
