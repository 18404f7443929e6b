/**
 * Writes packages/core/fixtures/policy-gradient-vectors.json: small deterministic cases of every
 * policy-gradient function in @rubric/core, so another implementation (the torch sidecar) can
 * check that it gets the same numbers. src/policy/vectors.test.ts checks that the TypeScript code
 * still reproduces every case, so the file cannot drift silently.
 *
 *   cd /work/main && npx tsx packages/core/scripts/write-policy-gradient-vectors.ts
 *
 * Inputs are rounded to 6 decimals so the file reads well; objectives' inputs are chosen with every
 * ratio at least ~1e-4 (in log space) away from a clip bound, so float32/float64 implementations
 * agree on which terms are clipped. Every objective's gradient is checked against central finite
 * differences before it is written.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import {
  arcoStepBucket,
  bucketBaseline,
  drGrpoObjective,
  groupAdvantages,
  grpoObjective,
  gspoObjective,
  klK3,
  prioritizedReplay,
  projectToOutcome,
  decompositionLoss,
  rewardToGo,
  valueLoss,
  stepAdvantages,
} from "../src/policy/index.js";
import type { ClippedObjectiveInput, DrGrpoObjectiveInput } from "../src/policy/index.js";
import { expectGradientMatches, seededRandom, uniform } from "../src/policy/test-support.js";

const OUTPUT = fileURLToPath(new URL("../fixtures/policy-gradient-vectors.json", import.meta.url));

const DESCRIPTION = [
  "Reference vectors for @rubric/core's policy-gradient math (src/policy). Each case calls `fn` with `input` and expects `expected`; compare numbers to 1e-12 (absolute, or relative for large values).",
  "`input` names the function's arguments; an options object's fields sit beside the positional arguments (groupAdvantages: rewards, normalize, eps, ddof; rewardToGo: steps, gamma; bucketBaseline: values, buckets; arcoStepBucket: t, numSteps; stepAdvantages: episodes, scale, gamma; projectToOutcome: scores, outcome; prioritizedReplay: episodes (each with a `return`), percentile). Options that are absent take their defaults.",
  "Token arrays are [sequence][token]; sequences may differ in length; mask entries are 0/1 or booleans (default all ones).",
  "gspoObjective: s_k = exp(masked mean_t(logpNew − logpOld)); loss = −(1/K) Σ_k min(s_k·A_k, clamp(s_k, 1−epsLow, 1+epsHigh)·A_k) + beta·KL; defaults epsLow 3e-4, epsHigh 4e-4, beta 0. ratios = s_k. clippedFraction = fraction of sequences with (A>0 and s>1+epsHigh) or (A<0 and s<1−epsLow); those get zero policy gradient (bounds inclusive, like torch.clamp).",
  "grpoObjective: r_kt = exp(logpNew − logpOld); loss = −(1/K) Σ_k (1/|m_k|) Σ_t m_kt·min(r_kt·A_k, clamp(r_kt)·A_k) + beta·KL; defaults epsLow = epsHigh = 0.2. ratios = r_kt at every token, masked or not. clippedFraction = clipped unmasked tokens / unmasked tokens.",
  "drGrpoObjective: as grpoObjective with 1/(K·L) instead of 1/(K·|m_k|); L = maxTokens, default max_k |m_k| (the largest number of unmasked tokens).",
  "KL (all objectives and klK3): k3 = exp(ref−θ) − (ref−θ) − 1 per token (θ = logpNew or logp); KL = (1/K) Σ_k masked mean_t k3. `kl` (unscaled by beta) is present whenever logpRef is given; loss adds beta·kl. gradLogpNew / gradLogp are ∂loss/∂θ (∂mean/∂θ for klK3), zero at masked tokens. klK3.perToken reports k3 at every token, masked or not.",
  "groupAdvantages: (r − mean)/(std + eps) with std over n − ddof, or r − mean for normalize 'none'; a group of identical rewards gives zeros. rewardToGo: G_t = Σ_{k≥t} gamma^(k−t)·s_k. bucketBaseline: mean of the entry's bucket, batch mean for singleton buckets. arcoStepBucket: last step 'terminal', else search_1, search_2, then search_3 for every later step. stepAdvantages: scale·(G_t − bucketBaseline over all steps of the batch, bucketed by arcoStepBucket).",
  "projectToOutcome: shift λ with Σ clamp(x + λ, −1, 1) = K·outcome (to ~1e-12), projected = clamp(x + λ); `shift` may differ between correct implementations when the solution is not unique (all entries clamped), `projected` may not. prioritizedReplay: the episodes whose return ≤ numpy.percentile(returns, percentile) (linear), in order.",
  "decompositionLoss (input stepScores [trajectory][step] = s_t, outcomes): weights w = N/(2·n_pos) for R > 0.5, N/(2·n_neg) otherwise; loss = (1/N) Σ_τ w_τ (Σ_t s_τ,t − R_τ)²; gradients[τ] = ∂loss/∂s_τ,t = (2/N) w_τ (Σ_t s_τ,t − R_τ); meanAbsoluteGap = (1/N) Σ_τ |Σ_t s_τ,t − R_τ|.",
  "valueLoss (input values [trajectory][step] = v_t, outcomes): the same weights; loss = (1/N) Σ_τ w_τ (1/T_τ) Σ_t (v_τ,t − R_τ)²; gradients[τ][t] = (2/N) w_τ (v_τ,t − R_τ)/T_τ; meanAbsoluteGap = mean |v_τ,t − R_τ| over all steps.",
].join("\n");

interface VectorCase {
  readonly name: string;
  readonly fn: string;
  readonly input: Record<string, unknown>;
  readonly expected: unknown;
}

const cases: VectorCase[] = [];
function addCase(name: string, fn: string, input: Record<string, unknown>, expected: unknown): void {
  // Round-trip through JSON now so the file holds exactly what was computed (undefined keys dropped).
  cases.push({ name, fn, input: JSON.parse(JSON.stringify(input)), expected: JSON.parse(JSON.stringify(expected)) });
}

const round = (x: number, digits = 6) => Number(x.toFixed(digits));
const random = seededRandom(20250101);
const pick = (lo: number, hi: number, digits = 6) => round(uniform(random, lo, hi), digits);
const sign = () => (random() < 0.5 ? -1 : 1);

// ---------------------------------------------------------------- sequence-level objective (GSPO)

type SequenceState = "inside" | "clipped" | "pessimistic";

/**
 * A GSPO batch where sequence k's ratio is inside the clip range, clipped, or outside it on the
 * side where the unclipped (pessimistic) term stays active, as `states[k]` asks.
 */
