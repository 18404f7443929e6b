import { z } from "zod";
import { ANSWER_KIND_LABELS, ANSWER_KINDS } from "./answer-kinds.js";
import { SidecarRecordSchema, sidecarRecordLines } from "../sidecar/record.js";

/** The methods of ARCO's comparison, ours last: the same loop, budget and warm-up for each. */
export const ARCO_METHODS = [
  "outcome",
  "rar",
  "frozenMu",
  "prm",
  "fixedCriteria",
  "noPrefix",
  "arco",
  "arcoOutcome",
  "teacherMu",
] as const;
export type ArcoMethod = (typeof ARCO_METHODS)[number];

export const ARCO_METHOD_LABELS: Readonly<Record<ArcoMethod, string>> = {
  outcome: "Outcome reward only (Search-R1 style)",
  rar: "Trajectory rubric reward, frozen judge (RaR style)",
  frozenMu: "Frozen μ (no co-evolution)",
  prm: "Scalar process reward (K = 1, no criteria)",
  fixedCriteria: "Fixed criteria text",
  noPrefix: "Criteria without the prefix",
  arco: "ARCO",
  arcoOutcome: "ARCO + true outcome at the terminal step (ours)",
  teacherMu: "Control: ARCO with the gold teacher's hindsight scores as μ",
};

/** What ARCO's release says of its numbers: one, EM 42.80 (%) for Qwen3-4B on its 500 dev questions. */
export const PAPER_ARCO = {
  arco: { em: 0.428 },
  source:
    "ARCO's released README (initial commit 7a2c628): EM 42.80 for Qwen3-4B on its 500 HotpotQA dev questions; no other number of the paper's tables is public",
} as const;

const MeanStdSchema = z.strictObject({ mean: z.number(), std: z.number(), n: z.int() });
const MethodResultSchema = z.strictObject({
  em: MeanStdSchema,
  arcoEm: MeanStdSchema,
  f1: MeanStdSchema,
  /** Training rollouts of one seed. */
  rollouts: z.int(),
  perSeed: z.array(z.strictObject({ em: z.number(), f1: z.number() })),
  /** EM over every (seed, question) pair whose gold answer is of each kind (`answerKind`; null where none is; absent in older tables). */
  emByAnswerKind: z
    .strictObject({ yesNo: z.number().nullable(), named: z.number().nullable(), readOut: z.number().nullable() })
    .optional(),
  /**
   * Against outcome-only RL on the same questions and seeds (absent for outcome itself): the
   * exact McNemar test on per-question EM and the Wilcoxon signed-rank test on per-question F1,
   * both over (seed, question) pairs. `null` where a test is not defined (no pair differs).
   */
  vsOutcome: z
    .strictObject({
      emWins: z.int(),
      emLosses: z.int(),
      emP: z.number(),
      f1P: z.number().nullable(),
    })
    .optional(),
});

const count = z.int().nullable().optional();
const share = z.number().nullable().optional();
/**
 * μ's diagnostics of one seed as the run writes them, checked where the table shows them: a
 * table.json is read back by `rubric report`, and a field of another type there (an array for a
 * mean) ended the report with a bare TypeError. Fields the table does not show are kept as they are.
 */
const DiagnosticsSchema = z.looseObject({
  evidence: z.looseObject({ auc: share, positives: count, negatives: count }).optional(),
  outcomeAuc: share,
  contrast: z.looseObject({ pairs: count, meanDelta: share, preferred: share }).optional(),
  unparsed: count,
  steps: count,
});

export const ArcoTableSchema = z.strictObject({
  kind: z.literal("arco-hotpotqa"),
  config: z.record(z.string(), z.unknown()),
  methods: z.partialRecord(z.enum(ARCO_METHODS), MethodResultSchema),
  ablations: z.record(z.string(), MethodResultSchema),
  /** [method][seed] → greedy eval after each epoch (epoch 0: before RL). */
  curves: z.record(z.string(), z.array(z.array(z.strictObject({ epoch: z.int(), em: z.number(), f1: z.number() })))),
  diagnostics: z.record(z.string(), z.array(DiagnosticsSchema.nullable())),
  /** How many evaluation questions' gold answers are of each kind (`answerKind`; absent in older tables). */
  answerKinds: z.strictObject({ yesNo: z.int(), named: z.int(), readOut: z.int() }).optional(),
  /** One per finished seed: a table written while later seeds still run has fewer than `config.seeds`. */
  warmup: z.array(z.record(z.string(), z.unknown())),
  timing: z.strictObject({
    totalMs: z.number(),
    trainingMs: z.number(),
    rollouts: z.int(),
    rolloutsPerSecond: z.number(),
    shares: z.record(z.string(), z.number()),
  }),
  paper: z.unknown(),
  /**
   * The sidecar that trained μ (absent in older tables): its torch and intra-op threads. torch's
   * sums depend on the thread count, so μ's weights, and what π learns from them, are reproduced
   * to the bit only on as many threads (`--threads`).
   */
  sidecar: SidecarRecordSchema.optional(),
});
export type ArcoTable = z.infer<typeof ArcoTableSchema>;

