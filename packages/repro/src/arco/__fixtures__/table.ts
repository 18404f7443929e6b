import { type ArcoTable, ArcoTableSchema } from "../table.js";

type VsOutcome = { emWins: number; emLosses: number; emP: number; f1P: number | null };

const result = (em: number[], f1: number[], vsOutcome?: VsOutcome) => {
  const meanStd = (xs: number[]) => {
    const m = xs.reduce((a, b) => a + b, 0) / xs.length;
    const sd = Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1));
    return { mean: m, std: sd, n: xs.length };
  };
  return {
    em: meanStd(em),
    arcoEm: meanStd(em),
    f1: meanStd(f1),
    rollouts: 96,
    perSeed: em.map((x, i) => ({ em: x, f1: f1[i]! })),
    ...(vsOutcome === undefined ? {} : { vsOutcome }),
  };
};

/** A two-seed ARCO table with two methods, an ablation, curves and one seed's μ diagnostics (per-bucket scores included). */
export const arcoTable: ArcoTable = ArcoTableSchema.parse({
  kind: "arco-hotpotqa",
  config: { quick: false, trainQuestions: 128, evalQuestions: 400, seeds: [1, 2], mu: { dModel: 32 } },
  methods: {
    outcome: result([0.1, 0.12], [0.15, 0.17]),
    arco: result([0.11, 0.15], [0.16, 0.2], { emWins: 30, emLosses: 14, emP: 0.023, f1P: null }),
  },
  ablations: {
    arcoK5: result([0.09, 0.1], [0.14, 0.15], { emWins: 3, emLosses: 9, emP: 0.146, f1P: 0.41 }),
  },
  curves: {
    outcome: [
      [
        { epoch: 0, em: 0.1, f1: 0.15 },
        { epoch: 1, em: 0.1, f1: 0.15 },
      ],
      [
        { epoch: 0, em: 0.1, f1: 0.15 },
        { epoch: 1, em: 0.12, f1: 0.17 },
      ],
    ],
    arco: [
      [
        { epoch: 0, em: 0.1, f1: 0.15 },
        { epoch: 1, em: 0.11, f1: 0.16 },
      ],
      [
        { epoch: 0, em: 0.1, f1: 0.15 },
        { epoch: 1, em: 0.15, f1: 0.2 },
      ],
    ],
  },
  diagnostics: {
    arco: [
      {
        evidence: { auc: 0.61, positives: 40, negatives: 60 },
        outcomeAuc: 0.55,
        contrast: { pairs: 200, meanDelta: 0.012, preferred: 0.56 },
        buckets: {
          search_1: { count: 90, mean: 0.1, p10: -0.3, median: 0.1, p90: 0.5 },
          terminal: { count: 60, mean: 0.4, p10: 0.1, median: 0.45, p90: 0.8 },
        },
        unparsed: 3,
        steps: 300,
      },
      null,
    ],
  },
  warmup: [{ seed: 1 }, { seed: 2 }],
  timing: {
    totalMs: 1_000_000,
    trainingMs: 800_000,
    rollouts: 4000,
    rolloutsPerSecond: 5,
    shares: { muTraining: 0.6, muInference: 0.4 },
  },
  paper: {},
});