function gspoInput(
  lengths: readonly number[],
  states: readonly SequenceState[],
  options: {
    mask?: "numbers" | "booleans";
    beta?: number;
    reference?: boolean;
    epsLow?: number;
    epsHigh?: number;
  } = {},
): ClippedObjectiveInput {
  const epsLow = options.epsLow ?? 3e-4;
  const epsHigh = options.epsHigh ?? 4e-4;
  const advantages = lengths.map(() => sign() * pick(0.2, 2, 4));
  const logpOld = lengths.map((n) => Array.from({ length: n }, () => pick(-4, -0.05)));
  const masks = lengths.map((n) => {
    const row = Array.from({ length: n }, () => (options.mask !== undefined && random() < 0.3 ? 0 : 1));
    row[0] = 1;
    return row;
  });
  const logpNew = logpOld.map((row, k) => {
    const state = states[k]!;
    const advantage = advantages[k]!;
    // the masked mean log-ratio each state needs, kept ≥ ~1e-4 (log space) away from the bounds
    const lowLog = Math.log(1 - epsLow);
    const highLog = Math.log(1 + epsHigh);
    const inside = (lowLog + highLog) / 2;
    const width = (highLog - lowLog) / 2;
    const outward = Math.max(0.02, 2 * width);
    const target =
      state === "inside"
        ? inside + pick(-0.3, 0.3) * width
        : (state === "clipped" ? Math.sign(advantage) : -Math.sign(advantage)) * (outward + pick(0, 0.2));
    const noise = state === "inside" ? 0.2 * width : 0.01;
    // padding tokens (masked out) get arbitrary values, as a padded batch would
    return row.map((x, t) => round(x + (masks[k]![t] === 1 ? target + pick(-noise, noise, 8) : pick(-1, 1))));
  });
  return {
    logpNew,
    logpOld,
    advantages,
    ...(options.mask === "numbers" ? { mask: masks } : {}),
    ...(options.mask === "booleans" ? { mask: masks.map((row) => row.map((m) => m === 1)) } : {}),
    ...(options.reference ? { logpRef: lengths.map((n) => Array.from({ length: n }, () => pick(-4, -0.05))) } : {}),
    beta: options.beta,
    epsLow: options.epsLow,
    epsHigh: options.epsHigh,
  };
}

