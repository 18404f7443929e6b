import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultPython, defaultTrainerPath } from "../client/client.js";

/**
 * The real sidecar fed any line at all: it answers what it can read and refuses the rest with an
 * error reply, writes nothing but JSON lines, and still answers `health` within its deadline
 * afterwards — a line never kills its reader or wedges its loop.
 */
const child = spawn(defaultPython(), ["-m", "rubric_trainer", "serve", "--threads", "1"], {
  env: { ...process.env, PYTHONPATH: defaultTrainerPath()!, PYTHONUNBUFFERED: "1" },
  stdio: ["pipe", "pipe", "inherit"],
});
const messages: unknown[] = [];
const waiters: (() => void)[] = [];
createInterface({ input: child.stdout! }).on("line", (line) => {
  // Anything but a JSON line on stdout would be a protocol fault: JSON.parse throws, the test fails.
  messages.push(JSON.parse(line));
  for (const wake of waiters.splice(0)) wake();
});

function replyTo(id: string, deadlineMs: number): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no reply to ${id} within ${deadlineMs} ms`)), deadlineMs);
    const look = () => {
      const found = messages.find((m) => (m as { id?: unknown }).id === id) as Record<string, unknown> | undefined;
      if (found) {
        clearTimeout(timer);
        resolve(found);
      } else waiters.push(look);
    };
    look();
  });
}

beforeAll(async () => {
  await new Promise<void>((resolve) => {
    const ready = () => (messages.length > 0 ? resolve() : waiters.push(ready));
    ready();
  });
}, 120_000);
afterAll(() => {
  child.stdin!.end();
});

const method = fc.constantFrom(
  "health",
  "policy.sample",
  "gspo.loss",
  "policy.init",
  "checkpoint.load",
  "$/cancel",
  "nope",
);
const line = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc
    .record(
      { id: fc.oneof(fc.integer(), fc.string(), fc.jsonValue()), method, params: fc.jsonValue() },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(v)),
  fc.nat({ max: 3000 }).map((depth) => "[".repeat(depth) + "]".repeat(depth)),
);

describe("fuzz: sidecar request lines", () => {
  it("reads on after any line, answering health within its deadline", async () => {
    let probe = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(line, { minLength: 1, maxLength: 5 }), async (lines) => {
        // A line is one line: newlines inside the fuzz text would split it into several.
        for (const l of lines) child.stdin!.write(`${l.replace(/[\r\n]/g, " ")}\n`);
        const id = `probe-${probe++}`;
        child.stdin!.write(`${JSON.stringify({ id, method: "health", params: {} })}\n`);
        const reply = await replyTo(id, 30_000);
        expect(reply).toMatchObject({ id, result: { ok: true } });
      }),
      { seed: 20261203, numRuns: 60 },
    );
    expect(child.exitCode).toBeNull();
  }, 240_000);
});
