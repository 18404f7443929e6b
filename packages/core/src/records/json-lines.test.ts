import { describe, expect, it } from "vitest";
import { z } from "zod";
import { readJsonLines } from "./json-lines.js";

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
});