const pct = (x: number) => (100 * x).toFixed(1);

/** μ's diagnostics per method as a table: does s_t single out good steps? */
function diagnosticsMarkdown(table: ArcoTable): string[] {
  const rows = Object.entries(table.diagnostics).flatMap(([name, perSeed]) =>
    perSeed.flatMap((d, i) => {
      if (d === null) return [];
      const auc = (x: number | null | undefined) => (typeof x === "number" ? x.toFixed(3) : "n/a");
      const contrast = d.contrast;
      return [
        `| ${name} | ${i + 1} | ${auc(d.evidence?.auc)} (${d.evidence?.positives ?? 0} gold, ${d.evidence?.negatives ?? 0} other) | ${auc(d.outcomeAuc)} | ${(100 * (contrast?.preferred ?? 0)).toFixed(0)} % of ${contrast?.pairs ?? 0} pairs, mean Δs ${(contrast?.meanDelta ?? 0).toFixed(3)} | ${d.unparsed ?? 0} of ${d.steps ?? 0} |`,
      ];
    }),
  );
  if (rows.length === 0) return [];
  return [
    "",
    "μ's diagnostics on the evaluation questions' rollouts of the final policy (0.5 is chance): AUC of s_t for \"this search retrieved a gold paragraph\", AUC of Σ_t s_t for the episode's success, and the same prefix with a gold vs a distractor query (share of pairs where the gold query scores higher).",
    "",
    "| method | seed | evidence AUC | outcome AUC | gold query preferred | criteria unparsed |",
    "|---|---|---|---|---|---|",
    ...rows,
  ];
}
const cell = (m: { mean: number; std: number; n: number }) =>
  m.n > 1 ? `${pct(m.mean)} ± ${pct(m.std)}` : pct(m.mean);

/** How the run's μ differs from ARCO's (a LoRA on Qwen3-4B), from the configuration's `mu`. */
function muDifference(mu: unknown): string {
  const setting = mu as
    | { dModel?: number; model?: { name?: string; dtype?: string; lora?: { r?: number } } }
    | undefined;
  const small = `a ${String(setting?.dModel)}-wide transformer trained from scratch, not a LoRA on the same backbone`;
  if (setting?.model === undefined) return `μ is ${small}`;
  if (setting.model.name === "tiny") return `μ is ${small}, served by the torch sidecar`;
  return `μ is ${setting.model.name} (${setting.model.dtype}, LoRA r ${String(setting.model.lora?.r)} on q/v) served by the torch sidecar, ARCO's is a LoRA on Qwen3-4B`;
}

/** How the run's π differs from ARCO's (Qwen3-4B with LoRA, trained), from the configuration's `policy`. */
function policyDifference(policy: unknown): string {
  const setting = policy as
    | { kind?: string; model?: string; spec?: string; loraRank?: number; url?: string }
    | undefined;
  if (setting?.kind === "served")
    return `the policy is ${setting.model} trained in the sidecar${setting.loraRank === 0 ? "" : ` (LoRA r ${setting.loraRank})`} and rolled out by the server at ${setting.url}, ARCO's is Qwen3-4B-Instruct with LoRA r 8 served by vLLM`;
  if (setting?.kind === "sidecar" && setting.model === "tiny")
    return "the policy is the sidecar's small causal transformer trained from scratch, not Qwen3-4B";
  if (setting?.kind === "sidecar")
    return `the policy is ${setting.model} trained in the sidecar (${setting.loraRank === 0 ? "every weight" : `LoRA r ${setting.loraRank}`}), ARCO's is Qwen3-4B-Instruct with LoRA r 8`;
  if (setting?.kind === "llm") return `the policy is ${setting.spec}, rolled out but not trained`;
  return "the policy is an in-process log-linear policy over extractive candidate actions, not Qwen3-4B";
}

