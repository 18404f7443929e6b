import { describe, expect, it } from "vitest";
import { PolicyInputError } from "./errors.js";
import { drGrpoObjective, grpoObjective } from "./grpo.js";
import type { DrGrpoObjectiveInput } from "./grpo.js";
import { gspoObjective } from "./gspo.js";
import { klK3 } from "./kl.js";
import { expectGradientMatches, randomMatrix, randomMask, seededRandom, uniform } from "./test-support.js";

const close = (x: number) => expect.closeTo(x, 12);

// Two sequences used by several hand-computed cases below.
//   seq 0: ratios [1, e^0.5 ≈ 1.648721, e^−2 (masked)], A = 1
//          token 0 → 1·1; token 1 → r > 1.2 with A > 0, clipped → 1.2·1; masked sum 2.2, |m| = 2
//   seq 1: ratios [1, 1, 1], A = −0.5 → terms −0.5 each; sum −1.5, |m| = 3
const twoSequences = {
  logpNew: [
    [-1, -0.5, -3],
    [-1, -1, -1],
  ],
  logpOld: [
    [-1, -1, -1],
    [-1, -1, -1],
  ],
  mask: [
    [1, 1, 0],
    [1, 1, 1],
  ],
  advantages: [1, -0.5],
};

describe("grpoObjective: hand-computed cases", () => {
  it("averages token terms per sequence, then over sequences", () => {
    // loss = −(1/2)·(2.2/2 + (−1.5)/3) = −(1/2)·(1.1 − 0.5) = −0.3
    // ∂loss/∂θ = −A·r/(K·|m_k|): seq 0 → [−1/4, 0 (clipped), 0 (masked)]; seq 1 → 0.5/6 = 1/12 each
    // clippedFraction = 1 clipped of 5 unmasked tokens
    const result = grpoObjective(twoSequences);
    expect(result.loss).toEqual(close(-0.3));
    expect(result.clippedFraction).toBe(0.2);
    expect(result.gradLogpNew).toEqual([
      [-0.25, 0, 0],
      [close(1 / 12), close(1 / 12), close(1 / 12)],
    ]);
    expect(result.ratios).toEqual([
      [1, close(Math.exp(0.5)), close(Math.exp(-2))],
      [1, 1, 1],
    ]);
  });

  it("with a negative advantage clips below 1 − ε_low and keeps r·A above 1 + ε_high", () => {
    // r = [e^−0.5 ≈ 0.606531, e^0.5 ≈ 1.648721], A = −1
    // token 0: r < 0.8 → clipped, term 0.8·(−1) = −0.8; token 1: r > 1.2 but A < 0 → r·A = −1.648721
    // loss = −(1/1)·(1/2)·(−0.8 − 1.648721) = 1.2243606; gradient [0, −A·r/(K·|m|) = 1.648721/2]
    const result = grpoObjective({ logpNew: [[-1.5, -0.5]], logpOld: [[-1, -1]], advantages: [-1] });
    expect(result.loss).toEqual(close((0.8 + Math.exp(0.5)) / 2));
    expect(result.gradLogpNew).toEqual([[0, close(Math.exp(0.5) / 2)]]);
    expect(result.clippedFraction).toBe(0.5);
  });

  it("honours custom clip widths", () => {
    // ε_high = 0.7: e^0.5 ≈ 1.6487 < 1.7 is no longer clipped → loss = −(1 + e^0.5)/2
    const result = grpoObjective({ logpNew: [[-1, -0.5]], logpOld: [[-1, -1]], advantages: [1], epsHigh: 0.7 });
    expect(result.clippedFraction).toBe(0);
    expect(result.loss).toEqual(close(-(1 + Math.exp(0.5)) / 2));
  });

  it("adds β·KL, the same KL that klK3 and gspoObjective report", () => {
    const input = {
      ...twoSequences,
      logpRef: [
        [-1.2, -0.4, -7],
        [-0.9, -1.3, -1],
      ],
      beta: 0.3,
    };
    const result = grpoObjective(input);
    const kl = klK3({ logp: input.logpNew, logpRef: input.logpRef, mask: input.mask });
    expect(result.kl).toEqual(close(kl.mean));
    expect(gspoObjective(input).kl).toEqual(close(kl.mean));
    expect(result.loss).toEqual(close(-0.3 + 0.3 * kl.mean));
    // the gradient is the policy gradient above plus β·∂KL/∂θ
    const policy = grpoObjective(twoSequences).gradLogpNew;
    expect(result.gradLogpNew).toEqual(policy.map((row, k) => row.map((g, t) => close(g + 0.3 * kl.gradLogp[k]![t]!))));
  });
});

