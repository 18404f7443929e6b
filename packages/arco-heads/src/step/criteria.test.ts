import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CriteriaUnparsedError } from "../errors.js";
import { CriteriaTargetSchema, criteriaTarget, parseCriteria } from "./criteria.js";

describe("parseCriteria", () => {
  it("reads exactly K criteria unflagged, trimmed, also from a fenced or commented reply", () => {
    expect(parseCriteria('{"criteria": [" a ", "b", "c"]}')).toEqual({ criteria: ["a", "b", "c"] });
    expect(parseCriteria('Sure:\n```json\n{"criteria": ["a", "b", "c"]}\n```\nDone.')).toEqual({
      criteria: ["a", "b", "c"],
    });
  });

  it("pads to K with empty strings and truncates to the first K, saying which", () => {
    expect(parseCriteria('{"criteria": ["a"]}', 3)).toEqual({ criteria: ["a", "", ""], adjusted: "padded" });
    expect(parseCriteria('{"criteria": ["a", "b", "c", "d"]}', 3)).toEqual({
      criteria: ["a", "b", "c"],
      adjusted: "truncated",
    });
    // Non-string entries are not criteria: dropped, then padded.
    expect(parseCriteria('{"criteria": ["a", 7, null]}', 3)).toEqual({ criteria: ["a", "", ""], adjusted: "padded" });
  });

  it("is a CriteriaUnparsedError when no criteria object parses", () => {
    expect(() => parseCriteria("Targets the second hop.")).toThrow(CriteriaUnparsedError);
    expect(() => parseCriteria('{"criteria": ["a", "b"')).toThrow(/no JSON value/);
    expect(() => parseCriteria('{"rubric": ["a"]}')).toThrow(/expected an object \{"criteria"/);
    expect(() => parseCriteria("nothing")).toThrow(expect.objectContaining({ code: "arco.criteria-unparsed" }));
  });

  it("always gives K criteria, flagged exactly when the count was not K", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 12 }), { maxLength: 8 }),
        fc.integer({ min: 1, max: 6 }),
        (list, k) => {
          const parsed = parseCriteria(criteriaTarget(list), k);
          const expected = list.length === k ? undefined : list.length > k ? "truncated" : "padded";
          const kept = list.slice(0, k).map((c) => c.trim());
          return (
            parsed.criteria.length === k &&
            parsed.adjusted === expected &&
            kept.every((c, i) => parsed.criteria[i] === c) &&
            parsed.criteria.slice(kept.length).every((c) => c === "")
          );
        },
      ),
      { seed: 14 },
    );
  });
});

describe("criteriaTarget", () => {
  it("writes compact JSON matching the target schema", () => {
    const text = criteriaTarget(["Targets the second hop", 'Quotes "Lyon"']);
    expect(text).toBe('{"criteria":["Targets the second hop","Quotes \\"Lyon\\""]}');
    expect(CriteriaTargetSchema.parse(JSON.parse(text)).criteria).toHaveLength(2);
  });
});
