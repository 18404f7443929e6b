import { existsSync, mkdtempSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { InputFileError, MAX_WHOLE_FILE_BYTES, readJsonLinesFile, readText } from "./io.js";

const dir = mkdtempSync(join(tmpdir(), "rubric-io-"));

describe("readText", () => {
  it("drops a UTF-8 byte-order mark", () => {
    const path = join(dir, "bom.json");
    writeFileSync(path, "\uFEFF{}");
    expect(readText(path)).toBe("{}");
  });

  it("refuses a file too large to hold as a string, and a directory, naming them", () => {
    const big = join(dir, "big.jsonl");
    writeFileSync(big, "");
    truncateSync(big, MAX_WHOLE_FILE_BYTES + 1); // sparse: no disk is spent
    expect(() => readText(big)).toThrow(InputFileError);
    expect(() => readText(big)).toThrow(`${big}: 257 MiB is too large to read whole (the limit is 256 MiB)`);
    expect(() => readText(dir)).toThrow(`${dir}: cannot read (it is a directory)`);
    expect(() => readText(join(dir, "nope"))).toThrow("cannot read (no such file)");
    // A device has no size to check first: the bound holds while reading (it read many GB before).
    if (existsSync("/dev/zero"))
      expect(() => readText("/dev/zero")).toThrow("/dev/zero: gives more than 256 MiB, the most read whole");
  });
});

describe("readJsonLinesFile", () => {
  it("streams records and line-numbered issues, a BOM and CRLF line ends included", async () => {
    const path = join(dir, "o.jsonl");
    writeFileSync(path, '\uFEFF{"id":"a"}\r\n\r\n{"id":1}\r\n{"id":"a"}\r\n');
    const { records, issues } = await readJsonLinesFile(path, z.strictObject({ id: z.string() }), {
      idOf: (r) => r.id,
    });
    expect(records).toEqual([{ line: 1, value: { id: "a" } }]);
    expect(issues.map((i) => [i.line, i.path])).toEqual([
      [3, "id"],
      [4, "id"],
    ]);
    expect(issues[1]!.message).toBe('duplicate id "a" (first on line 1)');
    await expect(readJsonLinesFile(dir, z.object({}))).rejects.toThrow("cannot read (it is a directory)");
  });
});