function addGspoCase(name: string, input: ClippedObjectiveInput): void {
  const result = gspoObjective(input);
  expectGradientMatches((x) => gspoObjective({ ...input, logpNew: x }).loss, input.logpNew, result.gradLogpNew);
  addCase(name, "gspoObjective", { ...input }, result);
}

addGspoCase("gspo: hand case, one inside, one clipped, masked padding", {
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
addGspoCase("gspo: hand case, negative advantages, clipped below and pessimistic above", {
  logpNew: [[-1.1, -2.1], [-1]],
  logpOld: [[-1, -2], [-1.1]],
  advantages: [-1, -1],
});
addGspoCase("gspo: hand case, KL with beta 0.1", {
  logpNew: [[-1, -2]],
  logpOld: [[-1, -2]],
  logpRef: [[-0.306853, -2]],
  advantages: [0.5],
  beta: 0.1,
});
addGspoCase("gspo: all inside, no mask", gspoInput([3, 4, 2], ["inside", "inside", "inside"]));
addGspoCase("gspo: mixed states, no mask", gspoInput([4, 3, 5, 2], ["inside", "clipped", "pessimistic", "clipped"]));
addGspoCase(
  "gspo: mixed states, numeric mask",
  gspoInput([5, 4, 6], ["clipped", "inside", "pessimistic"], { mask: "numbers" }),
);
addGspoCase(
  "gspo: mixed states, boolean mask",
  gspoInput([3, 5, 4], ["pessimistic", "clipped", "inside"], { mask: "booleans" }),
);
addGspoCase("gspo: KL reported with beta 0", gspoInput([4, 3], ["inside", "clipped"], { reference: true, beta: 0 }));
addGspoCase(
  "gspo: KL on (beta 0.04), masked",
  gspoInput([5, 3, 4], ["clipped", "inside", "pessimistic"], { mask: "numbers", reference: true, beta: 0.04 }),
);
addGspoCase(
  "gspo: KL on (beta 1), all clipped",
  gspoInput([2, 3], ["clipped", "clipped"], { reference: true, beta: 1 }),
);
addGspoCase(
  "gspo: wide clip range (0.2)",
  gspoInput([4, 4, 3], ["inside", "clipped", "pessimistic"], { epsLow: 0.2, epsHigh: 0.2 }),
);
addGspoCase(
  "gspo: asymmetric clip range, masked, KL on",
  gspoInput([6, 2, 5, 3], ["pessimistic", "inside", "clipped", "inside"], {
    epsLow: 0.1,
    epsHigh: 0.3,
    mask: "numbers",
    reference: true,
    beta: 0.2,
  }),
);

// ---------------------------------------------------------------- token-level objectives (GRPO, Dr.GRPO)

/** A token-level batch whose ratios stay ≥ 2e-3 away from 1 − epsLow and 1 + epsHigh. */
function tokenInput(
  lengths: readonly number[],
  options: {
    mask?: "numbers" | "booleans";
    beta?: number;
    reference?: boolean;
    epsLow?: number;
    epsHigh?: number;
    spread?: number;
  } = {},
): ClippedObjectiveInput {
  const low = 1 - (options.epsLow ?? 0.2);
  const high = 1 + (options.epsHigh ?? 0.2);
  const spread = options.spread ?? 0.5;
  const advantages = lengths.map(() => sign() * pick(0.2, 2, 4));
  const logpOld = lengths.map((n) => Array.from({ length: n }, () => pick(-4, -0.05)));
  const logpNew = logpOld.map((row) =>
    row.map((x) => {
      for (;;) {
        const y = round(x + uniform(random, -spread, spread));
        const ratio = Math.exp(y - x);
        if (Math.abs(ratio - low) > 2e-3 && Math.abs(ratio - high) > 2e-3) return y;
      }
    }),
  );
  const masks = lengths.map((n) => {
    const row = Array.from({ length: n }, () => (random() < 0.3 ? 0 : 1));
    row[n - 1] = 1;
    return row;
  });
  return {
    logpNew,
    logpOld,
    advantages,
    ...(options.mask === "numbers" ? { mask: masks } : {}),
    ...(options.mask === "booleans" ? { mask: masks.map((row) => row.map((m) => m === 1)) } : {}),
    ...(options.reference ? { logpRef: lengths.map((n) => Array.from({ length: n }, () => pick(-4, -0.05))) } : {}),
    beta: options.beta,
    epsLow: options.epsLow,
    epsHigh: options.epsHigh,
  };
}

function addTokenCase(fn: "grpoObjective" | "drGrpoObjective", name: string, input: DrGrpoObjectiveInput): void {
  const objective = fn === "grpoObjective" ? grpoObjective : drGrpoObjective;
  const result = objective(input);
  expectGradientMatches((x) => objective({ ...input, logpNew: x }).loss, input.logpNew, result.gradLogpNew);
  addCase(name, fn, { ...input }, result);
}

const handTokenBatch = {
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
for (const fn of ["grpoObjective", "drGrpoObjective"] as const) {
  const label = fn === "grpoObjective" ? "grpo" : "drgrpo";
  addTokenCase(fn, `${label}: hand case, one clipped token, one masked`, handTokenBatch);
  addTokenCase(fn, `${label}: hand case, negative advantage`, {
    logpNew: [[-1.5, -0.5]],
    logpOld: [[-1, -1]],
    advantages: [-1],
  });
  addTokenCase(fn, `${label}: no mask`, tokenInput([3, 4, 2]));
  addTokenCase(fn, `${label}: numeric mask`, tokenInput([4, 5, 3], { mask: "numbers" }));
  addTokenCase(fn, `${label}: boolean mask`, tokenInput([5, 2, 4], { mask: "booleans" }));
  addTokenCase(fn, `${label}: small ratios, nothing clipped`, tokenInput([3, 3], { spread: 0.1 }));
  addTokenCase(fn, `${label}: KL reported with beta 0`, tokenInput([3, 4], { reference: true, beta: 0 }));
  addTokenCase(
    fn,
    `${label}: KL on (beta 0.04), masked`,
    tokenInput([4, 3, 5], { mask: "numbers", reference: true, beta: 0.04 }),
  );
  addTokenCase(fn, `${label}: KL on (beta 0.5)`, tokenInput([2, 6], { reference: true, beta: 0.5 }));
  addTokenCase(
    fn,
    `${label}: asymmetric clip (0.1, 0.28)`,
    tokenInput([4, 4, 4], { epsLow: 0.1, epsHigh: 0.28, mask: "numbers" }),
  );
  addTokenCase(
    fn,
    `${label}: GSPO-sized clip (3e-4, 4e-4)`,
    tokenInput([3, 5], { epsLow: 3e-4, epsHigh: 4e-4, spread: 0.2 }),
  );
  if (fn === "drGrpoObjective") {
    addTokenCase(fn, "drgrpo: explicit maxTokens 16, masked, KL on", {
      ...tokenInput([5, 3, 4], { mask: "numbers", reference: true, beta: 0.1 }),
      maxTokens: 16,
    });
  } else {
    addTokenCase(fn, "grpo: single token sequences", tokenInput([1, 1, 1, 1], { reference: true, beta: 0.2 }));
  }
}

// ---------------------------------------------------------------- klK3

function addKlCase(
  name: string,
  input: { logp: number[][]; logpRef: number[][]; mask?: (number | boolean)[][] },
): void {
  const result = klK3(input);
  expectGradientMatches((x) => klK3({ ...input, logp: x }).mean, input.logp, result.gradLogp);
  addCase(name, "klK3", input, result);
}

const randomRows = (lengths: readonly number[], lo = -4, hi = -0.05) =>
  lengths.map((n) => Array.from({ length: n }, () => pick(lo, hi)));
addKlCase("kl: hand case, masked third token", {
  logp: [[-2, -1, -4], [-0.3]],
  logpRef: [[-1.306853, -1.693147, -1], [-0.3]],
  mask: [[1, 1, 0], [1]],
});
addKlCase("kl: identical policies", { logp: [[-1, -2], [-3]], logpRef: [[-1, -2], [-3]] });
for (const [i, lengths] of [[3], [2, 4], [5, 1, 3], [4, 4, 4, 4]].entries()) {
  addKlCase(`kl: random ${lengths.join("+")} tokens`, { logp: randomRows(lengths), logpRef: randomRows(lengths) });
  const mask = lengths.map((n) => {
    const row = Array.from({ length: n }, () => (random() < 0.4 ? 0 : 1));
    row[0] = 1;
    return row;
  });
  addKlCase(`kl: random ${lengths.join("+")} tokens, ${i % 2 === 0 ? "numeric" : "boolean"} mask`, {
    logp: randomRows(lengths),
    logpRef: randomRows(lengths),
    mask: i % 2 === 0 ? mask : mask.map((row) => row.map((m) => m === 1)),
  });
}

// ---------------------------------------------------------------- advantages and baselines

const advantageCases: { name: string; rewards: number[]; normalize?: "std" | "none"; eps?: number; ddof?: number }[] = [
  { name: "std, defaults", rewards: [1, 2, 3, 6] },
  { name: "std, ddof 1, eps 0.5", rewards: [1, 2, 3, 6], ddof: 1, eps: 0.5 },
  { name: "none (Dr.GRPO)", rewards: [0, 1, 1, 0.5], normalize: "none" },
  { name: "std, binary rewards", rewards: [1, 0, 0, 1, 1, 0, 0, 0] },
  { name: "std, eps 0", rewards: [0.25, -0.5, 0.75], eps: 0 },
  { name: "identical rewards give zeros", rewards: [0.1, 0.1, 0.1] },
  { name: "single reward", rewards: [7] },
  { name: "random group of 8", rewards: Array.from({ length: 8 }, () => pick(-1, 1, 4)) },
];
for (const { name, rewards, ...options } of advantageCases) {
  addCase(`groupAdvantages: ${name}`, "groupAdvantages", { rewards, ...options }, groupAdvantages(rewards, options));
}

for (const [steps, gamma] of [
  [[1, 2, 3], undefined],
  [[1, -2, 4], 0.5],
  [[1, -2, 4], 0],
  [[0, 0, 0, 1], 0.9],
  [[], undefined],
  [Array.from({ length: 6 }, () => pick(-1, 1, 4)), 0.95],
] as const) {
  addCase(
    `rewardToGo: ${steps.length} steps, gamma ${gamma ?? "default"}`,
    "rewardToGo",
    { steps, gamma },
    rewardToGo([...steps], gamma),
  );
}

for (const [name, values, buckets] of [
  ["mixed buckets", [1, 3, 10, 2, 4], ["a", "a", "b", "a", "c"]],
  ["all singletons", [1, 2, 6], ["x", "y", "z"]],
  ["one bucket", [0.5, -0.5, 2], ["t", "t", "t"]],
  ["ARCO positions", [2, 1.5, 1, 0, -1, 0], ["search_1", "search_2", "terminal", "search_1", "terminal", "terminal"]],
  ["single entry", [3], ["terminal"]],
] as const) {
  addCase(`bucketBaseline: ${name}`, "bucketBaseline", { values, buckets }, bucketBaseline([...values], [...buckets]));
}

for (const [t, numSteps] of [
  [0, 1],
  [0, 2],
  [1, 2],
  [2, 4],
  [3, 4],
  [4, 6],
] as const) {
  addCase(`arcoStepBucket: t ${t} of ${numSteps}`, "arcoStepBucket", { t, numSteps }, arcoStepBucket(t, numSteps));
}

for (const [name, episodes, options] of [
  ["defaults", [{ stepScores: [0.5, 0.5, 1] }, { stepScores: [1, -1] }, { stepScores: [0] }], {}],
  ["gamma 0.5, scale 1", [{ stepScores: [1, 2] }, { stepScores: [4, 0] }], { gamma: 0.5, scale: 1 }],
  ["single episode", [{ stepScores: [0.2, -0.1, 0.3, 0.6] }], {}],
  [
    "long episodes share search_3",
    [{ stepScores: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6] }, { stepScores: [-0.2, 0.1, 0.4, 1] }, { stepScores: [0.3, 0.7] }],
    { gamma: 0.9 },
  ],
  [
    "random batch of 4",
    Array.from({ length: 4 }, (_, i) => ({ stepScores: Array.from({ length: i + 1 }, () => pick(-1, 1, 4)) })),
    { scale: 0.5 },
  ],
] as const) {
  addCase(`stepAdvantages: ${name}`, "stepAdvantages", { episodes, ...options }, stepAdvantages(episodes, options));
}

// ---------------------------------------------------------------- projection and replay

for (const [name, scores, outcome] of [
  [
    "uniform shift, nothing clamps",
    [
      [0.5, -0.5],
      [0, 0],
    ],
    1,
  ],
  ["one entry clamps", [[0.9], [0.2], [-0.4]], 2],
  [
    "failure projects to sum 0",
    [
      [0.6, 0.2, 0.1],
      [0.3, 0, 0],
    ],
    0,
  ],
  [
    "negative outcome",
    [
      [0.1, -0.3, 0.8],
      [0.4, 0.9, -0.2],
    ],
    -1,
  ],
  [
    "upper extreme",
    [
      [0.3, -1],
      [0, 0.2],
    ],
    2,
  ],
  [
    "lower extreme",
    [
      [0.3, -1],
      [0, 0.2],
    ],
    -2,
  ],
  [
    "random 4 steps × 3 criteria, success",
    Array.from({ length: 4 }, () => [pick(-1, 1, 4), pick(-1, 1, 4), pick(-1, 1, 4)]),
    1,
  ],
  [
    "random 5 steps × 3 criteria, failure",
    Array.from({ length: 5 }, () => [pick(-1, 1, 4), pick(-1, 1, 4), pick(-1, 1, 4)]),
    0,
  ],
] as const) {
  const rows = scores.map((row) => [...row]);
  addCase(`projectToOutcome: ${name}`, "projectToOutcome", { scores: rows, outcome }, projectToOutcome(rows, outcome));
}

for (const [name, returns, percentile] of [
  ["25th of 5", [0.9, 0.1, 0.5, 0.3, 0.7], 25],
  ["30th of 5 (interpolated)", [0.9, 0.1, 0.5, 0.3, 0.7], 30],
  ["50th of 5", [0.9, 0.1, 0.5, 0.3, 0.7], 50],
  ["100th keeps all", [0.9, 0.1, 0.5, 0.3, 0.7], 100],
  ["37.5th of 8", [3, 1, 4, 1, 5, 9, 2, 6], 37.5],
  ["45th of 8", [3, 1, 4, 1, 5, 9, 2, 6], 45],
  ["ties at the threshold", [2, 1, 1, 3], 10],
  ["random 10, 20th", Array.from({ length: 10 }, () => pick(0, 1, 4)), 20],
] as const) {
  const episodes = returns.map((r, id) => ({ id, return: r }));
  addCase(
    `prioritizedReplay: ${name}`,
    "prioritizedReplay",
    { episodes, percentile },
    prioritizedReplay(episodes, percentile),
  );
}

// ARCO's decomposition loss and our value loss read the same batches: [trajectory][step] scores
// and an outcome each (s_t for the first, v_t for the second).
for (const [name, rows, outcomes] of [
  ["hand case, both classes", [[0.5, 0.5], [0.2]], [1, 0]],
  ["one success among four", [[0.3, 0.3, 0.1], [0.2, -0.1], [0], [-0.4, 0.1, 0.2]], [1, 0, 0, 0]],
  ["failures only", [[0.1], [-0.2, 0.05]], [0, 0]],
  ["R = 0.5 is a failure", [[0.4], [0.6]], [0.5, 1]],
  [
    "random 6",
    Array.from({ length: 6 }, (_, i) => Array.from({ length: 1 + (i % 4) }, () => pick(-1, 1, 4))),
    Array.from({ length: 6 }, (_, i) => (i % 3 === 0 ? 1 : 0)),
  ],
] as const) {
  const scores = rows.map((row) => [...row]);
  const given = [...outcomes];
  addCase(
    `decompositionLoss: ${name}`,
    "decompositionLoss",
    { stepScores: scores, outcomes: given },
    decompositionLoss(scores, given),
  );
  addCase(`valueLoss: ${name}`, "valueLoss", { values: scores, outcomes: given }, valueLoss(scores, given));
}

mkdirSync(dirname(OUTPUT), { recursive: true });
writeFileSync(OUTPUT, `${JSON.stringify({ version: 1, description: DESCRIPTION, cases }, null, 2)}\n`);
console.log(`wrote ${cases.length} cases to ${OUTPUT}`);
