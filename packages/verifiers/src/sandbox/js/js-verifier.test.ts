import { parseFlatRubric } from "@rubric/core";
import { afterAll, describe, expect, it } from "vitest";
import { scoreOutputs } from "../../engine/engine.js";
import { VerifierRegistry } from "../../registry/registry.js";
import type { CriterionToVerify } from "../../verifier/verifier.js";
import { jsVerifier } from "./js-verifier.js";
import { JsSandbox } from "./sandbox.js";
import { JsVerifierSpecSchema, type JsVerifierSpec } from "./spec.js";

const sandbox = new JsSandbox({ maxWorkers: 1 });
afterAll(() => sandbox.close());

const verifier = jsVerifier({ sandbox });
const criterion = (spec: JsVerifierSpec): CriterionToVerify => ({ id: "c", text: "a rule", verifier: spec });
const verify = (code: string, output = "Total: 42", extra: Partial<JsVerifierSpec> = {}) => {
  const spec = JsVerifierSpecSchema.parse({ kind: "js", code, ...extra });
  return verifier.verify(criterion(spec), spec, { input: "Sum the column", output }, {});
};

describe("JsVerifierSpecSchema", () => {
  it("accepts code with optional limits", () => {
    expect(JsVerifierSpecSchema.parse({ kind: "js", code: "1" })).toEqual({ kind: "js", code: "1" });
    expect(
      JsVerifierSpecSchema.parse({ kind: "js", code: "1", timeoutMs: 250, memoryBytes: 8 * 2 ** 20 }),
    ).toMatchObject({ timeoutMs: 250 });
  });

  it("rejects unknown keys, empty code and limits out of range", () => {
    expect(JsVerifierSpecSchema.safeParse({ kind: "js", code: "1", language: "ts" }).success).toBe(false);
    expect(JsVerifierSpecSchema.safeParse({ kind: "js", code: "" }).success).toBe(false);
    expect(JsVerifierSpecSchema.safeParse({ kind: "js", code: "1", timeoutMs: 120_000 }).success).toBe(false);
    expect(JsVerifierSpecSchema.safeParse({ kind: "js", code: "1", memoryBytes: 4 * 2 ** 30 }).success).toBe(false);
    expect(JsVerifierSpecSchema.safeParse({ kind: "python", code: "1" }).success).toBe(false);
  });
});

describe("jsVerifier", () => {
  it("turns a score into an ok verdict with the rule's rationale", async () => {
    expect(
      await verify("function evaluate({ output }) { return { score: 0.5, rationale: `${output.length} chars` }; }"),
    ).toEqual({
      status: "ok",
      score: 0.5,
      rationale: "9 chars",
    });
    expect(await verify("output.includes('Total')")).toEqual({ status: "ok", score: 1 });
  });

  it("turns a failed rule into an error verdict with its kind and stack as evidence", async () => {
    const thrown = await verify("function evaluate() {\n  throw new Error('no total');\n}");
    expect(thrown).toMatchObject({
      status: "error",
      score: null,
      error: "js rule exception: Error: no total (line 2, column 18)",
    });
    expect(thrown).toMatchObject({ evidence: { kind: "exception", stack: expect.stringContaining("rule.js:2") } });
    expect(await verify("while (true) {}", "x", { timeoutMs: 100 })).toMatchObject({
      status: "error",
      score: null,
      evidence: { kind: "timeout" },
    });
    expect(await verify("NaN")).toMatchObject({ status: "error", score: null, evidence: { kind: "invalid-result" } });
  });

  it("shows the rule file names and types, never their paths", async () => {
    const spec = JsVerifierSpecSchema.parse({
      kind: "js",
      code: "files.map((f) => `${f.name}:${f.mimeType}:${f.path}`).join() === 'a.xlsx:undefined:undefined'",
    });
    const draft = await verifier.verify(
      criterion(spec),
      spec,
      { output: "", files: [{ name: "a.xlsx", path: "/home/me/a.xlsx" }] },
      {},
    );
    expect(draft).toEqual({ status: "ok", score: 1 });
  });

  it("fills limits the spec leaves open from its options, and keys the cache by them", async () => {
    const strict = jsVerifier({ sandbox, timeoutMs: 100, memoryBytes: 16 * 2 ** 20 });
    const spec = JsVerifierSpecSchema.parse({ kind: "js", code: "while (true) {}" });
    expect(strict.cacheIdentity?.(spec)).toEqual({ timeoutMs: 100, memoryBytes: 16 * 2 ** 20 });
    expect(jsVerifier().cacheIdentity?.({ ...spec, timeoutMs: 300 })).toEqual({
      timeoutMs: 300,
      memoryBytes: 32 * 2 ** 20,
    });
    expect(await strict.verify(criterion(spec), spec, { output: "" }, {})).toMatchObject({
      evidence: { kind: "timeout" },
    });
  });

  it("scores rubrics through the engine", async () => {
    const rubric = parseFlatRubric({
      id: "report",
      criteria: [
        {
          id: "total",
          text: "States the total",
          weight: 1,
          verifier: { kind: "js", code: "/Total: \\d+/.test(output)" },
        },
        {
          id: "short",
          text: "Short",
          weight: 1,
          verifier: {
            kind: "js",
            code: "function evaluate({ output }) { return Math.max(0, 1 - output.length / 100); }",
          },
        },
      ],
    });
    const [result] = await scoreOutputs(rubric, [{ id: "a", output: "Total: 42" }], {
      registry: new VerifierRegistry([verifier]),
    });
    expect(result!.verdicts.map((v) => [v.criterionId, v.status, v.score])).toEqual([
      ["total", "ok", 1],
      ["short", "ok", 0.91],
    ]);
  });
});

describe("js rules written the way models write them", () => {
  it("may call console.log, and get the same Math.random numbers on every run", async () => {
    const { runJsRule } = await import("./run-js-rule.js");
    const code = "console.log('checking'); console.error('x'); Math.random()";
    const first = await runJsRule({ code, output: "" });
    const second = await runJsRule({ code, output: "" });
    expect(first.status).toBe("ok");
    expect(second).toMatchObject({ status: "ok", score: first.status === "ok" ? first.score : NaN });
  });
});
