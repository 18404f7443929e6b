import { parseFlatRubric, type Verdict } from "@rubric/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { VerifierRegistry, createVerifierRegistry, rulesRegistry } from "../registry/registry.js";
import { includesVerifier } from "../rules/includes.js";
import { okDraft, type VerificationInput, type Verifier } from "../verifier/verifier.js";
import { gatedReport } from "./__fixtures__/gated-report.js";
import { VerificationSetupError } from "./errors.js";
import { scoreOutputs, scoreOutputsSync } from "./engine.js";

/** Every rule kind, partial credit and penalties included. */
const everyRule = parseFlatRubric({
  id: "every-rule",
  criteria: [
    {
      id: "terms",
      text: "Mentions revenue and margin",
      weight: 2,
      verifier: { kind: "includes", terms: ["revenue", "margin"] },
    },
    { id: "hype", text: "Never 'guaranteed'", weight: 1, verifier: { kind: "excludes", terms: ["guaranteed"] } },
    {
      id: "quarter",
      text: "Names a quarter",
      weight: 1,
      verifier: { kind: "regex", pattern: "\\bQ[1-4]\\b", minMatches: 2 },
    },
    { id: "short", text: "At most 40 words", weight: 1, verifier: { kind: "length", max: 40, tolerance: 0.5 } },
    { id: "table", text: "Has a heading", weight: 1, verifier: { kind: "markdown", headings: { min: 1 } } },
    { id: "cites", text: "Cites a source", weight: 1, verifier: { kind: "citations", min: 2 } },
    {
      id: "growth",
      text: "States 4.2% growth",
      weight: 3,
      verifier: { kind: "numeric", expected: 4.2, tolerance: 0.05 },
    },
    { id: "plain", text: "Reads at grade 14 or below", weight: 1, verifier: { kind: "readability", max: 14 } },
    {
      id: "json",
      text: "Embeds a JSON object with a total",
      weight: 1,
      verifier: { kind: "json-schema", extract: "embedded", schema: { type: "object", required: ["total"] } },
    },
    { id: "caps", text: "Shouts", weight: 1, polarity: "penalty", verifier: { kind: "regex", pattern: "[A-Z]{6,}" } },
  ],
});

const outputs = [
  '# Q3 memo\nRevenue grew 4.2% in Q3 and Q4 margin held [1] [2]. {"total": 12}',
  "Revenue is GUARANTEED to grow. Margin: steady.",
  "",
  "A long answer ".repeat(30),
  "## Notes\n- margin 4.19%\n- see https://example.org and doi:10.1000/xyz",
].map((output, i) => ({ id: `o${i}`, output }));

/** The same registry with every `check` removed: `scoreOutputs` then takes its per-verdict path. */
function withoutChecks(registry: VerifierRegistry): VerifierRegistry {
  return new VerifierRegistry(
    registry.kinds().map((kind) => {
      const { check: _, ...rest } = registry.get(kind)!;
      return rest as Verifier;
    }),
  );
}

const comparable = (verdicts: readonly Verdict[]) => verdicts.map(({ latencyMs: _, ...v }) => v);

