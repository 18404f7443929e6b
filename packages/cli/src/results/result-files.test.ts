import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  OutputExistsError,
  OutputUnwritableError,
  prepareResultFiles,
  resultPair,
  writeResultFile,
} from "./result-files.js";

type OutputFileError = OutputExistsError | OutputUnwritableError;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "rubric-results-"));
});

const fail = (run: () => void): OutputFileError => {
  try {
    run();
  } catch (error) {
    expect([OutputExistsError, OutputUnwritableError].some((c) => error instanceof c)).toBe(true);
    return error as OutputFileError;
  }
  throw new Error("expected an OutputFileError");
};

describe("prepareResultFiles", () => {
  it("refuses an existing result without force, naming it and the flag that replaces it", () => {
    const path = join(dir, "card.json");
    writeFileSync(path, "earlier");
    const error = fail(() => prepareResultFiles([{ path, what: "the JSON card" }], false));
    expect(error).toMatchObject({ code: "cli.output-exists", path });
    expect(error.message).toBe(
      `${path}: already exists (the JSON card); pass --force to replace it, or choose another --out`,
    );
    expect(() => prepareResultFiles([{ path, what: "the JSON card" }], true)).not.toThrow();
    expect(readFileSync(path, "utf8")).toBe("earlier");
  });

  it("refuses a directory, and a directory that cannot be made, before any work", () => {
    expect(fail(() => prepareResultFiles([{ path: dir, what: "the card" }], true)).message).toMatch(/is a directory/);
    const file = join(dir, "plain");
    writeFileSync(file, "");
    const nested = join(file, "sub", "card.json");
    expect(fail(() => prepareResultFiles([{ path: nested, what: "the card" }], false))).toMatchObject({
      code: "cli.output-unwritable",
    });
  });

  it("refuses a dangling symbolic link at the result's name before the run, and replaces the link with force", () => {
    const path = join(dir, "table.json");
    symlinkSync(join(dir, "nowhere", "table.json"), path);
    const error = fail(() => prepareResultFiles([{ path, what: "a table" }], false));
    expect(error).toMatchObject({ code: "cli.output-exists", path });
    expect(error.message).toMatch(/is a dangling symbolic link; pass --force/);
    prepareResultFiles([{ path, what: "a table" }], true);
    writeResultFile(path, "{}", true);
    expect(lstatSync(path).isSymbolicLink()).toBe(false);
    expect(readFileSync(path, "utf8")).toBe("{}");
  });

  it.runIf(existsSync("/proc/self"))("answers at once for a directory no file system level will make (/proc)", () => {
    // Node's recursive mkdir spins forever there; level by level the first ENOENT is the answer.
    const error = fail(() => prepareResultFiles([{ path: "/proc/rubric-out/x/table.json", what: "a table" }], false));
    expect(error).toMatchObject({ code: "cli.output-unwritable" });
    expect(error.message).toMatch(/cannot create its directory \/proc\/rubric-out\/x/);
  });

  it("creates missing directories and leaves nothing behind", () => {
    const path = join(dir, "a", "b", "t.jsonl");
    prepareResultFiles([{ path, what: "a transcript" }], false);
    expect(readdirSync(join(dir, "a", "b"))).toEqual([]);
  });

  it.runIf(process.getuid?.() !== 0)("refuses a directory that does not take new files", () => {
    const locked = join(dir, "locked");
    mkdirSync(locked);
    chmodSync(locked, 0o500);
    try {
      expect(fail(() => prepareResultFiles([{ path: join(locked, "x.json"), what: "x" }], false)).message).toMatch(
        /does not take new files \(EACCES\)/,
      );
    } finally {
      chmodSync(locked, 0o700);
    }
  });
});

describe("writeResultFile", () => {
  it("writes whole files, refuses to replace without force, replaces with it, and leaves no temporary file", () => {
    const path = join(dir, "card.json");
    writeResultFile(path, "one", false);
    expect(readFileSync(path, "utf8")).toBe("one");
    expect(fail(() => writeResultFile(path, "two", false)).code).toBe("cli.output-exists");
    expect(readFileSync(path, "utf8")).toBe("one");
    writeResultFile(path, "three", true);
    expect(readFileSync(path, "utf8")).toBe("three");
    expect(readdirSync(dir)).toEqual(["card.json"]);
  });

  it("says what went wrong when the directory vanished", () => {
    const path = join(dir, "gone", "card.json");
    expect(fail(() => writeResultFile(path, "x", true)).message).toMatch(/cannot be written \(ENOENT\)/);
    expect(existsSync(path)).toBe(false);
  });
});

describe("resultPair", () => {
  it("swaps the extension for the sibling, and refuses a name without it", () => {
    expect(resultPair("runs/card.json", "--out", ".json", ".md")).toEqual({
      main: "runs/card.json",
      sibling: "runs/card.md",
    });
    expect(resultPair("CARD.JSON", "--out", ".json", ".md").sibling).toBe("CARD.md");
    expect(fail(() => resultPair("report.md", "--out", ".json", ".md")).message).toBe(
      "report.md: --out must name a .json file (its .md twin is written beside it, with the same stem)",
    );
    expect(() => resultPair("dir/.json", "--out", ".json", ".md")).toThrow(OutputUnwritableError);
  });
});
