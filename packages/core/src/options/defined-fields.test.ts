import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { definedFields } from "./defined-fields.js";

describe("definedFields", () => {
  it("keeps a default that a caller passed as undefined, and every value that is defined", () => {
    const defaults = { batches: 12, eps: 3e-4, name: "gspo" };
    expect({ ...defaults, ...definedFields({ batches: undefined, eps: 1e-3 }) }).toEqual({
      batches: 12,
      eps: 1e-3,
      name: "gspo",
    });
    // null, 0, false and "" are values, not "use the default".
    expect(definedFields({ a: null, b: 0, c: false, d: "", e: undefined })).toEqual({ a: null, b: 0, c: false, d: "" });
  });

  it("drops exactly the undefined fields", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.option(fc.jsonValue(), { nil: undefined })), (value) => {
        const kept = definedFields(value);
        expect(Object.keys(kept).sort()).toEqual(
          Object.keys(value)
            .filter((k) => value[k] !== undefined)
            .sort(),
        );
      }),
      { seed: 20261203 },
    );
  });
});
