import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CriterionToVerify } from "../../verifier/verifier.js";
import { PythonVerifierSpecSchema, pythonVerifier, type PythonVerifierSpec } from "./verifier.js";

// The shared data lives beside the repository (../shared from its root), never inside it.
const SHARED = fileURLToPath(new URL("../../../../../../shared/", import.meta.url));
const GDPVAL_TRAIN = join(SHARED, "data/gdpval/rubrics-train.jsonl");

// A wide wall-clock margin: parallel tests on a loaded 2-core box import pandas slowly.
const verifier = pythonVerifier({ timeoutMs: 30_000 });
let dir: string;

function criterion(spec: PythonVerifierSpec): CriterionToVerify {
  return { id: "c1", text: "a code rule", verifier: spec };
}

async function verify(raw: unknown, input: Parameters<typeof verifier.verify>[2]) {
  const spec = PythonVerifierSpecSchema.parse(raw);
  return verifier.verify(criterion(spec), spec, input, {});
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "python-verifier-test-"));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("PythonVerifierSpecSchema", () => {
  it("defaults maxScore to 1 and rejects unknown keys and non-positive weights", () => {
    expect(PythonVerifierSpecSchema.parse({ kind: "python", code: "x" })).toEqual({
      kind: "python",
      code: "x",
      maxScore: 1,
    });
    expect(PythonVerifierSpecSchema.safeParse({ kind: "python", code: "x", language: "py" }).success).toBe(false);
    expect(PythonVerifierSpecSchema.safeParse({ kind: "python", code: "x", maxScore: 0 }).success).toBe(false);
    expect(PythonVerifierSpecSchema.safeParse({ kind: "python", code: "" }).success).toBe(false);
  });
});

describe.concurrent("pythonVerifier", () => {
  it("turns points into a fraction, with the feedback as rationale and raw points as evidence", async () => {
    const draft = await verify(
      { kind: "python", code: "def evaluate(workflow, context):\n    return 1.5, 'half the checks'\n", maxScore: 3 },
      { output: "x" },
    );
    expect(draft).toEqual({
      status: "ok",
      score: 0.5,
      rationale: "half the checks",
      evidence: { raw: 1.5, maxScore: 3 },
    });
  });

  it("turns an exception into an error verdict carrying the traceback, never a 0", async () => {
    const draft = await verify(
      { kind: "python", code: "def evaluate(workflow, context):\n    return 1 / 0\n" },
      { output: "x" },
    );
    expect(draft.status).toBe("error");
    expect(draft.score).toBeNull();
    if (draft.status !== "error") return;
    expect(draft.error).toMatch(/^ZeroDivisionError: division by zero\nTraceback/);
    expect(draft.evidence).toMatchObject({
      kind: "exception",
      traceback: expect.stringContaining('File "<rule>", line 2'),
    });
  });

  it("applies the spec's own timeout", async () => {
    const draft = await verify(
      { kind: "python", code: "def evaluate(workflow, context):\n    while True:\n        pass\n", timeoutMs: 1000 },
      { output: "x" },
    );
    expect(draft).toMatchObject({ status: "error", evidence: { kind: "timeout" } });
  });

  it("names its harness and interpreter in the cache identity", () => {
    expect(verifier.cacheIdentity?.(PythonVerifierSpecSchema.parse({ kind: "python", code: "x" }))).toEqual({
      harness: 3,
      python: "/usr/bin/python3",
      timeoutMs: 30_000,
      memoryMb: 512,
      maxThreads: 64,
    });
  });

  it.skipIf(!existsSync(GDPVAL_TRAIN))(
    "runs a shipped GDPval code rule (ABI_INDEX.csv Sanity) end to end",
    async () => {
      const line = readFileSync(GDPVAL_TRAIN, "utf8")
        .split("\n")
        .find((l) => l.includes('"task_id": "0e386e32-df20-4d1f-b536-7159bc409ad5"'));
      expect(line, "task 0e386e32 in rubrics-train.jsonl").toBeDefined();
      const rubric = JSON.parse(line!) as {
        rubric: { stages: { rules: { type: string; name: string; weight: number; code?: string }[] }[] };
      };
      const rule = rubric.rubric.stages
        .flatMap((s) => s.rules)
        .find((r) => r.type === "code" && r.name === "ABI_INDEX.csv Sanity");
      expect(rule?.code).toContain("context.files.read_csv");

      // Two contracts on Polygon; one address is malformed. The rule's own arithmetic:
      // 0.4 (columns) + 0.3 × 1/2 (valid addresses) + 0.2 × 1 (networks) + 0.1 (≥ 2 rows) = 0.85.
      const csv = join(dir, "ABI_INDEX.csv");
      writeFileSync(
        csv,
        "contract,address,network,abi_path\n" +
          "Vault,0x52908400098527886E0F7030069857D2E4169EE7,polygon-mainnet,abi/Vault.json\n" +
          "Token,0xNOTANADDRESS,polygon-mumbai,abi/Token.json\n",
      );
      const draft = await verify(
        { kind: "python", code: rule!.code, maxScore: rule!.weight },
        {
          input: "Deploy the contracts and index their ABIs.",
          output: "Deployment package attached.",
          files: [{ name: "ABI_INDEX.csv", path: csv }],
        },
      );
      expect(draft.status).toBe("ok");
      if (draft.status !== "ok") return;
      expect(draft.score).toBeGreaterThanOrEqual(0);
      expect(draft.score).toBeLessThanOrEqual(1);
      expect(draft.score).toBeCloseTo(0.85 / rule!.weight, 9);
      expect(draft.rationale).toBe("rows=2, addr_ok=0.50, net_ok=1.00");
    },
  );
});

if (!existsSync(GDPVAL_TRAIN)) console.warn(`skipping the GDPval end-to-end rule: ${GDPVAL_TRAIN} is absent`);