/** EM by what the gold answer is, per method: where a method's EM comes from. */
function answerKindsMarkdown(table: ArcoTable): string[] {
  const kinds = table.answerKinds;
  if (kinds === undefined) return [];
  const total = ANSWER_KINDS.reduce((sum, kind) => sum + kinds[kind], 0);
  const rows = [
    ...ARCO_METHODS.flatMap((method) => {
      const result = table.methods[method];
      return result === undefined ? [] : [[ARCO_METHOD_LABELS[method], result] as const];
    }),
    ...Object.entries(table.ablations).map(
      ([name, result]) => [`ARCO, K = ${name.replace("arcoK", "")}`, result] as const,
    ),
  ].filter(([, result]) => result.emByAnswerKind !== undefined);
  if (rows.length === 0 || total === 0) return [];
  const emCell = (em: number | null) => (em === null ? "—" : pct(em));
  return [
    "",
    `EM in % by what the gold answer is (over seeds and questions; this evaluation's share of each kind in the header). Question sets mix these kinds in different shares, so an EM on one set is not an EM on another.`,
    "",
    `| method | ${ANSWER_KINDS.map((kind) => `${ANSWER_KIND_LABELS[kind]} (${pct(kinds[kind] / total)} %)`).join(" | ")} |`,
    `|---|${ANSWER_KINDS.map(() => "---|").join("")}`,
    ...rows.map(
      ([label, result]) =>
        `| ${label} | ${ANSWER_KINDS.map((kind) => emCell(result.emByAnswerKind![kind])).join(" | ")} |`,
    ),
  ];
}

/** The table as Markdown: ours beside ARCO's one known number, with what differs said in a sentence. */
export function arcoMarkdown(table: ArcoTable): string {
  const config = table.config as {
    trainQuestions?: number;
    evalQuestions?: number;
    seeds?: unknown[];
    quick?: boolean;
    evalSplit?: string;
  };
  const tune = config.evalSplit === "tune";
  const split = tune ? "held-out training (tune)" : "dev";
  const seeds = Array.isArray(config.seeds) ? config.seeds.length : 0;
  const done = table.warmup.length;
  const progress = done < seeds ? ` (${done} of ${seeds} seeds done so far)` : "";
  const lines = [
    `# ARCO on HotpotQA (${config.quick === true ? "quick run" : "full run"}): ${config.trainQuestions} train questions, ${config.evalQuestions} ${split} questions, ${seeds} seed${seeds === 1 ? "" : "s"}${progress}`,
    "",
    tune
      ? "EM and F1 in %, greedy on the training file's held-out questions (`--eval-split tune`: never trained on, for choosing settings; not a result to report) after the last epoch (mean ± std over seeds)."
      : "EM and F1 in %, greedy on the dev questions after the last epoch (mean ± std over seeds). Nothing was selected on dev.",
    "",
    "| method | EM | ARCO's EM variant | F1 | vs outcome: EM wins / losses (McNemar p), F1 Wilcoxon p | paper EM |",
    "|---|---|---|---|---|---|",
  ];
  const versus = (result: ArcoTable["methods"][ArcoMethod]) => {
    const v = result?.vsOutcome;
    if (v === undefined) return "—";
    return `${v.emWins} / ${v.emLosses} (p ${v.emP.toPrecision(2)}), F1 p ${v.f1P === null ? "n/a (no question differs)" : v.f1P.toPrecision(2)}`;
  };
  for (const method of ARCO_METHODS) {
    const result = table.methods[method];
    if (result === undefined) continue;
    const paper = method === "arco" ? pct(PAPER_ARCO.arco.em) : "—";
    lines.push(
      `| ${ARCO_METHOD_LABELS[method]} | ${cell(result.em)} | ${cell(result.arcoEm)} | ${cell(result.f1)} | ${versus(result)} | ${paper} |`,
    );
  }
  for (const [name, result] of Object.entries(table.ablations)) {
    lines.push(
      `| ARCO, K = ${name.replace("arcoK", "")} | ${cell(result.em)} | ${cell(result.arcoEm)} | ${cell(result.f1)} | ${versus(result)} | — |`,
    );
  }
  lines.push(...answerKindsMarkdown(table));
  lines.push(...diagnosticsMarkdown(table));
  lines.push(
    "",
    `What differs from ARCO's 42.80: ${policyDifference(table.config.policy)}; ${muDifference((table.config as { mu?: unknown }).mu)}; retrieval is BM25 over each question's ten paragraphs, not SimCSE; the warm-up teacher is a scripted policy with the gold paragraphs and noise, not gpt-4o-mini with a gpt-5.4 annotator; training uses ${config.trainQuestions} questions (ARCO: 2,000) for far fewer epochs${tune ? "" : ", and the dev set is the 400 of ARCO's 500 questions that are shared here"}.`,
    "",
    `Timing: ${(table.timing.totalMs / 1000).toFixed(0)} s in all; ${table.timing.rolloutsPerSecond.toFixed(1)} training rollouts/s; shares of training time: ${Object.entries(
      table.timing.shares,
    )
      .map(([key, share]) => `${key} ${(100 * share).toFixed(0)} %`)
      .join(", ")}.`,
    "",
    ...sidecarRecordLines(table.sidecar),
  );
  return lines.join("\n");
}
