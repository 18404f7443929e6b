import { z } from "zod";
import { MU_POOLINGS, type MuPooling, PROMPT_LAYOUTS } from "@rubric/arco-heads";
import { SidecarRecordSchema, sidecarRecordLines } from "../sidecar/record.js";
import { MU_EXAMPLE_KINDS, type MuExampleKind } from "../arco/warmup.js";

/**
 * The methods of the gym's comparison, keyed as `repro arco` keys them; the controls last. So far:
 * outcome-only RL and two controls, the teacher's hindsight scores (checked criteria, projected so
 * that Σ_t s_t = R) and the true step advantages; the learned critics (ARCO's μ and its
 * ablations) come next.
 */
export const ARCO_GYM_METHODS = [
  "outcome",
  "rar",
  "frozenMu",
  "arco",
  "arcoOutcome",
  "prm",
  "fixedCriteria",
  "noPrefix",
  "arcoK1",
  "arcoK5",
  "muValue",
  "featureMu",
  "featureArco",
  "featureNoPrefix",
  "valueDifference",
  "muAdvantage",
  "teacherHindsight",
  "trueAdvantage",
] as const;
export type ArcoGymMethod = (typeof ARCO_GYM_METHODS)[number];

export const ARCO_GYM_METHOD_LABELS: Readonly<Record<ArcoGymMethod, string>> = {
  outcome: "Outcome reward only (GRPO groups, Search-R1 style)",
  rar: "RaR: the warm-up μ's Σ_t s_t as the trajectory reward (GRPO groups)",
  frozenMu: "Frozen μ: the warm-up μ's step scores as the dense signal",
  arco: "ARCO: μ's step scores as the dense signal, μ co-evolving (decomposition loss + KL)",
  arcoOutcome: "ARCO + outcome (ours): as ARCO, plus R − mean R at the terminal step",
  prm: "PRM (w/o rubric): μ's score head alone (K = 1, no criteria), warmed up on the mean of the teacher's scores, co-evolving",
  fixedCriteria:
    "Fixed criteria (w/o adaptive): one list of the grammar's criteria for every step, warmed up on their checkers' verdicts, co-evolving",
  noPrefix: "Without the prefix: μ sees the question and the action alone, co-evolving",
  arcoK1: "ARCO with K = 1 criterion per step",
  arcoK5: "ARCO with K = 5 criteria per step",
  muValue:
    "μ as a value (ours): ARCO's μ (text, the same backbone and criteria), its score head regressed on the outcome from each prefix and action, co-evolving; a step's credit is the change of μ's value it brought",
  featureMu:
    "Feature μ, frozen (ours, a labelled variant: the policy's step features, fitted by the decomposition loss on the teacher's outcomes alone)",
  featureArco:
    "Feature μ co-evolving (ours, a labelled variant: as feature μ, plus ARCO's decomposition step per batch)",
  featureNoPrefix:
    "Feature μ without the prefix, co-evolving (ours, a labelled variant: only what the action's text shows, its kind and a whole name or one word)",
  valueDifference:
    "State value's change, co-evolving (ours, a labelled variant: V(h_t) over the chain's state fitted to the same episodes' outcomes; s_t = V(h_t+1) − V(h_t), R − V at the end)",
  muAdvantage:
    "Control (ours, diagnostic): ARCO's μ (text, the same backbone and criteria) supervised on each step's true advantage under the teacher — step labels ARCO does not have — frozen; can the text μ read credit at all when told it?",
  teacherHindsight: "Control: the teacher's hindsight scores (checked criteria, Σ s_t = R) as the dense signal",
  trueAdvantage: "Control: true step advantages (Monte Carlo) as the dense signal",
};

/** The critics whose credit is measured against the true advantage (every dense method but the truth itself). */
export const ARCO_GYM_CRITICS: readonly ArcoGymMethod[] = ARCO_GYM_METHODS.filter(
  // outcome and RaR train on R alone; the true advantage is what the others are measured against.
  (m) => m !== "outcome" && m !== "rar" && m !== "trueAdvantage",
);

