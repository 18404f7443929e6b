import { describe, expect, it } from "vitest";
import { PolicyInputError } from "./errors.js";
import { drGrpoObjective, grpoObjective } from "./grpo.js";
import { gspoObjective } from "./gspo.js";
import { klK3 } from "./kl.js";
import type { ClippedObjectiveInput } from "./objective.js";

// Validation is shared by every [sequence][token] function; it is exercised here through them.
const valid: ClippedObjectiveInput = {
  logpNew: [
    [-1, -2],
    [-1, -2, -3],
  ],
  logpOld: [
    [-1, -2],
    [-1, -2, -3],
  ],
  advantages: [1, -1],
};

function expectRejected(input: unknown, path: string, problem: string): void {
  const error = new PolicyInputError(path, problem);
  for (const objective of [gspoObjective, grpoObjective, drGrpoObjective]) {
    expect(() => objective(input as ClippedObjectiveInput)).toThrow(error);
  }
}

describe("validation of [sequence][token] inputs", () => {
  it("accepts sequences of different lengths", () => {
    expect(() => gspoObjective(valid)).not.toThrow();
  });

  it("names a ragged companion by sequence and token count", () => {
    expectRejected(
      {
        ...valid,
        logpOld: [
          [-1, -2],
          [-1, -2],
        ],
      },
      "logpOld[1]",
      "expected 3 tokens (as logpNew[1]), got 2",
    );
    expectRejected({ ...valid, logpOld: [[-1, -2]] }, "logpOld", "expected 2 sequences (as logpNew), got 1");
    expectRejected(
      { ...valid, logpRef: [[-1, -2], [-1]], beta: 0.1 },
      "logpRef[1]",
      "expected 3 tokens (as logpNew[1]), got 1",
    );
  });

  it("names a mask whose shape does not match logpNew", () => {
    expectRejected(
      {
        ...valid,
        mask: [
          [1, 1],
          [1, 1],
        ],
      },
      "mask[1]",
      "expected 3 tokens (as logpNew[1]), got 2",
    );
    expect(() => klK3({ logp: [[-1, -2]], logpRef: [[-1, -2]], mask: [[1]] })).toThrow(
      new PolicyInputError("mask[0]", "expected 2 tokens (as logp[0]), got 1"),
    );
  });

  it("rejects a sequence whose mask is all zero, and mask values other than 0/1/booleans", () => {
    expectRejected(
      {
        ...valid,
        mask: [
          [1, 0],
          [false, false, false],
        ],
      },
      "mask[1]",
      "every token is masked out; a sequence needs at least one unmasked token",
    );
    expectRejected(
      {
        ...valid,
        mask: [
          [1, 0.5],
          [1, 1, 1],
        ],
      },
      "mask[0][1]",
      "expected 0, 1, true or false, got 0.5",
    );
  });

  it("rejects NaN and infinities wherever they are, masked or not", () => {
    expectRejected(
      {
        ...valid,
        logpNew: [
          [-1, -2],
          [-1, Number.NaN, -3],
        ],
      },
      "logpNew[1][1]",
      "expected a finite number, got NaN",
    );
    expectRejected(
      {
        ...valid,
        logpOld: [
          [-1, -Infinity],
          [-1, -2, -3],
        ],
        mask: [
          [1, 0],
          [1, 1, 1],
        ],
      },
      "logpOld[0][1]",
      "expected a finite number, got -Infinity",
    );
    expectRejected({ ...valid, advantages: [1, Number.NaN] }, "advantages[1]", "expected a finite number, got NaN");
  });

  it("rejects empty batches and empty sequences", () => {
    expectRejected(
      { ...valid, logpNew: [], logpOld: [], advantages: [] },
      "logpNew",
      "expected at least one sequence, got an empty array",
    );
    expectRejected({ ...valid, logpNew: [[-1, -2], []] }, "logpNew[1]", "expected at least one token, got none");
  });

  it("rejects a wrong number of advantages, negative clip widths and β", () => {
    expectRejected(
      { ...valid, advantages: [1] },
      "advantages",
      "expected 2 values (one per sequence of logpNew), got 1",
    );
    expectRejected({ ...valid, epsLow: -0.1 }, "epsLow", "expected a finite number ≥ 0, got -0.1");
    expectRejected({ ...valid, epsHigh: Number.NaN }, "epsHigh", "expected a finite number ≥ 0, got NaN");
    expectRejected({ ...valid, beta: -1 }, "beta", "expected a finite number ≥ 0, got -1");
  });

  it("requires logpRef when β > 0", () => {
    expectRejected({ ...valid, beta: 0.04 }, "logpRef", "required when beta > 0 (beta is 0.04), got nothing");
  });

  it("throws errors that are PolicyInputError instances with the path and problem attached", () => {
    try {
      gspoObjective({ ...valid, epsLow: -1 });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(PolicyInputError);
      expect(error).toBeInstanceOf(Error);
      expect((error as PolicyInputError).name).toBe("PolicyInputError");
      expect((error as PolicyInputError).path).toBe("epsLow");
      expect((error as PolicyInputError).message).toBe("epsLow: expected a finite number ≥ 0, got -1");
    }
  });
});
