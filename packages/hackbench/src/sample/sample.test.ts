import { describe, expect, it } from "vitest";
import { SampleFileError, parseSamples } from "./sample.js";

describe("parseSamples", () => {
  it("reads one sample per line, numeric ids as strings, blank lines ignored", () => {
    expect(
      parseSamples(
        '{"id": 1, "input": "Summarise Q3", "output": "Revenue rose."}\n\n{"id": "b", "output": ""}\n',
        "s.jsonl",
      ),
    ).toEqual([
      { id: "1", input: "Summarise Q3", output: "Revenue rose." },
      { id: "b", output: "" },
    ]);
  });

  it("names the file and line of every bad line", () => {
    const text = [
      '{"id": "a", "output": "x"}',
      '{"id": "b"}',
      "{not json",
      '{"id": "a", "output": "y"}',
      '{"id": "c", "output": "z", "score": 1}',
    ].join("\n");
    let error: unknown;
    try {
      parseSamples(text, "samples.jsonl");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SampleFileError);
    const message = (error as Error).message;
    expect(message).toMatch(/^samples\.jsonl: 4 problem\(s\)/);
    expect(message).toContain("samples.jsonl:line 2: output:");
    expect(message).toContain("samples.jsonl:line 3: (root): invalid JSON");
    expect(message).toContain('samples.jsonl:line 4: id: duplicate id "a" (first on line 1)');
    expect(message).toContain("samples.jsonl:line 5: (root): Unrecognized key");
  });

  it("refuses a file without samples", () => {
    expect(() => parseSamples("\n\n", "empty.jsonl")).toThrow(/empty\.jsonl: no samples/);
  });
});