/**
 * The methods whose critic reads hand-made features (`featureCritic`, no sidecar), and which:
 * the policy's (what the prefix shows), the action's alone, or the state's (a value V).
 */
export const ARCO_GYM_FEATURE_SETS = {
  featureMu: "prefix",
  featureArco: "prefix",
  featureNoPrefix: "action",
  valueDifference: "state",
} as const satisfies Partial<Record<ArcoGymMethod, string>>;
export type ArcoGymFeatureSet = (typeof ARCO_GYM_FEATURE_SETS)[keyof typeof ARCO_GYM_FEATURE_SETS];

/** The feature methods, {@link ARCO_GYM_FEATURE_SETS}' keys. */
export const ARCO_GYM_FEATURE_METHODS = Object.keys(ARCO_GYM_FEATURE_SETS) as readonly ArcoGymMethod[];

/** The feature set a method's critic reads, or undefined for a method without a feature critic. */
export const featureSetOf = (method: ArcoGymMethod): ArcoGymFeatureSet | undefined =>
  (ARCO_GYM_FEATURE_SETS as Partial<Record<ArcoGymMethod, ArcoGymFeatureSet>>)[method];

/** The methods whose critic is μ (they need the sidecar). */
export const ARCO_GYM_MU_METHODS: readonly ArcoGymMethod[] = [
  "rar",
  "frozenMu",
  "arco",
  "arcoOutcome",
  "prm",
  "fixedCriteria",
  "noPrefix",
  "arcoK1",
  "arcoK5",
  "muValue",
  "muAdvantage",
];

/** The μ methods whose μ is a value (ours: warmed up on outcomes, trained by the value loss, credit its change). */
export const ARCO_GYM_VALUE_MU_METHODS: readonly ArcoGymMethod[] = ["muValue"];

/**
 * What a warm-up μ's score head is fitted to: ARCO's decomposed teacher scores, each step's
 * outcome (a value, ours), or each step's true advantage under the teacher (a diagnostic control,
 * ours: step labels that ARCO's setting does not have).
 */
export const GYM_MU_OBJECTIVES = ["decomposition", "value", "advantage"] as const;
export type GymMuObjective = (typeof GYM_MU_OBJECTIVES)[number];

/** The warm-up a μ method's critic starts from: a value's (ours), the true advantage's (ours, a control) or ARCO's decomposition's. */
export const muObjectiveOf = (method: ArcoGymMethod): GymMuObjective =>
  ARCO_GYM_VALUE_MU_METHODS.includes(method) ? "value" : method === "muAdvantage" ? "advantage" : "decomposition";

/** The μ methods whose μ trains on every batch (the others serve the warm-up μ frozen). */
export const ARCO_GYM_CO_EVOLVING_MU_METHODS: readonly ArcoGymMethod[] = ARCO_GYM_MU_METHODS.filter(
  // The supervised control stays frozen: co-evolving, it would be trained away from its labels.
  (m) => m !== "rar" && m !== "frozenMu" && m !== "muAdvantage",
);

/** Which warm-up a μ method starts from: its objective, its examples' kind, and K. */
export interface GymMuWarmupKind {
  readonly objective: GymMuObjective;
  readonly variant: MuExampleKind;
  readonly k: number;
}

/** The warm-up μ of a μ method, at the run's K (`k`) unless the method fixes its own. */
export function muWarmupOf(method: ArcoGymMethod, k: number): GymMuWarmupKind {
  const objective = muObjectiveOf(method);
  if (method === "prm") return { objective, variant: "prm", k: 1 };
  if (method === "fixedCriteria") return { objective, variant: "fixed", k };
  if (method === "noPrefix") return { objective, variant: "noPrefix", k };
  if (method === "arcoK1") return { objective, variant: "generated", k: 1 };
  if (method === "arcoK5") return { objective, variant: "generated", k: 5 };
  return { objective, variant: "generated", k };
}

/** One key per distinct warm-up: methods that share it share the warm-up μ. */
export const muWarmupKey = (kind: GymMuWarmupKind) => `${kind.objective}-${kind.variant}-k${kind.k}`;

