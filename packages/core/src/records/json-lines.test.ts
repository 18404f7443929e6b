import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { loadRubrics } from "../rubric/parse.js";
import { jsonLinesReader, readJsonLines, toJsonLines, withoutBom } from "./json-lines.js";

const Schema = z.strictObject({ id: z.union([z.string(), z.number().transform(String)]), output: z.string() });

describe("readJsonLines", () => {
  it("returns good records with their lines and every fault with source, line and path", () => {
    const text = [
      '{"id":"a","output":"x"}',
      "",
      "{not json",
      '{"id":"b"}',
      '{"id":2,"output":"y","extra":1}',
      '{"id":"a","output":"z"}',
      '{"id":3,"output":"w"}',
    ].join("\n");
    const { records, issues } = readJsonLines(text, Schema, { source: "s.jsonl", idOf: (r) => r.id });
    expect(records).toEqual([
      { line: 1, value: { id: "a", output: "x" } },
      { line: 7, value: { id: "3", output: "w" } },
    ]);
    expect(issues.map((i) => [i.source, i.line, i.path])).toEqual([
      ["s.jsonl", 3, "(root)"],
      ["s.jsonl", 4, "output"],
      ["s.jsonl", 5, "(root)"],
      ["s.jsonl", 6, "id"],
    ]);
    expect(issues[0]!.message).toMatch(/^invalid JSON: /);
    expect(issues[3]!.message).toBe('duplicate id "a" (first on line 1)');
  });

  it("without idOf, repeated ids are the caller's business", () => {
    const { records, issues } = readJsonLines('{"id":"a","output":"x"}\n{"id":"a","output":"y"}\n', Schema);
    expect(issues).toEqual([]);
    expect(records).toHaveLength(2);
  });

  it("writes record paths with indices in brackets, names the id's path and the bad JSON's column", () => {
    const Nested = z.strictObject({ task_id: z.string(), tags: z.array(z.string()) });
    const text = '{"task_id":"t","tags":["a",2]}\n{"task_id":"u","tags":[]}\n{"task_id":"u","tags":[]}\n{"task_id":,}';
    const { issues } = readJsonLines(text, Nested, { idOf: (r) => r.task_id, idPath: "task_id" });
    expect(issues.map((i) => [i.line, i.path])).toEqual([
      [1, "tags[1]"],
      [3, "task_id"],
      [4, "(root)"],
    ]);
    expect(issues[1]!.message).toBe('duplicate id "u" (first on line 2)');
    expect(issues[2]!.message).toMatch(/^invalid JSON: .*\(column 12\)$/);
  });
});

describe("toJsonLines", () => {
  it("ends every line, the last one too, and writes nothing for no records", () => {
    expect(toJsonLines([{ id: "a" }, { id: "b" }])).toBe('{"id":"a"}\n{"id":"b"}\n');
    expect(toJsonLines([])).toBe("");
  });

  it("is read back by readJsonLines, record for record, whatever the strings hold", () => {
    const Record = z.strictObject({ id: z.string(), n: z.number(), tags: z.array(z.string()) });
    const record = fc.record({ id: fc.string(), n: fc.integer(), tags: fc.array(fc.string({ unit: "binary" })) });
    fc.assert(
      fc.property(fc.array(record, { maxLength: 20 }), (records) => {
        const { records: read, issues } = readJsonLines(toJsonLines(records), Record);
        expect(issues).toEqual([]);
        expect(read.map((r) => r.value)).toEqual(records);
        expect(read.map((r) => r.line)).toEqual(records.map((_, i) => i + 1));
      }),
    );
  });
});

describe("byte-order marks and line-at-a-time reading", () => {
  const Schema = z.strictObject({ id: z.string() });

  it("reads a file that starts with a UTF-8 BOM as if it had none", () => {
    expect(withoutBom("\uFEFF{}")).toBe("{}");
    expect(withoutBom("{}\uFEFF")).toBe("{}\uFEFF");
    expect(readJsonLines('\uFEFF{"id":"a"}\n', Schema).records).toEqual([{ line: 1, value: { id: "a" } }]);
    const rubric = {
      id: "r",
      criteria: [{ id: "c", text: "t", weight: 1, verifier: { kind: "includes", terms: ["x"] } }],
    };
    expect(loadRubrics(`\uFEFF${JSON.stringify(rubric)}`)[0]!.kind).toBe("flat");
    expect(loadRubrics(`\uFEFF${JSON.stringify(rubric)}\n`, { format: "jsonl" })).toHaveLength(1);
  });

  it("gives, fed line by line, exactly what reading the whole text gives", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.constant(""),
            fc.constant("{"),
            fc.string().map((id) => JSON.stringify({ id })),
          ),
        ),
        (lines) => {
          const reader = jsonLinesReader(Schema, { idOf: (r) => r.id, source: "f" });
          for (const line of lines) reader.push(line);
          expect(reader.result()).toEqual(readJsonLines(lines.join("\n"), Schema, { idOf: (r) => r.id, source: "f" }));
        },
      ),
    );
  });
});
