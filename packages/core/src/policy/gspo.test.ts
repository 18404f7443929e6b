import { describe, expect, it } from "vitest";
import { gspoObjective } from "./gspo.js";
import type { GspoObjectiveInput } from "./gspo.js";
import { expectGradientMatches, randomMatrix, seededRandom, uniform } from "./test-support.js";

const close = (x: number) => expect.closeTo(x, 12);

describe("gspoObjective: hand-computed cases", () => {
  it("averages the masked log-ratio per sequence and clips a positive-advantage sequence above 1 + ε_high", () => {
    // Defaults ε_low = 3e-4, ε_high = 4e-4 → clip range [0.9997, 1.0004].
    // seq 0: log-ratios [1e-4, 1e-4], mean 1e-4, s0 = e^1e-4 ≈ 1.000100005 (inside), A = 1 → term s0
    // seq 1: masked log-ratios [0.1, 0.1] (the third token, 9 − 0, is masked out), s1 = e^0.1 ≈ 1.10517,
    //        A = 2 > 0 and s1 > 1.0004 → clipped: term 1.0004·2 = 2.0008, no gradient
    // loss = −(s0 + 2.0008)/2 ≈ −1.50045; ∂loss/∂θ for seq 0 = −A·s0/(K·|m|) = −s0/4 ≈ −0.250025
    const result = gspoObjective({
      logpNew: [
        [-1, -2],
        [-0.5, -0.7, 9],
      ],
      logpOld: [
        [-1.0001, -2.0001],
        [-0.6, -0.8, 0],
      ],
      mask: [
        [1, 1],
        [1, 1, 0],
      ],
      advantages: [1, 2],
    });
    const s0 = Math.exp(1e-4);
    const s1 = Math.exp(0.1);
    expect(result.ratios).toEqual([expect.closeTo(s0, 11), expect.closeTo(s1, 11)]);
    expect(result.loss).toEqual(expect.closeTo(-(s0 + 2.0008) / 2, 11));
    expect(result.clippedFraction).toBe(0.5);
    expect(result.gradLogpNew).toEqual([
      [expect.closeTo(-s0 / 4, 11), expect.closeTo(-s0 / 4, 11)],
      [0, 0, 0],
    ]);
    expect(result.kl).toBeUndefined();
  });

  it("with negative advantages clips below 1 − ε_low but keeps the pessimistic term above 1 + ε_high", () => {
    // seq 0: log-ratios [−0.1, −0.1], s0 = e^−0.1 ≈ 0.904837 < 0.9997, A = −1 → clipped: term 0.9997·(−1)
    // seq 1: log-ratio 0.1, s1 = e^0.1 ≈ 1.105171 > 1.0004 but A < 0 → min picks s1·A = −1.105171 (unclipped)
    // loss = −(−0.9997 − 1.105171)/2 ≈ 1.0524354590
    // ∂loss/∂θ seq 1 = −A·s1/(K·|m|) = 1.105171/2 ≈ 0.5525854590; seq 0 gets nothing
    const result = gspoObjective({
      logpNew: [[-1.1, -2.1], [-1]],
      logpOld: [[-1, -2], [-1.1]],
      advantages: [-1, -1],
    });
    const s1 = Math.exp(0.1);
    expect(result.loss).toEqual(expect.closeTo((0.9997 + s1) / 2, 11));
    expect(result.clippedFraction).toBe(0.5);
    expect(result.gradLogpNew).toEqual([[0, 0], [expect.closeTo(s1 / 2, 11)]]);
  });

  it("adds β·KL with the k3 estimator and its gradient", () => {
    // logpNew = logpOld → s = 1, A = 0.5 → policy term −0.5, policy gradient −A·s/(K·|m|) = −0.25 per token
    // ref − θ = [ln 2, 0] → k3 = [2 − ln 2 − 1, 0] = [0.306853, 0]; KL = masked mean = 0.1534264
    // loss = −0.5 + 0.1·0.1534264 = −0.48465736
    // KL gradient β·(1 − e^{ref−θ})/(K·|m|) = 0.1·(1 − 2)/2 = −0.05 on token 0, 0 on token 1
    const result = gspoObjective({
      logpNew: [[-1, -2]],
      logpOld: [[-1, -2]],
      logpRef: [[-1 + Math.LN2, -2]],
      advantages: [0.5],
      beta: 0.1,
    });
    const kl = (1 - Math.LN2) / 2;
    expect(result.kl).toEqual(close(kl));
    expect(result.loss).toEqual(close(-0.5 + 0.1 * kl));
    expect(result.gradLogpNew).toEqual([[close(-0.3), close(-0.25)]]);
    expect(result.ratios).toEqual([1]);
  });

  it("reports KL but leaves loss and gradient alone when β = 0 and logpRef is given", () => {
    const base = { logpNew: [[-1, -2]], logpOld: [[-1.0001, -2]], advantages: [1] };
    const without = gspoObjective(base);
    const withRef = gspoObjective({ ...base, logpRef: [[-0.5, -2.5]] });
    expect(withRef.loss).toBe(without.loss);
    expect(withRef.gradLogpNew).toEqual(without.gradLogpNew);
    // k3(ref − θ = 0.5) = e^0.5 − 1.5, k3(−0.5) = e^−0.5 − 0.5; mean over 2 tokens
    expect(withRef.kl).toEqual(close((Math.exp(0.5) - 1.5 + Math.exp(-0.5) - 0.5) / 2));
  });

  it("treats the clip bounds as inclusive, like torch.clamp", () => {
    // ε = 0 and s = 1 exactly: s sits on both bounds, so neither clipped case applies → gradient −A/(K·|m|)
    const result = gspoObjective({ logpNew: [[-1, -1]], logpOld: [[-1, -1]], advantages: [2], epsLow: 0, epsHigh: 0 });
    expect(result.clippedFraction).toBe(0);
    expect(result.gradLogpNew).toEqual([[-1, -1]]);
    expect(result.loss).toBe(-2);
  });

  it("accepts boolean masks exactly like 0/1 masks", () => {
    const input = { logpNew: [[-1, -2, -3]], logpOld: [[-1.1, -2, -2.5]], advantages: [-0.7] };
    const numeric = gspoObjective({ ...input, mask: [[1, 0, 1]] });
    const boolean = gspoObjective({ ...input, mask: [[true, false, true]] });
    expect(boolean).toEqual(numeric);
  });
});