/**
 * What a run compares unless told otherwise: outcome RL and the two controls. μ's warm-up takes
 * minutes per hop count on 2 cores (the sidecar trains it), and the feature critics are a
 * labelled variant, so both are asked for by name.
 */
export const ARCO_GYM_DEFAULT_METHODS: readonly ArcoGymMethod[] = ARCO_GYM_METHODS.filter(
  (m) => !ARCO_GYM_MU_METHODS.includes(m) && !ARCO_GYM_FEATURE_METHODS.includes(m),
);

const MeanStdSchema = z.strictObject({ mean: z.number(), std: z.number(), n: z.int() });

/** How closely a warm-up μ's s_t follows its targets on some episodes. */
const MuFitSchema = z.strictObject({ spearman: z.number().nullable(), steps: z.int() });
type MuFitRecord = z.infer<typeof MuFitSchema>;

/** A paired comparison with outcome-only RL on the same tasks and seeds. */
const VersusSchema = z.strictObject({
  /** Mean success minus outcome's, over seeds. */
  gap: z.number(),
  /** Two-sided paired t-test on per-seed success (a seed is the unit of replication); null when every seed ties. */
  p: z.number().nullable(),
  /** Exact McNemar test over (seed, task) pairs: treats the tasks of one seed as independent, which they are not (one policy answers them all). */
  wins: z.int(),
  losses: z.int(),
  mcnemarP: z.number(),
});

/** Success against training rollouts, greedy on the evaluation tasks (for the curves only: nothing is selected on them). */
const CurvePointSchema = z.strictObject({ rollouts: z.int(), success: z.number() });

const MethodResultSchema = z.strictObject({
  /** Greedy success on the evaluation tasks after the budget, all hop counts (mean ± std over seeds). */
  success: MeanStdSchema,
  byHops: z.record(z.string(), MeanStdSchema),
  /** Success averaged over the learning curve (0 … budget): how fast, not only how far. */
  curveMean: MeanStdSchema,
  vsOutcome: VersusSchema.optional(),
  /** (success − outcome's) / (the true-advantage control's − outcome's): the share of perfect credit's gain it recovers; null when the control gains nothing. */
  shareOfControlGain: z.number().nullable().optional(),
});

/** A critic's credit on held-out probe steps: Spearman with the true advantage, evidence AUC, criterion validity. */
const CreditMeasuresSchema = z.strictObject({
  spearman: z.number().nullable(),
  evidenceAuc: z.number().nullable(),
  criterionValidity: z.number().nullable(),
  steps: z.int(),
});

/** A critic's credit on the warm-up's probe, beside the reference, and at the end of RL. */
export const CreditSummarySchema = CreditMeasuresSchema.extend({
  /**
   * The reference on the same probes (absent in older tables): the true advantage estimated again
   * with fresh draws and scored as a critic — what perfect credit measures here, the estimate's own
   * noise included; a critic's Spearman and evidence AUC are read against it, not against 1.
   */
  reference: z.strictObject({ spearman: z.number().nullable(), evidenceAuc: z.number().nullable() }).optional(),
  /**
   * The same measures at the end of RL (absent in older tables): the critic as it ended, on π's
   * own rollouts of the probe's tasks as RL left it, against the true advantage under that π —
   * where a critic's errors can have steered π, which the warm-up's probe cannot see.
   */
  atEnd: CreditMeasuresSchema.optional(),
});

