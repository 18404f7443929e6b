import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InputFileNotRegularError, InputFileUnreadableError } from "@rubric/core/files";
import { describe, expect, it } from "vitest";
import { RlxarFileError, RlxarInputError } from "../errors.js";
import { HOTPOT_DEV, HOTPOT_TRAIN } from "./__fixtures__/shared-data.js";
import { loadHotpotQa, readHotpotQa } from "./data.js";

function fileError(run: () => unknown): RlxarFileError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(RlxarFileError);
    return error as RlxarFileError;
  }
  throw new Error("expected an RlxarFileError");
}

const row = (fields: Record<string, unknown>) =>
  JSON.stringify({
    _id: "q1",
    question: "Which?",
    answer: "A",
    supporting_titles: ["A"],
    context: [
      ["A", ["A is one.", " It is."]],
      ["B", ["B is two."]],
    ],
    ...fields,
  });

describe("readHotpotQa on the shared files", () => {
  it("reads the dev file: 400 questions with sentence-level supporting facts, type and level", () => {
    const dev = loadHotpotQa(HOTPOT_DEV);
    expect(dev).toHaveLength(400);
    const first = dev[0]!;
    expect(first).toMatchObject({
      id: "5ae143ed55429920d5234360",
      answer: "1755",
      type: "bridge",
      level: "hard",
      supportingTitles: ["Sergei Aleksandrovich Tokarev", "Moscow State University"],
      supportingFacts: [
        { title: "Sergei Aleksandrovich Tokarev", sentence: 0 },
        { title: "Moscow State University", sentence: 3 },
      ],
    });
    expect(first.paragraphs).toHaveLength(10);
    // Dev sentences carry their own leading spaces: concatenated, they are the Wikipedia paragraph.
    expect(first.paragraphs[0]!.text).toMatch(
      /^Lomonosov Moscow State University \(MSU; Russian: Московский государственный университет имени М\. В\. Ломоносова , often abbreviated МГУ\) is a coeducational/,
    );
    for (const question of dev)
      for (const paragraph of question.paragraphs) expect(paragraph.text).toBe(paragraph.sentences.join(""));
    expect(dev.filter((q) => q.paragraphs.length < 10)).toHaveLength(2);
  });

  it("reads the train file: 469 questions with two supporting titles and no supporting facts", () => {
    const train = loadHotpotQa(HOTPOT_TRAIN);
    expect(train).toHaveLength(469);
    expect(train.every((q) => q.supportingTitles.length === 2 && q.supportingFacts === undefined)).toBe(true);
    const first = train[0]!;
    expect(first.answer).toBe("Chief of Protocol");
    expect(first.type).toBeUndefined();
    // Trimmed sentences are joined with a space, not glued ("1956.Although").
    expect(first.paragraphs[0]!.text).toContain("to September 30, 1956. Although it was CBS's answer");
    expect(train.filter((q) => q.paragraphs.length < 10)).toHaveLength(11);
  });

  it("keeps the first n, or a seeded sample in the file's order", () => {
    const text = readFileSync(HOTPOT_DEV, "utf8");
    const all = readHotpotQa(text, "dev.jsonl");
    expect(readHotpotQa(text, "dev.jsonl", { first: 3 }).map((q) => q.id)).toEqual(all.slice(0, 3).map((q) => q.id));
    const a = readHotpotQa(text, "dev.jsonl", { sample: { size: 20, seed: 7 } }).map((q) => q.id);
    const again = readHotpotQa(text, "dev.jsonl", { sample: { size: 20, seed: 7 } }).map((q) => q.id);
    const other = readHotpotQa(text, "dev.jsonl", { sample: { size: 20, seed: 8 } }).map((q) => q.id);
    expect(a).toEqual(again);
    expect(new Set(a).size).toBe(20);
    expect(a).not.toEqual(other);
    const position = new Map(all.map((q, i) => [q.id, i]));
    const places = a.map((id) => position.get(id)!);
    expect(places).toEqual([...places].sort((x, y) => x - y));
    // Not just the head of the file.
    expect(places.at(-1)!).toBeGreaterThan(20);
    expect(readHotpotQa(text, "dev.jsonl", { sample: { size: 1000, seed: 1 } })).toHaveLength(400);
    expect(() => readHotpotQa(text, "dev.jsonl", { first: 2, sample: { size: 2, seed: 1 } })).toThrow(RlxarInputError);
    expect(() => readHotpotQa(text, "dev.jsonl", { first: -1 })).toThrow("selection.first");
  });
});

describe("readHotpotQa on bad lines", () => {
  it("lists every bad line with its number and field path in one error", () => {
    const text = [
      row({}),
      "{not json",
      row({ _id: "q3", context: [["A", "one sentence"]] }),
      row({ _id: "q4", supporting_titles: ["A", "Zed"] }),
      row({ _id: "q5", supporting_titles: undefined, supporting_facts: [["Nowhere", 0]] }),
      row({ _id: "q6", supporting_titles: undefined }),
      "",
      row({}),
    ].join("\n");
    const error = fileError(() => readHotpotQa(text, "bad.jsonl"));
    expect(error.source).toBe("bad.jsonl");
    expect(error.problems).toHaveLength(6);
    expect(error.problems[0]).toMatch(/^line 2: \(root\): /);
    expect(error.problems[1]).toMatch(/^line 3: context\[0\]\[1\]: /);
    expect(error.problems[2]).toBe('line 4: supporting_titles[1]: "Zed" names no paragraph of context');
    expect(error.problems[3]).toBe('line 5: supporting_facts[0][0]: "Nowhere" names no paragraph of context');
    expect(error.problems[4]).toMatch(/^line 6: \(root\): needs supporting_facts .* or supporting_titles/);
    expect(error.problems[5]).toMatch(/^line 8: _id: .*line 1/);
    expect(error.message).toMatch(/^bad\.jsonl: 6 problems:/);
  });

  it("names an unreadable file, and refuses what is not a regular file before reading it", () => {
    expect(() => loadHotpotQa("/no/such/dev.jsonl")).toThrow(InputFileUnreadableError);
    expect(() => loadHotpotQa("/no/such/dev.jsonl")).toThrow("/no/such/dev.jsonl: cannot read (no such file)");
    // `repro arco --eval-data /dev/zero` read it to many GB (issue 29 item 24); a FIFO would hang.
    expect(() => loadHotpotQa("/dev/zero")).toThrow("/dev/zero: is a character device, not a regular file");
    const fifo = join(mkdtempSync(join(tmpdir(), "rubric-hotpot-")), "dev.jsonl");
    execFileSync("mkfifo", [fifo]);
    expect(() => loadHotpotQa(fifo)).toThrow(InputFileNotRegularError);
  });

  it("concatenates a row's sentences when they carry their own spacing, and joins them with a space when none does", () => {
    const paragraphs = (context: unknown) =>
      readHotpotQa(row({ supporting_titles: ["A"], context }), "q.jsonl")[0]!.paragraphs.map((p) => p.text);
    expect(
      paragraphs([
        ["A", ["One.", "Two."]],
        ["B", ["Three.", "Four."]],
      ]),
    ).toEqual(["One. Two.", "Three. Four."]);
    // One spaced sentence anywhere in the row: every paragraph is concatenated, a quotation's end too.
    expect(
      paragraphs([
        ["A", ["One.", " Two."]],
        ["B", ['It is "', 'B" here.']],
      ]),
    ).toEqual(["One. Two.", 'It is "B" here.']);
  });
});
