import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InputFileNotRegularError } from "@rubric/core/files";
import { describe, expect, it } from "vitest";
import { VerdictCacheError, fileCache } from "./cache.js";

const key = (n: number) => n.toString(16).padStart(64, "0");

describe("fileCache", () => {
  it("after a torn last line, keeps the next verdict on a line of its own", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rubric-cache-"));
    const first = fileCache(dir);
    await first.set(key(1), { status: "ok", score: 1 });
    // A crash mid-write leaves half a line and no newline.
    const path = join(dir, "verdicts.jsonl");
    writeFileSync(path, `${readFileSync(path, "utf8")}{"key": "${key(2).slice(0, 20)}`);
    const second = fileCache(dir);
    expect(await second.stats()).toEqual({ entries: 1, corruptLines: 1 });
    await second.set(key(3), { status: "ok", score: 0.5 });
    await second.set(key(4), { status: "skipped", score: null });
    const third = fileCache(dir);
    expect(await third.stats()).toEqual({ entries: 3, corruptLines: 1 });
    expect(await third.get(key(3))).toEqual({ status: "ok", score: 0.5 });
    expect(readFileSync(path, "utf8").endsWith("\n")).toBe(true);
  });

  it("keeps a complete last record that only lacks its newline", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rubric-cache-"));
    writeFileSync(join(dir, "verdicts.jsonl"), JSON.stringify({ key: key(1), draft: { status: "ok", score: 1 } }));
    const cache = fileCache(dir);
    await cache.set(key(2), { status: "ok", score: 0 });
    expect(await fileCache(dir).stats()).toEqual({ entries: 2, corruptLines: 0 });
  });

  it("refuses a FIFO or device at the cache file's name by name, instead of hanging on it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rubric-cache-"));
    execFileSync("mkfifo", [join(dir, "verdicts.jsonl")]);
    await expect(fileCache(dir).get(key(1))).rejects.toThrow(InputFileNotRegularError);
    const zero = mkdtempSync(join(tmpdir(), "rubric-cache-"));
    symlinkSync("/dev/zero", join(zero, "verdicts.jsonl"));
    await expect(fileCache(zero).stats()).rejects.toThrow("verdicts.jsonl: is a character device");
  }, 10_000);

  it("refuses, when made, a file where the directory should be, and a directory it cannot write", () => {
    const dir = mkdtempSync(join(tmpdir(), "rubric-cache-"));
    const file = join(dir, "plain");
    writeFileSync(file, "");
    expect(() => fileCache(file)).toThrow(VerdictCacheError);
    expect(() => fileCache(file)).toThrow(`verdict cache ${file}: is a file, not a directory`);
    expect(() => fileCache(join(file, "sub"))).toThrow(`${file} is a file, not a directory`);
    expect(() => fileCache(join(dir, "new", "deeper"))).not.toThrow();
  });

  // Root writes anywhere, so the permission check can only be seen failing as another user.
  it.runIf(process.getuid?.() !== 0)("refuses a directory it cannot write", () => {
    const dir = mkdtempSync(join(tmpdir(), "rubric-cache-"));
    const locked = join(dir, "locked");
    mkdirSync(locked);
    chmodSync(locked, 0o500);
    try {
      expect(() => fileCache(locked)).toThrow(/is not writable/);
    } finally {
      chmodSync(locked, 0o700);
    }
  });
});