/** One μ warm-up of a run (per H and kind), as `table.json` records it. */
export const MuWarmupRecordSchema = z.strictObject({
  hops: z.int(),
  /** What the warm-up fitted: the teacher's decomposed scores (ARCO's, absent in older tables), each step's outcome (a value, ours), or each step's true advantage under the teacher (a control, ours). */
  objective: z.enum(GYM_MU_OBJECTIVES).optional(),
  /** Its examples: ARCO's, fixed criteria, without the prefix, or a scalar PRM (absent in older tables: ARCO's). */
  variant: z.enum(MU_EXAMPLE_KINDS).optional(),
  /** Its K (absent in older tables: the run's). */
  k: z.int().optional(),
  /** What its score head reads (`MU_POOLINGS`; absent in older tables: ARCO's mean over prompt + criteria). */
  pooling: z.enum(MU_POOLINGS).optional(),
  /** Where the action stood in its step prompt (`PROMPT_LAYOUTS`; absent in older tables: ARCO's order). */
  promptLayout: z.enum(PROMPT_LAYOUTS).optional(),
  episodes: z.int(),
  examples: z.int(),
  embedded: z.int(),
  sftLoss: z.array(z.number()),
  /** The score head's MSE per epoch (the loss is CE + 10 × this) and the targets' variance, what their mean alone scores (absent in older tables). */
  sftScores: z.strictObject({ mse: z.array(z.number()), targetVariance: z.number() }).optional(),
  /** Its language-model pretraining before the warm-up (ours; absent: none): the tasks whose text it read, tokens per epoch, and each epoch's CE per token. */
  pretrain: z.strictObject({ tasks: z.int(), tokens: z.int(), ce: z.array(z.number()) }).optional(),
  /** The pretrained llama its backbone started from (ours; absent: the small μ from scratch): the GGUF file's name and μ's parameters. */
  backbone: z.strictObject({ file: z.string(), parameters: z.int() }).optional(),
  /**
   * Its fit to its own targets, frozen as exported (absent in older tables): Spearman of s_t
   * with the mean of the step's targets, on the warm-up episodes and on fresh episodes of the
   * same teacher labelled the same way (absent with `mu.fitTasks` 0).
   */
  fit: z.strictObject({ train: MuFitSchema, heldOut: MuFitSchema.optional() }).optional(),
  ms: z.number(),
});
export type MuWarmupRecord = z.infer<typeof MuWarmupRecordSchema>;

export const ArcoGymTableSchema = z.strictObject({
  kind: z.literal("arco-gym"),
  /** Always true: every world, task and teacher of this run is generated. */
  simulation: z.literal(true),
  config: z.record(z.string(), z.unknown()),
  /** Per H: outcome-only RL against the true-advantage control at the one budget. */
  valueOfDenseCredit: z.array(
    z.strictObject({
      hops: z.int(),
      outcome: MeanStdSchema,
      trueAdvantage: MeanStdSchema,
      gap: z.number(),
      p: z.number().nullable(),
      mcnemarP: z.number(),
      /** Success averaged over the learning curve, each method. */
      curveMean: z.strictObject({ outcome: z.number(), trueAdvantage: z.number() }),
    }),
  ),
  methods: z.partialRecord(z.enum(ARCO_GYM_METHODS), MethodResultSchema),
  /**
   * Each critic's credit on held-out rollouts (the warm-up policy at RL's temperature on the first
   * evaluation tasks, per H and seed), mean over them: Spearman of s_t with the true advantage
   * under that policy, the AUC of s_t for "this search retrieved a gold paragraph", and criterion
   * validity (the share of its criteria whose score's sign agrees with the grammar's checker).
   */
  credit: z.record(z.string(), CreditSummarySchema),
  /** The first seed's probe per critic and H: each step's true advantage and the critic's s_t (the scatter plot). */
  creditPoints: z.record(
    z.string(),
    z.record(z.string(), z.array(z.strictObject({ advantage: z.number(), s: z.number() }))),
  ),
  /** [method][hops] → per seed, the learning curve. */
  curves: z.record(z.string(), z.record(z.string(), z.array(z.array(CurvePointSchema)))),
  /** The warm-up per H and seed: its greedy success on the evaluation tasks and its sampled success (temperature of RL) on its training tasks. */
  warmup: z.array(
    z.strictObject({ hops: z.int(), seed: z.int(), success: z.number(), sampledTrainSuccess: z.number() }),
  ),
  /**
   * μ's warm-up per H (runs with a learned critic only): the teacher's episodes and μ-SFT
   * examples it saw, the tokens that started from a word vector, and each epoch's loss.
   */
  muWarmup: z.array(MuWarmupRecordSchema).optional(),
  /**
   * The feature critics' warm-up per H and feature set (runs with a feature method): the teacher's
   * episodes it was fitted on (μ's warm-up stream) and how many succeeded, the decomposition loss
   * and mean |Σ_t s_t − R| on them after the fit, and its weights by feature (and bias).
   */
  featureWarmup: z
    .array(
      z.strictObject({
        hops: z.int(),
        /** The policy's features (what the prefix shows: featureMu, featureArco), the action's alone (featureNoPrefix), or the state's (valueDifference). */
        features: z.enum(["prefix", "action", "state"] satisfies ArcoGymFeatureSet[]),
        episodes: z.int(),
        successes: z.int(),
        loss: z.number(),
        meanAbsoluteGap: z.number(),
        weights: z.record(z.string(), z.number()),
        bias: z.number(),
      }),
    )
    .optional(),
  timing: z.strictObject({ totalMs: z.number(), byMethodMs: z.record(z.string(), z.number()) }),
  /**
   * The sidecar that trained μ (runs with a learned critic; absent in older tables): its torch and
   * its intra-op threads. torch's sums depend on the thread count, so μ's weights, and what π
   * learns from them, are reproduced to the bit only on as many threads (`--threads`).
   */
  sidecar: SidecarRecordSchema.optional(),
});
export type ArcoGymTable = z.infer<typeof ArcoGymTableSchema>;