describe("the batched rule path", () => {
  it("gives the per-verdict path's verdicts and scores, for every rule kind", async () => {
    const slow = await scoreOutputs(everyRule, outputs, { registry: withoutChecks(rulesRegistry()) });
    const fast = scoreOutputsSync(everyRule, outputs, { registry: rulesRegistry() });
    const batched = await scoreOutputs(everyRule, outputs, { registry: rulesRegistry() });
    expect(slow.flatMap((r) => r.verdicts.map((v) => v.score))).toContain(0.5); // partial credit is in play
    for (const [i, expected] of slow.entries())
      for (const got of [fast[i]!, batched[i]!]) {
        expect(comparable(got.verdicts)).toEqual(comparable(expected.verdicts));
        expect(got.score).toEqual(expected.score);
      }
  });

  it("stops a staged rubric where its gate stops it, as the per-verdict path does", async () => {
    // GDPval's staged rubrics hold code and judge rules; here both kinds are synchronous checks of
    // a downstream package's, so that the batched path runs them.
    const sync = (kind: "python" | "llm-judge", score: (output: string) => number): Verifier =>
      ({
        kind,
        specSchema: z.object({ kind: z.literal(kind) }).passthrough(),
        cheap: true,
        check: (_spec: unknown, input: VerificationInput) => okDraft(score(input.output)),
        verify: async (_criterion: unknown, _spec: unknown, input: VerificationInput) => okDraft(score(input.output)),
      }) as unknown as Verifier;
    const registry = new VerifierRegistry([
      sync("python", (o) => (o.includes("margin") ? 1 : 0)),
      sync("llm-judge", (o) => Math.min(1, o.length / 100)),
    ]);
    const staged = gatedReport();
    const slow = await scoreOutputs(staged, outputs, { registry: withoutChecks(registry) });
    const fast = scoreOutputsSync(staged, outputs, { registry });
    for (const [i, expected] of slow.entries()) {
      expect(comparable(fast[i]!.verdicts)).toEqual(comparable(expected.verdicts));
      expect(fast[i]!.score).toEqual(expected.score);
    }
    // Outputs without "margin" fail the gate: their second stage is never checked.
    expect(fast.map((r) => r.verdicts.length)).toEqual(outputs.map((o) => (o.output.includes("margin") ? 2 : 1)));
  });

  it("refuses a rubric with a verifier that has no synchronous check, naming each criterion", () => {
    const mixed = parseFlatRubric({
      id: "mixed",
      criteria: [
        { id: "rule", text: "Mentions revenue", weight: 1, verifier: { kind: "includes", terms: ["revenue"] } },
        { id: "code", text: "Parses", weight: 1, verifier: { kind: "js", code: "return 1" } },
      ],
    });
    let thrown: unknown;
    try {
      scoreOutputsSync(mixed, outputs, { registry: createVerifierRegistry({ python: false }) });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(VerificationSetupError);
    expect((thrown as VerificationSetupError).problems).toEqual([
      { criterionId: "code", problem: expect.stringContaining("verifier js has no synchronous check") },
    ]);
  });

  it("turns a check that throws into an error verdict — never a 0 — and the score reports it", () => {
    const broken: Verifier = {
      ...includesVerifier,
      check: () => {
        throw new Error("index out of range");
      },
    } as Verifier;
    const registry = rulesRegistry().register(broken, { replace: true });
    const [result] = scoreOutputsSync(everyRule, outputs.slice(0, 1), { registry });
    const terms = result!.verdicts.find((v) => v.criterionId === "terms")!;
    expect(terms).toMatchObject({
      status: "error",
      score: null,
      error: "verifier includes failed: index out of range",
    });
    expect(result!.score).toBeNull();
    expect(result!.errors).toBe(1);
    const [renormalized] = scoreOutputsSync(everyRule, outputs.slice(0, 1), { registry, errorsAs: "renormalize" });
    expect(renormalized!.score).not.toBeNull();
  });

  it("scoreOutputs' batched path reports progress per output and stops when aborted", async () => {
    const many = Array.from({ length: 300 }, (_, i) => ({ id: `m${i}`, output: `Revenue ${i} in Q${(i % 4) + 1}` }));
    const seen: number[] = [];
    await scoreOutputs(everyRule, many, { registry: rulesRegistry(), onProgress: (done) => seen.push(done) });
    expect(seen).toEqual(many.map((_, i) => i + 1));
    const controller = new AbortController();
    const run = scoreOutputs(everyRule, many, {
      registry: rulesRegistry(),
      signal: controller.signal,
      onProgress: (done) => done === 70 && controller.abort(new Error("stop")),
    });
    await expect(run).rejects.toThrow("stop");
  });
});
