import { existsSync, mkdtempSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { InputFileSymlinkError, InputFileTooLargeError, InputLineTooLongError } from "@rubric/core/files";
import { MAX_WHOLE_FILE_BYTES, readJsonLinesFile, readText, readTextInside } from "./io.js";

const dir = mkdtempSync(join(tmpdir(), "rubric-io-"));

describe("readText", () => {
  it("drops a UTF-8 byte-order mark", () => {
    const path = join(dir, "bom.json");
    writeFileSync(path, "\uFEFF{}");
    expect(readText(path)).toBe("{}");
  });

  it("refuses a file too large to hold as a string, a directory and a device, naming them", () => {
    const big = join(dir, "big.jsonl");
    writeFileSync(big, "");
    truncateSync(big, MAX_WHOLE_FILE_BYTES + 1); // sparse: no disk is spent
    expect(() => readText(big)).toThrow(InputFileTooLargeError);
    expect(() => readText(big)).toThrow(`${big}: 257 MiB is too large to read whole (the limit is 256 MiB)`);
    expect(() => readText(dir)).toThrow(`${dir}: is a directory, not a regular file`);
    expect(() => readText(join(dir, "nope"))).toThrow("cannot read (no such file)");
    // A device is refused before a byte is read (it read many GB before, then 256 MiB).
    if (existsSync("/dev/zero"))
      expect(() => readText("/dev/zero")).toThrow(
        "/dev/zero: is a character device, not a regular file; name a regular file, or - to read standard input",
      );
  });

  it("follows the user's own link, but readTextInside (a run directory's files) refuses one", () => {
    const target = join(dir, "target.json");
    writeFileSync(target, "{}");
    const link = join(dir, "link.json");
    symlinkSync(target, link);
    expect(readText(link)).toBe("{}");
    expect(() => readTextInside(link)).toThrow(InputFileSymlinkError);
    expect(readTextInside(target)).toBe("{}");
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
    await expect(readJsonLinesFile(dir, z.object({}))).rejects.toThrow(`${dir}: is a directory, not a regular file`);
  });

  it("names the file and line of a line over the bound, whatever the bound", async () => {
    const path = join(dir, "long.jsonl");
    writeFileSync(path, `{"id":"a"}\n{"id":"${"b".repeat(100)}"}\n{"id":"c"}\n`);
    const schema = z.strictObject({ id: z.string() });
    expect((await readJsonLinesFile(path, schema, { maxLineBytes: 200 })).records).toHaveLength(3);
    const error = await readJsonLinesFile(path, schema, { maxLineBytes: 50 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputLineTooLongError);
    expect((error as Error).message).toBe(
      `${path}:line 2: longer than 50 bytes, the most one line may hold; nothing was read past it`,
    );
  });
});