const pct = (x: number) => (100 * x).toFixed(1);
/** How table.md names what a μ's score head reads. */
const POOLING_TEXT: Record<MuPooling, string> = {
  "prompt+criteria": "mean of prompt + criteria (ARCO's)",
  criteria: "mean of the criteria (ours)",
  last: "the last position (ours)",
};
const FEATURE_SETS = {
  prefix: "the policy's (the prefix shows)",
  action: "the action's text alone",
  state: "the chain's state (a value V)",
} as const;
const cell = (m: { mean: number; std: number; n: number }) =>
  m.n > 1 ? `${pct(m.mean)} ± ${pct(m.std)}` : pct(m.mean);
const pValue = (p: number | null) =>
  p === null ? "n/a (every seed ties)" : p < 1e-4 ? p.toExponential(1) : p.toPrecision(2);

/** The table as Markdown: the value of dense credit per H first, then every method. */
/** A warm-up μ's score MSE as table.md shows it: "first → last (the targets' variance)", or "—" in older tables. */
function scoresText(scores: { mse: readonly number[]; targetVariance: number } | undefined): string {
  if (scores === undefined || scores.mse.length === 0) return "—";
  return `${scores.mse[0]!.toFixed(4)} → ${scores.mse.at(-1)!.toFixed(4)} (${scores.targetVariance.toFixed(4)})`;
}

/** A warm-up μ's fit as table.md shows it: "ρ (n steps) / ρ (n steps)", or "—" before it was measured. */
function fitText(fit: { train: MuFitRecord; heldOut?: MuFitRecord } | undefined): string {
  if (fit === undefined) return "—";
  const one = (f: MuFitRecord) => `${f.spearman === null ? "n/a" : f.spearman.toFixed(3)} (${f.steps} steps)`;
  return fit.heldOut === undefined ? one(fit.train) : `${one(fit.train)} / ${one(fit.heldOut)}`;
}

