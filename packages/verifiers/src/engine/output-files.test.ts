import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseFlatRubric } from "@rubric/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createVerifierRegistry } from "../registry/registry.js";
import { scoreOutputs } from "./engine.js";
import { OutputFileOutsideRootError, confineOutputFiles, fileDigest } from "./output-files.js";

// The python verifier reads each file back into its rationale: had a file outside the root been
// mounted, its contents would show up there. Real bubblewrap, as in run.test.ts.
const echoFile = parseFlatRubric({
  id: "echo",
  criteria: [
    {
      id: "content",
      text: "Echoes its file",
      weight: 1,
      verifier: {
        kind: "python",
        code: "def evaluate(workflow, context):\n    return 1, ''.join(open(r.file_path).read() for r in context.get_all_outputs())\n",
      },
    },
  ],
});

let base: string;
let root: string;
let secret: string;
beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), "output-files-"));
  root = join(base, "outputs");
  mkdirSync(join(root, "run-1"), { recursive: true });
  writeFileSync(join(root, "run-1", "report.csv"), "a,b\n1,2\n");
  secret = join(base, "secret.txt");
  writeFileSync(secret, "the host's secret\n");
  symlinkSync(secret, join(root, "run-1", "innocent.csv"));
  symlinkSync(join(root, "run-1", "report.csv"), join(root, "inside-link.csv"));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe("scoreOutputs({ filesRoot })", () => {
  it("never mounts a file outside the root: the output gets error verdicts naming the path, the others score", async () => {
    const outputs = [
      { id: "absolute", output: "", files: [{ name: "secret.txt", path: secret }] },
      { id: "dotdot", output: "", files: [{ name: "s.txt", path: join(root, "run-1", "..", "..", "secret.txt") }] },
      { id: "symlink", output: "", files: [{ name: "innocent.csv", path: join(root, "run-1", "innocent.csv") }] },
      { id: "fine", output: "", files: [{ name: "report.csv", path: join(root, "run-1", "report.csv") }] },
    ];
    const results = await scoreOutputs(echoFile, outputs, {
      registry: createVerifierRegistry({ python: { timeoutMs: 30_000 } }),
      filesRoot: root,
    });
    for (const result of results.slice(0, 3)) {
      const [verdict] = result.verdicts;
      expect(verdict).toMatchObject({ status: "error", score: null });
      expect(verdict!.error).toContain("OutputFileOutsideRootError");
      expect(verdict!.error).toContain(root);
      expect(JSON.stringify(verdict)).not.toContain("the host's secret");
      expect(result.score).toBeNull();
    }
    expect(results[0]!.verdicts[0]!.error).toContain(secret);
    expect(results[3]!.verdicts[0]).toMatchObject({ status: "ok", score: 1, rationale: "a,b\n1,2\n" });
  });
});

describe("scoreOutputs with files that cannot be read", () => {
  it("gives a missing file or a directory that output's error verdicts, and scores the rest (no filesRoot)", async () => {
    const outputs = [
      { id: "missing", output: "", files: [{ name: "gone.csv", path: join(root, "run-1", "gone.csv") }] },
      { id: "directory", output: "", files: [{ name: "run-1", path: join(root, "run-1") }] },
      { id: "fine", output: "", files: [{ name: "report.csv", path: join(root, "run-1", "report.csv") }] },
    ];
    const results = await scoreOutputs(echoFile, outputs, {
      registry: createVerifierRegistry({ python: { timeoutMs: 30_000 } }),
    });
    expect(results[0]!.verdicts[0]).toMatchObject({ status: "error", score: null });
    expect(results[0]!.verdicts[0]!.error).toMatch(
      /OutputFileNotFoundError: output file .*gone\.csv cannot be resolved/,
    );
    expect(results[1]!.verdicts[0]!.error).toMatch(
      /OutputFileUnreadableError: output file .*run-1 cannot be read: it is a directory/,
    );
    expect(results.slice(0, 2).map((r) => r.score)).toEqual([null, null]);
    expect(results[2]!.verdicts[0]).toMatchObject({ status: "ok", score: 1 });
  });
});

describe("fileDigest", () => {
  it("streams the file's sha256", async () => {
    const { createHash } = await import("node:crypto");
    const expected = createHash("sha256").update("a,b\n1,2\n").digest("hex");
    expect(await fileDigest(join(root, "run-1", "report.csv"))).toBe(expected);
  });
});

describe("confineOutputFiles", () => {
  it("resolves symlinks that stay inside the root to their real paths", async () => {
    const [file] = await confineOutputFiles([{ name: "r.csv", path: join(root, "inside-link.csv") }], root);
    expect(file).toMatchObject({ name: "r.csv", path: join(root, "run-1", "report.csv") });
  });

  it("names the path and the root when a file is outside, and rejects a root-prefixed sibling", async () => {
    writeFileSync(`${root}-evil.txt`, "x");
    const error = await confineOutputFiles([{ name: "e", path: `${root}-evil.txt` }], root).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutputFileOutsideRootError);
    expect(error).toMatchObject({ path: `${root}-evil.txt`, root, code: "verification.output-file-outside-root" });
  });
});