/**
 * Random GSPO inputs whose sequence ratios stay well away from the clip kinks: each sequence's
 * mean log-ratio is either tiny (inside [1 − ε_low, 1 + ε_high]) or at least 0.02 away from 0.
 */
function randomGspoInput(
  seed: number,
  options: { mask: boolean; reference: boolean; beta: number },
): GspoObjectiveInput {
  const random = seededRandom(seed);
  const K = 6;
  const lengths = Array.from({ length: K }, () => 2 + Math.floor(random() * 6));
  const logpOld = randomMatrix(random, lengths, -4, -0.05);
  const mask = lengths.map((n) => {
    const row = Array.from({ length: n }, () => (options.mask && random() < 0.3 ? 0 : 1));
    row[0] = 1;
    return row;
  });
  const advantages = lengths.map(() => (random() < 0.5 ? -1 : 1) * uniform(random, 0.2, 2));
  // k even: inside the clip range; k = 1, 5: pushed out on the advantage's side (clipped);
  // k = 3: pushed out on the other side (unclipped, the pessimistic term is active).
  const logpNew = logpOld.map((row, k) => {
    const inside = k % 2 === 0;
    const sign = Math.sign(advantages[k]!) * (k === 3 ? -1 : 1);
    const target = inside ? uniform(random, -1e-4, 2e-4) : sign * uniform(random, 0.02, 0.3);
    const noise = inside ? 1e-4 : 0.01;
    return row.map((x) => x + target + uniform(random, -noise / 2, noise / 2));
  });
  return {
    logpNew,
    logpOld,
    advantages,
    ...(options.mask ? { mask } : {}),
    ...(options.reference ? { logpRef: randomMatrix(random, lengths, -4, -0.05), beta: options.beta } : {}),
  };
}

describe("gspoObjective: gradient against central finite differences", () => {
  const variants = [
    { name: "no mask, no KL", mask: false, reference: false, beta: 0 },
    { name: "masked, no KL", mask: true, reference: false, beta: 0 },
    { name: "masked, β = 0.2", mask: true, reference: true, beta: 0.2 },
    { name: "no mask, β = 1", mask: false, reference: true, beta: 1 },
  ];
  for (const variant of variants) {
    for (const seed of [1, 2, 3]) {
      it(`${variant.name} (seed ${seed})`, () => {
        const input = randomGspoInput(seed * 7919 + variant.beta, variant);
        const result = gspoObjective(input);
        expect(result.clippedFraction).toBe(2 / 6);
        expectGradientMatches((x) => gspoObjective({ ...input, logpNew: x }).loss, input.logpNew, result.gradLogpNew);
      });
    }
  }

  it("with wide clip ranges (ε = 0.2) as well", () => {
    const random = seededRandom(99);
    const lengths = [3, 5, 4, 2];
    const logpOld = randomMatrix(random, lengths, -3, -0.1);
    const logpNew = logpOld.map((row) => row.map((x) => x + uniform(random, -0.05, 0.05)));
    const input = {
      logpNew,
      logpOld,
      advantages: [0.5, -1.5, 1, -0.3],
      epsLow: 0.2,
      epsHigh: 0.2,
      beta: 0.05,
      logpRef: logpOld,
    };
    const result = gspoObjective(input);
    expect(result.clippedFraction).toBe(0);
    expectGradientMatches((x) => gspoObjective({ ...input, logpNew: x }).loss, logpNew, result.gradLogpNew);
  });
});

describe("gspoObjective: clipping", () => {
  it("zeroes the whole sequence's gradient and counts it in clippedFraction", () => {
    // A > 0 with s = e^0.05 > 1.0004, A < 0 with s = e^−0.05 < 0.9997: both clipped; the third is not.
    const result = gspoObjective({
      logpNew: [
        [-0.95, -1.95],
        [-1.05, -2.05],
        [-1, -2],
      ],
      logpOld: [
        [-1, -2],
        [-1, -2],
        [-1, -2],
      ],
      advantages: [1, -1, 1],
    });
    expect(result.clippedFraction).toBeCloseTo(2 / 3, 15);
    expect(result.gradLogpNew[0]).toEqual([0, 0]);
    expect(result.gradLogpNew[1]).toEqual([0, 0]);
    expect(result.gradLogpNew[2]).toEqual([-1 / 6, -1 / 6]);
    // the clipped terms are constants: (1.0004·1 + 0.9997·(−1) + 1·1)/3
    expect(result.loss).toBeCloseTo(-(1.0004 - 0.9997 + 1) / 3, 14);
  });

  it("keeps the KL gradient of a clipped sequence", () => {
    const result = gspoObjective({
      logpNew: [[-0.9]],
      logpOld: [[-1]],
      logpRef: [[-1]],
      advantages: [1],
      beta: 0.5,
    });
    // clipped (s = e^0.1), so only β·(1 − e^{ref−θ})/(K·|m|) = 0.5·(1 − e^−0.1) remains
    expect(result.clippedFraction).toBe(1);
    expect(result.gradLogpNew).toEqual([[expect.closeTo(0.5 * (1 - Math.exp(-0.1)), 14)]]);
  });
});
