import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ArcoInputError } from "../errors.js";
import { DEFAULT_MAX_OBSERVATION_CHARS, renderObservation } from "./observation.js";

describe("renderObservation", () => {
  it("keeps a short text whole and cuts a long one with a count of what was dropped", () => {
    expect(renderObservation("abc", 3)).toBe("abc");
    expect(renderObservation("abcdef", 3)).toBe("abc… [3 more characters]");
    expect(renderObservation("x".repeat(DEFAULT_MAX_OBSERVATION_CHARS))).toHaveLength(DEFAULT_MAX_OBSERVATION_CHARS);
    expect(renderObservation("x".repeat(DEFAULT_MAX_OBSERVATION_CHARS + 1))).toContain("… [1 more characters]");
    expect(renderObservation("x".repeat(5000), Number.POSITIVE_INFINITY)).toHaveLength(5000);
  });

  it("counts code points, never splitting a surrogate pair", () => {
    // Three emoji are six UTF-16 units: a cut at 2 keeps two whole ones.
    expect(renderObservation("😀😁😂", 2)).toBe("😀😁… [1 more characters]");
    expect(renderObservation("😀😁😂", 3)).toBe("😀😁😂");
  });

  it("refuses a negative or fractional limit by name", () => {
    expect(() => renderObservation("abc", -1)).toThrow(ArcoInputError);
    expect(() => renderObservation("abc", 1.5)).toThrow(/maxObservationChars: expected an integer ≥ 0/);
  });

  it("keeps at most maxChars code points of the observation, as its prefix", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 80 }), fc.nat(60), (text, max) => {
        const out = renderObservation(text, max);
        const points = Array.from(text);
        if (points.length <= max) return out === text;
        return (
          out.startsWith(points.slice(0, max).join("")) && out.endsWith(`[${points.length - max} more characters]`)
        );
      }),
      { seed: 14 },
    );
  });
});
