import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonErrorOffset, lineAndColumn } from "./json-syntax.js";

describe("jsonErrorOffset", () => {
  it.each([
    ['{"a": 1,}', 8],
    ["[1, 2", 5],
    ['{"a": tru}', 6],
    ['{\n  "id": "x",\n  "criteria": [,]\n}', 30],
    ['"unterminated', 13],
    ['{"a": 1} extra', 9],
    ['{"a": 01}', 7],
  ])("finds the first bad character of %j", (text, offset) => {
    expect(() => JSON.parse(text)).toThrow();
    expect(jsonErrorOffset(text)).toBe(offset);
  });

  it("agrees with JSON.parse about what is valid", () => {
    fc.assert(
      fc.property(fc.json(), (text) => jsonErrorOffset(text) === -1),
      { seed: 20261202, numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.json(), fc.nat(), fc.constantFrom("{", "]", ",", ":", '"', "x"), (text, at, junk) => {
        const broken = text.slice(0, at % (text.length + 1)) + junk + text.slice(at % (text.length + 1));
        let valid = true;
        try {
          JSON.parse(broken);
        } catch {
          valid = false;
        }
        return (jsonErrorOffset(broken) === -1) === valid;
      }),
      { seed: 7, numRuns: 500 },
    );
  });

  it("converts offsets to 1-based line and column", () => {
    expect(lineAndColumn("ab\ncd", 4)).toEqual({ line: 2, column: 2 });
    expect(lineAndColumn("ab", 0)).toEqual({ line: 1, column: 1 });
  });
});
