import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { editDistance, nearestName } from "./nearest-name.js";

const COMMANDS = ["validate", "score", "schema", "elicit", "repro", "hackbench", "help"];

describe("nearestName", () => {
  it("names the command a typo or a unique prefix meant", () => {
    expect(nearestName("scor", COMMANDS)).toBe("score");
    expect(nearestName("valdiate", COMMANDS)).toBe("validate");
    expect(nearestName("hack", COMMANDS)).toBe("hackbench");
    expect(nearestName("elicti", COMMANDS)).toBe("elicit");
  });

  it("suggests nothing for a word that is far from every name", () => {
    expect(nearestName("deploy", COMMANDS)).toBeUndefined();
    expect(nearestName("x", COMMANDS)).toBeUndefined();
    expect(nearestName("", COMMANDS)).toBeUndefined();
  });

  it("widens the tolerance for short names only when asked, and folds case only when asked", () => {
    expect(nearestName("rgx", ["regex", "length"])).toBeUndefined();
    expect(nearestName("rgx", ["regex", "length"], { minTolerance: 2 })).toBe("regex");
    expect(nearestName("REGEX", ["regex"])).toBeUndefined();
    expect(nearestName("REGEX", ["regex"], { ignoreCase: true })).toBe("regex");
  });

  it("returns a known name, never something else", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 12 }),
        fc.array(fc.string({ maxLength: 12 }), { maxLength: 8 }),
        (s, known) => {
          const meant = nearestName(s, known);
          return meant === undefined || known.includes(meant);
        },
      ),
    );
  });
});

describe("editDistance", () => {
  it("counts inserts, deletes and substitutions", () => {
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("", "abc")).toBe(3);
    expect(editDistance("same", "same")).toBe(0);
  });

  it("is a metric on strings: symmetric, zero only on equal strings, and within the triangle", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 10 }),
        fc.string({ maxLength: 10 }),
        fc.string({ maxLength: 10 }),
        (a, b, c) => {
          const ab = editDistance(a, b);
          return ab === editDistance(b, a) && (ab === 0) === (a === b) && editDistance(a, c) <= ab + editDistance(b, c);
        },
      ),
    );
  });
});
