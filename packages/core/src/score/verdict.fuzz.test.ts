import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isRubricError } from "../errors/rubric-error.js";
import { parseFlatRubric } from "../rubric/parse.js";
import { parseVerdictFile, parseWeightFile } from "./verdict.js";
import { scoreRubric } from "./score.js";

/**
 * The verdict and weight files `rubric score --verdicts/--weights` reads, fuzzed: whatever JSON
 * a file holds, reading and scoring it ends in a score that is a number in [0, 1] or null with a
 * reason, or in a named toolkit error — never a crash, never NaN, never a score for what could
 * not be scored.
 */
const rubric = parseFlatRubric({
  id: "r",
  criteria: [
    { id: "a", text: "A", weight: 2, verifier: { kind: "includes", terms: ["a"] } },
    { id: "b", text: "B", weight: 1, polarity: "penalty", verifier: { kind: "includes", terms: ["b"] } },
  ],
});

// Shapes near the real ones, so the fuzz reaches the scoring and not only the schema.
const scoreValue = fc.oneof(fc.double(), fc.constant(null), fc.boolean(), fc.string(), fc.jsonValue());
const near = fc.oneof(
  fc.jsonValue(),
  fc.record({ scores: fc.dictionary(fc.constantFrom("a", "b", "c", "__proto__", "constructor"), scoreValue) }),
  fc.record({
    verdicts: fc.array(
      fc.record(
        {
          criterionId: fc.constantFrom("a", "b", "z"),
          score: scoreValue,
          status: fc.constantFrom("ok", "error", "skipped", "x"),
        },
        { requiredKeys: [] },
      ),
    ),
  }),
);

function outcome(run: () => unknown): "ok" | "named error" {
  try {
    run();
    return "ok";
  } catch (error) {
    if (isRubricError(error)) return "named error";
    throw error;
  }
}

describe("fuzz: verdict and weight files", () => {
  it("read to verdicts or a named error, and score to a number in [0, 1], null, or a named error", () => {
    fc.assert(
      fc.property(
        near,
        fc.constantFrom("fail", "zero", "renormalize") as fc.Arbitrary<"fail" | "zero" | "renormalize">,
        (value, errorsAs) => {
          outcome(() => {
            const verdicts = parseVerdictFile(value, "v.json");
            const score = scoreRubric(rubric, verdicts, { errorsAs });
            if (score.normalized !== null) expect(score.normalized).toBeGreaterThanOrEqual(0);
            if (score.normalized !== null) expect(score.normalized).toBeLessThanOrEqual(1);
            expect(Number.isNaN(score.normalized)).toBe(false);
          });
        },
      ),
      { seed: 20261203, numRuns: 400 },
    );
  });

  it("read weights to numbers or a named error", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.jsonValue(),
          fc.record({ weights: fc.dictionary(fc.string(), fc.oneof(fc.double(), fc.jsonValue())) }),
        ),
        (value) => {
          outcome(() => {
            for (const weight of Object.values(parseWeightFile(value, "w.json")))
              expect(Number.isFinite(weight)).toBe(true);
          });
        },
      ),
      { seed: 20261203, numRuns: 400 },
    );
  });
});
