import { parseFlatRubric } from "@rubric/core";
import { describe, expect, it } from "vitest";
import { VerificationSetupError } from "../engine/errors.js";
import { scoreOutputs } from "../engine/engine.js";
import { createVerifierRegistry } from "../registry/registry.js";
import { JsVerifierSpecSchema } from "./js/spec.js";
import { jsVerifier } from "./js/js-verifier.js";
import { PythonVerifierSpecSchema, pythonVerifier } from "./python/verifier.js";

const SLEEPS = "import time\ndef evaluate(workflow, context):\n    time.sleep(8)\n    return 1\n";

function pythonRubric(limits: { timeoutMs?: number; memoryMb?: number }) {
  return parseFlatRubric({
    id: "greedy",
    criteria: [{ id: "rule", text: "a code rule", weight: 1, verifier: { kind: "python", code: SLEEPS, ...limits } }],
  });
}

async function setupError(work: Promise<unknown>): Promise<VerificationSetupError> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(VerificationSetupError);
  return error as VerificationSetupError;
}

describe("operator maxima on sandbox limits", () => {
  it("refuses a python rule that asks for more time or memory than the default maxima, naming criterion and maximum", async () => {
    const registry = createVerifierRegistry();
    const time = await setupError(
      scoreOutputs(pythonRubric({ timeoutMs: 3e9 }), [{ id: "o", output: "" }], { registry }),
    );
    expect(time.problems).toEqual([
      {
        criterionId: "rule",
        problem: expect.stringMatching(
          /verifier\.timeoutMs: .*3000000000 ms.*maximum of 60000 ms.*--max-rule-timeout-ms/,
        ),
      },
    ]);
    const memory = await setupError(
      scoreOutputs(pythonRubric({ memoryMb: 8192 }), [{ id: "o", output: "" }], { registry }),
    );
    expect(memory.message).toMatch(/rule: invalid python spec at verifier\.memoryMb: .*8192 MiB.*maximum of 2048 MiB/);
  });

  it("takes the operator's maxima from the registry options, for both rule kinds", async () => {
    const registry = createVerifierRegistry({ ruleLimits: { maxTimeoutMs: 2000, maxMemoryMb: 64 } });
    const rubric = parseFlatRubric({
      id: "two-kinds",
      criteria: [
        { id: "py", text: "t", weight: 1, verifier: { kind: "python", code: SLEEPS, timeoutMs: 5000 } },
        { id: "js", text: "t", weight: 1, verifier: { kind: "js", code: "1", memoryBytes: 128 * 2 ** 20 } },
        { id: "modest", text: "t", weight: 1, verifier: { kind: "js", code: "1", timeoutMs: 2000 } },
      ],
    });
    const error = await setupError(scoreOutputs(rubric, [{ id: "o", output: "" }], { registry }));
    expect(error.problems.map((p) => p.criterionId)).toEqual(["py", "js"]);
    expect(error.problems[0]!.problem).toMatch(/5000 ms.*maximum of 2000 ms/);
    expect(error.problems[1]!.problem).toMatch(/134217728 bytes.*maximum of 67108864 bytes/);
  });

  it("runs a rule that asks for less, and uses the operator's time limit when the rule names none (real sandbox)", async () => {
    const registry = createVerifierRegistry({ python: { timeoutMs: 1500 } });
    const started = performance.now();
    const [result] = await scoreOutputs(pythonRubric({}), [{ id: "o", output: "" }], { registry });
    expect(result!.verdicts[0]).toMatchObject({ status: "error", evidence: { kind: "timeout" } });
    expect(performance.now() - started).toBeLessThan(6000);
  });

  it("refuses limits above the maximum when a verifier is called directly, too", async () => {
    const python = pythonVerifier({ maxTimeoutMs: 1000 });
    const spec = PythonVerifierSpecSchema.parse({ kind: "python", code: SLEEPS, timeoutMs: 5000 });
    const draft = await python.verify({ id: "c", text: "t", verifier: spec }, spec, { output: "" }, {});
    expect(draft).toMatchObject({ status: "error", error: expect.stringMatching(/maximum of 1000 ms/) });
    const js = jsVerifier({ maxTimeoutMs: 100 });
    const jsSpec = JsVerifierSpecSchema.parse({ kind: "js", code: "1", timeoutMs: 500 });
    expect(await js.verify({ id: "c", text: "t", verifier: jsSpec }, jsSpec, { output: "" }, {})).toMatchObject({
      status: "error",
      error: expect.stringMatching(/maximum of 100 ms/),
    });
  });

  it("refuses an operator default above the operator maximum when the verifier is made", () => {
    expect(() => pythonVerifier({ timeoutMs: 5000, maxTimeoutMs: 1000 })).toThrow(
      /timeoutMs 5000 is above maxTimeoutMs 1000/,
    );
  });
});
