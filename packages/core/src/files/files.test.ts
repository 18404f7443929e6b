import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  InputFileNotRegularError,
  InputFileSymlinkError,
  InputFileTooLargeError,
  InputFileUnreadableError,
  InputLineTooLongError,
  MAX_INPUT_FILE_BYTES,
  MAX_INPUT_LINE_BYTES,
  boundedLines,
  isInputFileError,
  readInputFile,
  readInputLines,
  readInputText,
} from "./index.js";

const dir = mkdtempSync(join(tmpdir(), "rubric-files-"));
const file = (name: string, content: string | Buffer) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const fifo = (name: string) => {
  const path = join(dir, name);
  // Node has no mkfifo of its own.
  execFileSync("mkfifo", [path]);
  return path;
};

async function collect(lines: AsyncIterable<string>): Promise<string[]> {
  const all: string[] = [];
  for await (const line of lines) all.push(line);
  return all;
}

async function* chunks(...parts: (string | Buffer)[]) {
  for (const part of parts) yield typeof part === "string" ? Buffer.from(part) : part;
}

describe("readInputText", () => {
  it("reads a regular file, without its byte-order mark, and through the user's own link", () => {
    const path = file("bom.json", "\uFEFF{}");
    expect(readInputText(path)).toBe("{}");
    const link = join(dir, "mine.json");
    symlinkSync(path, link);
    expect(readInputText(link)).toBe("{}");
  });

  it("refuses a FIFO at once, by name, without waiting for a writer", () => {
    const path = fifo("table.md");
    const started = Date.now();
    expect(() => readInputText(path)).toThrow(InputFileNotRegularError);
    expect(() => readInputText(path)).toThrow(`${path}: is a FIFO (named pipe), not a regular file`);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("refuses a device, a directory and a socket before reading any of it", async () => {
    if (existsSync("/dev/zero")) {
      expect(() => readInputText("/dev/zero")).toThrow("/dev/zero: is a character device, not a regular file");
      const link = join(dir, "zero");
      symlinkSync("/dev/zero", link);
      expect(() => readInputText(link)).toThrow(InputFileNotRegularError);
    }
    expect(() => readInputText(dir)).toThrow(`${dir}: is a directory, not a regular file`);
    const socketPath = join(dir, "s.sock");
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    try {
      const error = (() => {
        try {
          readInputText(socketPath);
        } catch (e) {
          return e as InputFileNotRegularError;
        }
      })();
      expect(error).toBeInstanceOf(InputFileNotRegularError);
      expect(error?.kind).toBe("a socket");
    } finally {
      server.close();
    }
  });

  it("refuses links where links are refused, naming the link and where it points", () => {
    const secret = file("secret.txt", "OPENAI_API_KEY=sk-x");
    const link = join(dir, "table.json");
    symlinkSync(secret, link);
    expect(() => readInputText(link, { symlinks: "refuse" })).toThrow(InputFileSymlinkError);
    expect(() => readInputText(link, { symlinks: "refuse" })).toThrow(`${link}: is a symbolic link (to ${secret})`);
    const dangling = join(dir, "dangling.json");
    symlinkSync(join(dir, "nowhere"), dangling);
    expect(() => readInputText(dangling, { symlinks: "refuse" })).toThrow(InputFileSymlinkError);
    expect(readInputText(secret, { symlinks: "refuse" })).toBe("OPENAI_API_KEY=sk-x");
    // A library reporting the file under its own error takes the fault without the path.
    const error = (() => {
      try {
        readInputText(link, { symlinks: "refuse" });
      } catch (e) {
        return e;
      }
    })();
    expect(isInputFileError(error)).toBe(true);
    expect(error).toMatchObject({
      code: "file.symlink",
      path: link,
      detail: expect.stringMatching(/^is a symbolic link/),
    });
    expect(isInputFileError(new Error("x"))).toBe(false);
  });

  it("refuses a file over the bound from its size, and names what cannot be opened", () => {
    const big = file("big.jsonl", "");
    truncateSync(big, MAX_INPUT_FILE_BYTES + 1); // sparse: no disk is spent
    expect(() => readInputText(big)).toThrow(InputFileTooLargeError);
    expect(() => readInputText(big)).toThrow(`${big}: 257 MiB is too large to read whole (the limit is 256 MiB)`);
    expect(() => readInputFile(file("ten", "0123456789"), { maxBytes: 9 })).toThrow("(the limit is 9 bytes)");
    expect(readInputFile(file("nine", "012345678"), { maxBytes: 9 }).length).toBe(9);
    expect(() => readInputText(join(dir, "nope"))).toThrow(InputFileUnreadableError);
    expect(() => readInputText(join(dir, "nope"))).toThrow(`${join(dir, "nope")}: cannot read (no such file)`);
    expect(() => readInputText(join(dir, "nope"), { symlinks: "refuse" })).toThrow("cannot read (no such file)");
  });
});

describe("boundedLines", () => {
  it("cuts lines on \\n and \\r\\n across any chunking, keeping UTF-8 whole", async () => {
    const text = "α,β\r\n\nline three\r\nlast";
    const bytes = Buffer.from(text);
    const byByte = [...bytes].map((b) => Buffer.from([b]));
    const expected = ["α,β", "", "line three", "last"];
    expect(await collect(boundedLines(chunks(text), "t"))).toEqual(expected);
    expect(await collect(boundedLines(chunks(...byByte), "t"))).toEqual(expected);
    expect(await collect(boundedLines(chunks("a\n"), "t"))).toEqual(["a"]);
    expect(await collect(boundedLines(chunks(""), "t"))).toEqual([]);
  });

  it("names the file and the line that passes the bound, and holds no more of it", async () => {
    const lines = boundedLines(chunks("ok\n", "12345\r\n", "123456", "789\nnever"), "outputs.jsonl", {
      maxLineBytes: 5,
    });
    const seen: string[] = [];
    const error = await (async () => {
      try {
        for await (const line of lines) seen.push(line);
      } catch (e) {
        return e as InputLineTooLongError;
      }
    })();
    expect(seen).toEqual(["ok", "12345"]); // a line of exactly the bound passes, its \r not counted
    expect(error).toBeInstanceOf(InputLineTooLongError);
    expect(error?.line).toBe(3);
    expect(error?.message).toBe(
      "outputs.jsonl:line 3: longer than 5 bytes, the most one line may hold; nothing was read past it",
    );
    await expect(collect(boundedLines(chunks("123456"), "f", { maxLineBytes: 5 }))).rejects.toThrow("f:line 1:");
  });
});

describe("readInputLines", () => {
  it("streams a regular file's lines, with the default bound wired in", async () => {
    expect(await collect(readInputLines(file("l.jsonl", "a\r\nb\n")))).toEqual(["a", "b"]);
    // One line of 64 MiB + 1 zero bytes (a sparse file, so no disk is spent).
    const long = file("long.jsonl", "");
    truncateSync(long, MAX_INPUT_LINE_BYTES + 1);
    await expect(collect(readInputLines(long))).rejects.toThrow(
      `${long}:line 1: longer than 64 MiB, the most one line may hold`,
    );
  });

  it("refuses a FIFO and a link as the whole-file reader does, before reading", async () => {
    await expect(collect(readInputLines(fifo("outputs.jsonl")))).rejects.toThrow(InputFileNotRegularError);
    const link = join(dir, "steps.jsonl");
    symlinkSync("/etc/passwd", link);
    await expect(collect(readInputLines(link, { symlinks: "refuse" }))).rejects.toThrow(InputFileSymlinkError);
  });
});
