import { describe, expect, it } from "vitest";
import { readRubricTurn } from "./turns.js";

describe("readRubricTurn", () => {
  it("reads each criterion's rule from its text, leaves out (and counts) what only a judge could check, and says why a turn is not a rubric", () => {
    const turn = JSON.stringify({
      criteria: [
        { text: "Includes at least two tables", weight: 4 },
        { text: 'Addresses "pricing" from the brief', weight: 2 },
        { text: "Sounds confident", weight: 3 },
      ],
    });
    const read = readRubricTurn(turn, "r");
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.judged).toBe(1);
    expect(read.rubric.criteria.map((c) => [c.text, c.weight, c.verifier])).toEqual([
      ["Includes at least two tables", 4, { kind: "markdown", tables: { min: 2 } }],
      ['Addresses "pricing" from the brief', 2, { kind: "includes", terms: ["pricing"] }],
    ]);
    expect(readRubricTurn('{"criteria": [{"text": "Has no tables", "weight": 3}', "r")).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^not JSON/),
    });
    expect(readRubricTurn('{"criteria": [{"text": "Has no tables", "weight": 9}]}', "r")).toMatchObject({
      ok: false,
      reason: expect.stringContaining("criteria[0].weight"),
    });
    expect(readRubricTurn('{"criteria": [{"text": "Sounds confident", "weight": 3}]}', "r")).toEqual({
      ok: false,
      reason: "none of its 1 criteria reads as a rule",
    });
  });
});