export function arcoGymMarkdown(table: ArcoGymTable): string {
  const config = table.config as Partial<{
    quick: boolean;
    seeds: unknown[];
    trainTasks: number;
    evalTasks: number;
    rl: { budget?: number; rolloutsPerBatch?: number };
  }>;
  const seeds = Array.isArray(config.seeds) ? config.seeds.length : 0;
  const budget = config.rl?.budget;
  const lines = [
    `# The ARCO gym, a simulation (${config.quick === true ? "quick run" : "full run"}): ${seeds} seed${seeds === 1 ? "" : "s"}, ${config.trainTasks} training and ${config.evalTasks} evaluation tasks per hop count, ${budget} training rollouts per method`,
    "",
    "Every world, entity, question and teacher here is generated: nothing refers to the real world. Success in %, greedy on the evaluation tasks after the budget (mean ± std over seeds), each method from the same warm-up. p: two-sided paired t-test over seeds; McNemar p treats the tasks of a seed as independent and is shown for reference only.",
    "",
    "## The value of dense credit",
    "",
    "| H | outcome-only RL | true-advantage control | gap (points) | p | McNemar p | mean over the learning curve: outcome / control |",
    "|---|---|---|---|---|---|---|",
    ...table.valueOfDenseCredit.map(
      (row) =>
        `| ${row.hops} | ${cell(row.outcome)} | ${cell(row.trueAdvantage)} | ${(100 * row.gap).toFixed(1)} | ${pValue(row.p)} | ${pValue(row.mcnemarP)} | ${pct(row.curveMean.outcome)} / ${pct(row.curveMean.trueAdvantage)} |`,
    ),
    "",
    "## Methods",
    "",
    "| method | success | mean over the curve | vs outcome: gap, p (wins / losses) | share of the control's gain |",
    "|---|---|---|---|---|",
  ];
  for (const method of ARCO_GYM_METHODS) {
    const result = table.methods[method];
    if (result === undefined) continue;
    const v = result.vsOutcome;
    const versus =
      v === undefined ? "—" : `${(100 * v.gap).toFixed(1)} points, p ${pValue(v.p)} (${v.wins} / ${v.losses})`;
    const share =
      result.shareOfControlGain === undefined || result.shareOfControlGain === null
        ? "—"
        : `${(100 * result.shareOfControlGain).toFixed(0)} %`;
    lines.push(
      `| ${ARCO_GYM_METHOD_LABELS[method]} | ${cell(result.success)} | ${cell(result.curveMean)} | ${versus} | ${share} |`,
    );
  }
  const credit = Object.entries(table.credit);
  if (credit.length > 0) {
    const value = (x: number | null) => (x === null ? "n/a" : x.toFixed(3));
    lines.push(
      "",
      "## Credit on held-out rollouts",
      "",
      "The warm-up policy's rollouts on the first evaluation tasks, per H and seed (mean over them). Spearman: s_t against the true advantage; evidence AUC: s_t for a search that retrieved a gold paragraph; criterion validity: the share of criteria whose score's sign agrees with the grammar's checker. In brackets, the reference: the true advantage estimated again with fresh draws, scored the same way — what perfect credit measures on these probes (the Monte-Carlo estimate's noise and the near-zero advantage of most steps keep it below 1). At the end of RL: the critic as it ended, on the trained π's rollouts of the same tasks, against the true advantage under that π — where a critic's errors can have steered π.",
      "",
      `| critic | Spearman with the true advantage (reference) | evidence AUC (reference) | criterion validity | steps | at the end of RL, on π's own rollouts: Spearman / evidence AUC (steps) |`,
      "|---|---|---|---|---|---|",
      ...credit.map(([name, c]) => {
        const against = (x: number | null, reference: number | null | undefined) =>
          reference === undefined ? value(x) : `${value(x)} (${value(reference)})`;
        const end =
          c.atEnd === undefined ? "—" : `${value(c.atEnd.spearman)} / ${value(c.atEnd.evidenceAuc)} (${c.atEnd.steps})`;
        return `| ${ARCO_GYM_METHOD_LABELS[name as ArcoGymMethod] ?? name} | ${against(c.spearman, c.reference?.spearman)} | ${against(c.evidenceAuc, c.reference?.evidenceAuc)} | ${value(c.criterionValidity)} | ${c.steps} | ${end} |`;
      }),
    );
  }
  lines.push(
    "",
    "## Warm-up",
    "",
    "| H | seed | greedy success (evaluation tasks) | sampled success at RL's temperature (training tasks) |",
    "|---|---|---|---|",
    ...table.warmup.map((w) => `| ${w.hops} | ${w.seed} | ${pct(w.success)} | ${pct(w.sampledTrainSuccess)} |`),
    "",
    ...(table.muWarmup === undefined || table.muWarmup.length === 0
      ? []
      : [
          "μ's warm-up (one per H and objective, shared by every seed): the noisy teacher's annotated episodes, ARCO's μ-SFT on the decomposed scores, or (a value, ours) on each step's outcome, or (a diagnostic control, ours) on each step's true advantage under the teacher.",
          "",
          "| H | fits | examples | K | score head reads | episodes | μ-SFT examples | tokens from word vectors | SFT loss, first → last epoch | score MSE, first → last epoch (the targets' variance) | fit to its targets (Spearman of s_t): warm-up episodes / fresh ones |",
          "|---|---|---|---|---|---|---|---|---|---|---|",
          ...table.muWarmup.map(
            (m) =>
              `| ${m.hops} | ${m.objective ?? "decomposition"} | ${m.variant ?? "generated"} | ${m.k ?? "—"} | ${POOLING_TEXT[m.pooling ?? "prompt+criteria"]}${m.promptLayout === "action-last" ? ", the action last in the prompt (ours)" : ""} | ${m.episodes} | ${m.examples} | ${m.embedded} | ${m.sftLoss[0]?.toFixed(3) ?? "—"} → ${m.sftLoss.at(-1)?.toFixed(3) ?? "—"} | ${scoresText(m.sftScores)} | ${fitText(m.fit)} |`,
          ),
          "",
          ...table.muWarmup.flatMap((m) =>
            m.backbone === undefined
              ? []
              : [
                  `μ's backbone for H = ${m.hops} (${m.objective ?? "decomposition"}, ${m.variant ?? "generated"}) is the pretrained llama \`${m.backbone.file}\` (ours, not ARCO's Qwen3-4B): ${m.backbone.parameters} parameters with the score head, its own SentencePiece vocabulary, trained whole; no word vectors.`,
                  "",
                ],
          ),
          ...table.muWarmup.flatMap((m) =>
            m.pretrain === undefined
              ? []
              : [
                  `Before the warm-up of H = ${m.hops} (${m.objective ?? "decomposition"}, ${m.variant ?? "generated"}), μ was pretrained as a language model on the text of ${m.pretrain.tasks} tasks of its own stream (ours, not ARCO's): ${m.pretrain.tokens} tokens per epoch, CE per token ${m.pretrain.ce[0]?.toFixed(3) ?? "—"} → ${m.pretrain.ce.at(-1)?.toFixed(3) ?? "—"} over ${m.pretrain.ce.length} epoch(s).`,
                  "",
                ],
          ),
        ]),
    ...(table.featureWarmup === undefined || table.featureWarmup.length === 0
      ? []
      : [
          "The feature critics' fit (one per H and feature set, shared by every seed): μ's warm-up episodes, their outcomes only. Over the policy's or the action's features, ARCO's decomposition loss, the weights θ of s_t = tanh(θ·φ_t + b): where Σ_t s_t = R put the credit; the gap is the mean of |Σ_t s_t − R| over episodes. Over the chain's state, the regression of V(h_t) = θ·ψ_t + b on R: the gap is the mean of |V(h_t) − R| over steps. The six largest weights in size.",
          "",
          "| H | features | episodes (successes) | loss | gap | largest weights |",
          "|---|---|---|---|---|---|",
          ...table.featureWarmup.map(
            (f) =>
              `| ${f.hops} | ${FEATURE_SETS[f.features]} | ${f.episodes} (${f.successes}) | ${f.loss.toFixed(4)} | ${f.meanAbsoluteGap.toFixed(3)} | ${Object.entries(
                f.weights,
              )
                .sort(([, a], [, b]) => Math.abs(b) - Math.abs(a))
                .slice(0, 6)
                .map(([name, w]) => `${name} ${w >= 0 ? "+" : "−"}${Math.abs(w).toFixed(2)}`)
                .join(", ")} |`,
          ),
          "",
        ]),
    `Timing: ${(table.timing.totalMs / 1000).toFixed(0)} s in all; ${Object.entries(table.timing.byMethodMs)
      .map(([method, ms]) => `${method} ${(ms / 1000).toFixed(0)} s`)
      .join(", ")}.`,
    "",
    ...sidecarRecordLines(table.sidecar),
  );
  return lines.join("\n");
}
