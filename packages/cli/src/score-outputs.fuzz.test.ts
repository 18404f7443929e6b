import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runCli } from "./cli.js";

/**
 * `rubric score --outputs` on any outputs file, in-process: it prints a JSON report (exit 0, or 2
 * with error verdicts) or names the fault on stderr (exit 1) — never a stack trace, never a score
 * for an output that could not be read.
 */
const dir = mkdtempSync(join(tmpdir(), "rubric-outputs-fuzz-"));
const rubricFile = join(dir, "rubric.json");
writeFileSync(
  rubricFile,
  JSON.stringify({
    id: "r",
    criteria: [
      { id: "rev", text: "Mentions revenue", weight: 2, verifier: { kind: "includes", terms: ["revenue"] } },
      { id: "short", text: "Short", weight: 1, verifier: { kind: "length", max: 50, unit: "words" } },
    ],
  }),
);
writeFileSync(join(dir, "real.txt"), "a file");

const output = fc.record(
  {
    id: fc.oneof(fc.string(), fc.integer(), fc.jsonValue()),
    input: fc.oneof(fc.string(), fc.jsonValue()),
    output: fc.oneof(fc.string(), fc.constant("revenue rose"), fc.jsonValue()),
    files: fc.oneof(
      fc.jsonValue(),
      fc.array(
        fc.record({ name: fc.string(), path: fc.constantFrom("real.txt", "missing.txt", "/etc/passwd", "..", dir) }),
      ),
    ),
  },
  { requiredKeys: [] },
);
const lineOf = fc.oneof(
  output.map((o) => JSON.stringify(o)),
  fc.string(),
  fc.constant(""),
);

let run = 0;
describe("fuzz: score --outputs files", () => {
  it("report or a named fault, never a crash", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(lineOf, { maxLength: 6 }), async (lines) => {
        const file = join(dir, `outputs-${run++}.jsonl`);
        writeFileSync(file, lines.map((l) => l.replace(/[\r\n]/g, " ")).join("\n"));
        let out = "";
        let err = "";
        const code = await runCli(["score", "--rubric", rubricFile, "--outputs", file, "--json"], {
          out: (t) => (out += t),
          err: (t) => (err += t),
        });
        expect([0, 1, 2]).toContain(code);
        expect(err).not.toMatch(/\n\s+at .*:\d+:\d+/); // no stack trace
        if (code === 1) {
          expect(out).toBe("");
          expect(err).toContain(file);
          return;
        }
        const report = JSON.parse(out) as { results: { normalized: number | null; errors: number }[] };
        for (const r of report.results) {
          if (r.errors > 0) expect(r.normalized).toBeNull();
          else expect(r.normalized).toBeGreaterThanOrEqual(0);
        }
      }),
      { seed: 20261203, numRuns: 80 },
    );
  }, 120_000);
});
