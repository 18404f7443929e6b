import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runCli } from "./cli.js";

/**
 * The files users name, of any content and any kind (a FIFO, a device, a directory), given to the
 * commands that read step files and predictions, in-process: a result, or the fault named on
 * stderr with the file's path (exit 1) — never a stack trace, never a hang on what is not a file.
 */
const dir = mkdtempSync(join(tmpdir(), "rubric-input-fuzz-"));
const question = join(dir, "dev.jsonl");
writeFileSync(
  question,
  `${JSON.stringify({ _id: "q1", question: "Q?", answer: "A", supporting_facts: [["T", 0]], context: [["T", ["A."]]] })}\n`,
);

/** A file of the given text, or something at its name that is not a regular file. */
const fileOf = (text: fc.Arbitrary<string>) =>
  fc.oneof(
    { weight: 5, arbitrary: text.map((t) => ({ type: "text", text: t }) as const) },
    fc.constantFrom(
      { type: "fifo" } as const,
      { type: "directory" } as const,
      { type: "link", to: "/dev/zero" } as const,
      { type: "link", to: join(dir, "nowhere") } as const,
    ),
  );
type Placed = typeof fileOf extends (t: fc.Arbitrary<string>) => fc.Arbitrary<infer T> ? T : never;

let n = 0;
function place(what: Placed): string {
  const path = join(dir, `input-${n++}`);
  if (what.type === "text") writeFileSync(path, what.text);
  else if (what.type === "fifo") execFileSync("mkfifo", [path]);
  else if (what.type === "directory") mkdirSync(path);
  else symlinkSync(what.to, path);
  return path;
}

async function run(args: readonly string[]) {
  let out = "";
  let err = "";
  const code = await runCli(args, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

const step = fc.record(
  {
    id: fc.oneof(fc.constantFrom("q1#0", "q1#1"), fc.string(), fc.integer()),
    task: fc.oneof(fc.constant("Which city?"), fc.jsonValue()),
    history: fc.oneof(
      fc.constant([]),
      fc.array(fc.record({ action: fc.string(), observation: fc.string() }), { maxLength: 2 }),
      fc.jsonValue(),
    ),
    budgetLeft: fc.oneof(fc.nat(5), fc.integer(), fc.jsonValue()),
    action: fc.oneof(fc.constant("Search[x]"), fc.string(), fc.jsonValue()),
  },
  { requiredKeys: [] },
);
const linesOf = <T>(record: fc.Arbitrary<T>) =>
  fc
    .array(
      fc.oneof(
        record.map((r) => JSON.stringify(r)),
        fc.string(),
        fc.constant(""),
      ),
      { maxLength: 4 },
    )
    .map((lines) => lines.map((l) => l.replace(/[\r\n]/g, " ")).join("\n"));

const predictions = fc.oneof(
  // The official form, so that some runs score.
  fc.string().map((answer) => JSON.stringify({ answer: { q1: answer } })),
  fc
    .record(
      {
        answer: fc.oneof(
          fc.dictionary(fc.constantFrom("q1", "q2"), fc.oneof(fc.string(), fc.jsonValue())),
          fc.jsonValue(),
        ),
        sp: fc.oneof(fc.dictionary(fc.constantFrom("q1"), fc.jsonValue()), fc.jsonValue()),
      },
      { requiredKeys: [] },
    )
    .map((p) => JSON.stringify(p)),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.string(),
);

describe("fuzz: step files and predictions", () => {
  it("mu criteria --steps: the steps' fault or the model's, named; never a crash or a hang", async () => {
    const model = join(dir, "no-model");
    let read = 0;
    await fc.assert(
      fc.asyncProperty(fileOf(linesOf(step)), async (given) => {
        const steps = place(given);
        const { code, err } = await run(["mu", "criteria", "--model", model, "--steps", steps]);
        expect(code).toBe(1);
        expect(err).not.toMatch(/\n\s+at .*:\d+:\d+/);
        // Steps that read are rated next: the missing model is then the named fault.
        expect(err.includes(steps) || err.includes(model), err).toBe(true);
        if (!err.includes(steps)) read++;
      }),
      { seed: 20261205, numRuns: 60 },
    );
    expect(read).toBeGreaterThan(0); // some step files were read whole, not all refused
  }, 120_000);

  it("eval hotpotqa --predictions: scores or the named fault; never a crash or a hang", async () => {
    let scored = 0;
    await fc.assert(
      fc.asyncProperty(fileOf(predictions), async (given) => {
        const file = place(given);
        const { code, out, err } = await run(["eval", "hotpotqa", "--data", question, "--predictions", file, "--json"]);
        expect([0, 1]).toContain(code);
        expect(err).not.toMatch(/\n\s+at .*:\d+:\d+/);
        if (code === 1) {
          expect(err).toContain(file);
          return;
        }
        expect(JSON.parse(out)).toHaveProperty("count", 1);
        scored++;
      }),
      { seed: 20261205, numRuns: 80 },
    );
    expect(scored).toBeGreaterThan(0);
  }, 120_000);
});
