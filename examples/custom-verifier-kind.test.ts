import { describe, expect, it } from "vitest";
import { scoreMemos, typoMessage, wordCountVerifier } from "./custom-verifier-kind.js";

describe("the custom verifier kind example (verifiers README)", () => {
  it("scores a rubric mixing the new kind with a built-in one", async () => {
    const [tight, rambling] = await scoreMemos();
    expect(tight!.score!.normalized).toBe(1);
    expect(rambling!.score!.normalized).toBe(0);
    expect(rambling!.verdicts.find((v) => v.criterionId === "short")).toMatchObject({
      status: "ok",
      score: 0,
      rationale: "13 words; at most 8",
    });
  });

  it("refuses a mistyped kind with the nearest one, and the spec schema refuses a bad spec", () => {
    expect(typoMessage()).toMatch(
      /^criteria\[0\]\.verifier\.kind: unknown verifier kind "word-cuont"; did you mean "word-count"\?/,
    );
    expect(wordCountVerifier.specSchema.safeParse({ kind: "word-count", max: 0 }).success).toBe(false);
  });
});