describe("drGrpoObjective: hand-computed cases", () => {
  it("divides by K·L with L = the longest unmasked length by default", () => {
    // L = max(|m_0| = 2, |m_1| = 3) = 3; loss = −(2.2 − 1.5)/(2·3) = −0.7/6
    // ∂loss/∂θ = −A·r/(K·L): seq 0 → [−1/6, 0, 0]; seq 1 → 0.5/6 = 1/12 each
    const result = drGrpoObjective(twoSequences);
    expect(result.loss).toEqual(close(-0.7 / 6));
    expect(result.gradLogpNew).toEqual([
      [close(-1 / 6), 0, 0],
      [close(1 / 12), close(1 / 12), close(1 / 12)],
    ]);
    expect(result.clippedFraction).toBe(0.2);
  });

  it("counts unmasked tokens, not padded row length, for the default L", () => {
    // rows of 3 tokens with the last one masked: L = 2, not 3
    // loss = −(1·1 + 1·1 + (−1)·1 + (−1)·1)/(2·2) = 0; gradients −A·r/(K·L) = ∓0.25
    const result = drGrpoObjective({
      logpNew: [
        [-1, -1, 0],
        [-2, -2, 0],
      ],
      logpOld: [
        [-1, -1, -5],
        [-2, -2, -5],
      ],
      mask: [
        [1, 1, 0],
        [1, 1, 0],
      ],
      advantages: [1, -1],
    });
    expect(result.loss).toBe(0);
    expect(result.gradLogpNew).toEqual([
      [-0.25, -0.25, 0],
      [0.25, 0.25, 0],
    ]);
  });

  it("uses maxTokens when given", () => {
    // L = 10: loss = −0.7/20 = −0.035; gradients −A·r/20: seq 0 → [−0.05, 0, 0], seq 1 → 0.025 each
    const result = drGrpoObjective({ ...twoSequences, maxTokens: 10 });
    expect(result.loss).toEqual(close(-0.035));
    expect(result.gradLogpNew).toEqual([
      [close(-0.05), 0, 0],
      [close(0.025), close(0.025), close(0.025)],
    ]);
  });

  it("rejects a non-positive maxTokens", () => {
    expect(() => drGrpoObjective({ ...twoSequences, maxTokens: 0 })).toThrow(
      new PolicyInputError("maxTokens", "expected a finite number > 0, got 0"),
    );
  });
});

/** Random token-level inputs whose ratios all stay at least 1e-3 away from 0.8 and 1.2. */
function randomTokenInput(seed: number, options: { mask: boolean; beta: number }): DrGrpoObjectiveInput {
  const random = seededRandom(seed);
  const lengths = [3, 6, 1, 5, 4];
  const logpOld = randomMatrix(random, lengths, -4, -0.05);
  const logpNew = logpOld.map((row) =>
    row.map((x) => {
      for (;;) {
        const delta = uniform(random, -0.5, 0.5);
        const ratio = Math.exp(delta);
        if (Math.abs(ratio - 1.2) > 1e-3 && Math.abs(ratio - 0.8) > 1e-3) return x + delta;
      }
    }),
  );
  const advantages = lengths.map(() => (random() < 0.5 ? -1 : 1) * uniform(random, 0.2, 2));
  return {
    logpNew,
    logpOld,
    advantages,
    ...(options.mask ? { mask: randomMask(random, lengths) } : {}),
    ...(options.beta > 0 ? { beta: options.beta, logpRef: randomMatrix(random, lengths, -4, -0.05) } : {}),
  };
}

describe("token-level objectives: gradient against central finite differences", () => {
  const variants = [
    { name: "no mask, no KL", mask: false, beta: 0 },
    { name: "masked, no KL", mask: true, beta: 0 },
    { name: "masked, β = 0.1", mask: true, beta: 0.1 },
    { name: "no mask, β = 2", mask: false, beta: 2 },
  ];
  for (const variant of variants) {
    for (const seed of [11, 12]) {
      it(`grpoObjective: ${variant.name} (seed ${seed})`, () => {
        const input = randomTokenInput(seed, variant);
        const result = grpoObjective(input);
        expect(result.clippedFraction).toBeGreaterThan(0);
        expectGradientMatches((x) => grpoObjective({ ...input, logpNew: x }).loss, input.logpNew, result.gradLogpNew);
      });
      it(`drGrpoObjective: ${variant.name} (seed ${seed})`, () => {
        const input = randomTokenInput(seed + 100, variant);
        const result = drGrpoObjective(input);
        expect(result.clippedFraction).toBeGreaterThan(0);
        expectGradientMatches((x) => drGrpoObjective({ ...input, logpNew: x }).loss, input.logpNew, result.gradLogpNew);
      });
    }
  }

  it("drGrpoObjective with an explicit maxTokens", () => {
    const input = { ...randomTokenInput(7, { mask: true, beta: 0.5 }), maxTokens: 1024 };
    const result = drGrpoObjective(input);
    expectGradientMatches((x) => drGrpoObjective({ ...input, logpNew: x }).loss, input.logpNew, result.gradLogpNew);
  });
});

describe("token-level objectives: clipping", () => {
  it("zeroes exactly the clipped tokens' gradient and counts them over unmasked tokens", () => {
    // A = 1: r = e^0.3 > 1.2 clipped, r = e^−0.3 < 0.8 not clipped (A > 0), r = e^0.1 inside
    // A = −1: r = e^−0.3 < 0.8 clipped, r = e^0.3 not clipped (A < 0); the masked token is never counted
    const result = grpoObjective({
      logpNew: [
        [-0.7, -1.3, -0.9],
        [-1.3, -0.7, 5],
      ],
      logpOld: [
        [-1, -1, -1],
        [-1, -1, -1],
      ],
      mask: [
        [1, 1, 1],
        [1, 1, 0],
      ],
      advantages: [1, -1],
    });
    expect(result.clippedFraction).toBe(2 / 5);
    const zero = result.gradLogpNew.map((row) => row.map((g) => g === 0));
    expect(zero).toEqual([
      [true, false, false],
      [true, false, true],
    ]);
    // every clipped token contributes the constant bound: seq 0: 1.2 + e^−0.3 + e^0.1; seq 1: −0.8 − e^0.3
    const expected = -((1.2 + Math.exp(-0.3) + Math.exp(0.1)) / 3 + (-0.8 - Math.exp(0.3)) / 2) / 2;
    expect(result.loss).toEqual(expect.closeTo(expected, 12));
  });
});
