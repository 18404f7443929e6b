import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { arcoMarkdown } from "@rubric/repro";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { arcoTable } from "../../repro/src/arco/__fixtures__/table.js";
import { runCli } from "./cli.js";

/**
 * `rubric report` on any run directory, in-process: a page, or a fault named on stderr with the
 * directory's path (exit 1) — never a stack trace, never a hang on a FIFO or a device, never a
 * byte of a file that a link in the directory points at (a secret here; /etc/passwd).
 * A run directory is untrusted input: it may have come from someone else (issue 29 items 2, 10, 14).
 */
const dir = mkdtempSync(join(tmpdir(), "rubric-report-fuzz-"));
const SECRET = "sk-fuzz-secret-29";
const secretFile = join(dir, "secret.env");
writeFileSync(secretFile, `OPENAI_API_KEY=${SECRET}\n`);

/** Every path inside a JSON value, for mutating one field of a valid table. */
function pathsOf(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (value === null || typeof value !== "object") return [prefix];
  const keys = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  return [
    prefix,
    ...keys.flatMap((key) => pathsOf((value as Record<string | number, unknown>)[key], [...prefix, key])),
  ];
}
const TABLE_PATHS = pathsOf(arcoTable).filter((path) => path.length > 0);

function withField(path: readonly (string | number)[], value: unknown): unknown {
  const copy = structuredClone(arcoTable) as unknown as Record<string | number, unknown>;
  let at = copy;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  at[path.at(-1)!] = value;
  return copy;
}

const KINDS = ["arco-hotpotqa", "arcane-gym", "arcane-llm", "arcane-sidecar-manager", "__proto__", "constructor"];

/** What table.json (or table.md) holds: text of many shapes, or something that is not a file's text. */
const entry = fc.oneof(
  fc.constant({ type: "absent" } as const),
  {
    weight: 4,
    arbitrary: fc
      .oneof(
        { weight: 2, arbitrary: fc.constant(JSON.stringify(arcoTable)) },
        {
          weight: 3,
          arbitrary: fc
            .tuple(fc.nat(TABLE_PATHS.length - 1), fc.jsonValue({ maxDepth: 2 }))
            .map(([i, value]) => JSON.stringify(withField(TABLE_PATHS[i]!, value))),
        },
        fc.constantFrom(...KINDS).map((kind) => JSON.stringify({ ...arcoTable, kind })),
        fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
        fc.nat(2000).map((n) => JSON.stringify(arcoTable).slice(0, n)),
        fc.string(),
        fc.constant(arcoMarkdown(arcoTable)),
      )
      .map((text) => ({ type: "text", text }) as const),
  },
  fc
    .constantFrom(secretFile, "/etc/passwd", "/dev/zero", "/proc/self/environ", join(dir, "nowhere"), ".")
    .map((to) => ({ type: "symlink", to }) as const),
  fc.constant({ type: "fifo" } as const),
  fc.constant({ type: "directory" } as const),
);
type Entry = typeof entry extends fc.Arbitrary<infer T> ? T : never;

function place(path: string, what: Entry): void {
  if (what.type === "text") writeFileSync(path, what.text);
  else if (what.type === "symlink") symlinkSync(what.to, path);
  else if (what.type === "fifo") execFileSync("mkfifo", [path]);
  else if (what.type === "directory") mkdirSync(path);
}

let run = 0;
let pages = 0;
describe("fuzz: report on run directories", () => {
  it("a page or a named fault, never a crash, a hang or a linked file's bytes", async () => {
    await fc.assert(
      fc.asyncProperty(entry, entry, async (json, markdown) => {
        const runDir = join(dir, `run-${run}`);
        const page = join(dir, `page-${run++}.html`);
        mkdirSync(runDir);
        place(join(runDir, "table.json"), json);
        place(join(runDir, "table.md"), markdown);
        let out = "";
        let err = "";
        const code = await runCli(["report", runDir, "--out", page], {
          out: (t) => (out += t),
          err: (t) => (err += t),
        });
        expect([0, 1]).toContain(code);
        expect(err).not.toMatch(/\n\s+at .*:\d+:\d+/); // no stack trace
        expect(err).not.toContain(SECRET);
        expect(err).not.toContain("root:x:");
        if (code === 1) {
          expect(err).toContain(runDir);
          expect(existsSync(page)).toBe(false);
          return;
        }
        // A page only from a table.json that is a regular file, not a link; nothing of table.md.
        expect(json.type).toBe("text");
        pages++;
        expect(out).toContain(`wrote ${page}`);
        const html = readFileSync(page, "utf8");
        expect(html).not.toContain(SECRET);
        expect(html).not.toContain("root:x:");
      }),
      { seed: 20261205, numRuns: 120 },
    );
    // The property is only worth something if pages are written too, not only faults named.
    expect(pages).toBeGreaterThan(10);
  }, 180_000);
});
