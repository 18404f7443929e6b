import { describe, expect, it } from "vitest";
import { extractJson } from "./json-reply.js";

describe("extractJson", () => {
  it("parses plain JSON, including scalars", () => {
    expect(extractJson(' {"score": 3} ')).toEqual({ score: 3 });
    expect(extractJson("[1, 2]")).toEqual([1, 2]);
    expect(extractJson("42")).toBe(42);
  });

  it("takes the first fenced block that parses, with or without a language tag", () => {
    expect(extractJson('Sure!\n```json\n{"score": 2}\n```\nDone.')).toEqual({ score: 2 });
    expect(extractJson('```\n{"a": [1]}\n```')).toEqual({ a: [1] });
    expect(extractJson('```JSON {"a": 1}```')).toEqual({ a: 1 });
    expect(extractJson('```python\nprint(1)\n```\n```json\n{"b": 2}\n```')).toEqual({ b: 2 });
  });

  it("finds a balanced object amid commentary, ignoring brackets inside strings", () => {
    expect(extractJson('Verdict: {"reason": "uses } and ] freely", "score": 1} -- final.')).toEqual({
      reason: "uses } and ] freely",
      score: 1,
    });
    expect(extractJson('{"score": 0}\n\nLet me know {if} you need more.')).toEqual({ score: 0 });
    expect(extractJson('The list [see below] is: ["a", "b"]')).toEqual(["a", "b"]);
    expect(extractJson('{"q": "say \\"hi\\" {"}')).toEqual({ q: 'say "hi" {' });
  });

  it("returns undefined when there is no JSON, or it is truncated", () => {
    expect(extractJson("I cannot rate this.")).toBeUndefined();
    expect(extractJson('{"score": 3, "reason": "cut of')).toBeUndefined();
    expect(extractJson("")).toBeUndefined();
    expect(extractJson("{not: json}")).toBeUndefined();
  });
});
