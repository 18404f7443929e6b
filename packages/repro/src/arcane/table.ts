import { z } from "zod";

export const ARCANE_METHODS = ["noRubric", "sft", "gspo", "oracle"] as const;
export type ArcaneMethod = (typeof ARCANE_METHODS)[number];

/**
 * The controls that test ARCANE's claim (that the dialogue is what makes the trained manager's
 * rubric better): the trained manager asking nothing, the trained manager hearing nothing useful,
 * the best rubric anyone could fix without asking (chosen on training tasks), Stage I on the
 * stakeholders' own utilities, and the oracle rubric applied by a judge that errs.
 */
export const ARCANE_CONTROLS = [
  "gspoNoQuestions",
  "gspoUninformative",
  "fixedRubric",
  "sftOracle",
  "oracleNoisy",
] as const;
export type ArcaneControl = (typeof ARCANE_CONTROLS)[number];
export const ARCANE_ROWS = [...ARCANE_METHODS, ...ARCANE_CONTROLS] as const;
export type ArcaneRow = (typeof ARCANE_ROWS)[number];

export const METHOD_LABELS: Record<ArcaneRow, string> = {
  noRubric: "No Rubric",
  sft: "SFT",
  gspo: "GSPO",
  oracle: "Oracle rubric",
  gspoNoQuestions: "GSPO, no questions",
  gspoUninformative: "GSPO, uninformative replies",
  fixedRubric: "Best fixed rubric (no dialogue)",
  sftOracle: "SFT on oracle rubrics",
  oracleNoisy: "Oracle rubric, noisy judge",
};

const OBJECTIVE_LABELS: Record<string, string> = { gspo: "GSPO", grpo: "GRPO", "dr-grpo": "Dr.GRPO" };

/** Row labels of a run: the trained rows (key `gspo…`) are named after the objective they were trained with. */
export function methodLabels(table: { config: Record<string, unknown> }): Record<ArcaneRow, string> {
  const trained = OBJECTIVE_LABELS[String(table.config["objective"] ?? "gspo")] ?? "GSPO";
  const noise = table.config["judgeNoise"];
  return {
    ...METHOD_LABELS,
    gspo: trained,
    gspoNoQuestions: `${trained}, no questions`,
    gspoUninformative: `${trained}, uninformative replies`,
    ...(typeof noise === "number" ? { oracleNoisy: `Oracle rubric, noisy judge (p = ${noise})` } : {}),
  };
}

/** The paper's numbers (ARCANE, arXiv 2512.06196, GDPVal): mean return at N=1 and N=8, NDCG@8. */
export const PAPER = {
  meanReturn: {
    noRubric: { n1: 0.58, n8: 0.58 },
    sft: { n1: 0.59, n8: 0.68 },
    gspo: { n1: 0.62, n8: 0.74 },
    oracle: { n1: 0.7, n8: 0.81 },
  },
  ndcg8: { noDialogue: 0.7998, sft: 0.8103, gspo: 0.8722 },
} as const;

const MeanStdSchema = z.strictObject({ mean: z.number(), std: z.number() });
export type MeanStd = z.infer<typeof MeanStdSchema>;
const perRow = <T extends z.ZodType>(schema: T) =>
  z.strictObject(Object.fromEntries(ARCANE_ROWS.map((row) => [row, schema])) as Record<ArcaneRow, T>);
const TestSchema = z.strictObject({
  /** Null when no task's return differs between the two: the test is not defined (scipy refuses it too). */
  statistic: z.number().nullable(),
  pValue: z.number().nullable(),
  n: z.number().int(),
  method: z.enum(["exact", "approx", "none"]),
  meanDifference: z.number(),
});
const AtN = z.strictObject({ noDialogue: z.number(), fullPreferences: z.number(), gap: z.number() });
const RubricStatsSchema = z.strictObject({
  criteriaPerRubric: z.number(),
  tokensPerCriterion: z.number(),
  /** Share of criteria whose text `writtenCriterionVerifier` reads as a rule (the rest go to the judge). */
  readAsRule: z.number(),
  /** Criteria per rubric written from a template with a copied term (not a bank criterion's text). */
  writtenPerRubric: z.number(),
  /** Share of those that the stakeholder's U* holds; null when none was written. */
  writtenHeld: z.number().nullable(),
  questionsAsked: z.number().optional(),
});

/**
 * `table.json` of `rubric repro arcane`. A run in the gym (`kind: "arcane-gym"`) fills every
 * method; a run with LLM roles (`kind: "arcane-llm"`) measures No Rubric, the untrained manager
 * and the gold rubric only, and leaves the trained rows null.
 */
export const ArcaneTableSchema = z.strictObject({
  kind: z.literal("arcane-gym"),
  simulation: z.string(),
  config: z.record(z.string(), z.unknown()),
  tasks: z.strictObject({ train: z.number().int(), eval: z.number().int() }),
  /** The paper's four methods, then the controls. */
  meanReturn: perRow(z.strictObject({ n1: MeanStdSchema, n8: MeanStdSchema })),
  scaling: z.strictObject({
    ns: z.array(z.number().int().positive()),
    curves: perRow(z.array(MeanStdSchema)),
    slopePerDoubling: perRow(z.number()),
  }),
  /**
   * The environment's value of information, mean over seeds: U* at best-of-N of the best rubric
   * written without dialogue (the fixed rubric) and of one written from the stakeholder's full
   * preferences (the oracle rubric), and the gap. Chosen on training tasks, measured on eval.
   */
  valueOfInformation: z.strictObject({ n1: AtN, n8: AtN }),
  /**
   * The trained manager's return under other clipping bands (the first row is the run's own): the
   * same Stage II from the same SFT policy, with the mean share of sequences clipped at a batch's
   * last step.
   */
  epsSensitivity: z.array(
    z.strictObject({
      epsLow: z.number(),
      epsHigh: z.number(),
      clippedFraction: z.number(),
      n1: MeanStdSchema,
      n8: MeanStdSchema,
    }),
  ),
  /** The fixed rubric of each seed, as chosen on training tasks, with its training-task return after each criterion. */
  fixedRubrics: z.array(
    z.strictObject({ seed: z.number(), criteria: z.array(z.string()), trainReturns: z.array(z.number()) }),
  ),
  ndcg8: z.strictObject({ noDialogue: MeanStdSchema, sft: MeanStdSchema, gspo: MeanStdSchema }),
  wilcoxon: z.strictObject({
    gspoVsSft: TestSchema,
    /** The trained manager against each control at N = 8 (positive: the trained manager ahead). */
    gspoVsControls: z.strictObject({
      gspoNoQuestions: TestSchema,
      gspoUninformative: TestSchema,
      fixedRubric: TestSchema,
      sftOracle: TestSchema,
    }),
  }),
  rubricStats: z.strictObject({
    sft: RubricStatsSchema,
    gspo: RubricStatsSchema,
    oracle: RubricStatsSchema,
    sftOracle: RubricStatsSchema,
    fixedRubric: RubricStatsSchema,
  }),
  perSector: z.array(
    z.strictObject({
      sector: z.string(),
      tasks: z.number(),
      noRubric: z.number(),
      sft: z.number(),
      gspo: z.number(),
      oracle: z.number(),
    }),
  ),
  training: z.array(
    z.strictObject({
      seed: z.number(),
      sftLoss: z.strictObject({ first: z.number(), last: z.number() }).nullable(),
      gspoReward: z.strictObject({ first: z.number(), last: z.number() }).nullable(),
    }),
  ),
  timing: z.strictObject({
    seconds: z.number(),
    /** Choosing the fixed rubric on training tasks, all seeds. */
    fixedRubricSeconds: z.number(),
    trainingRollouts: z.number().int(),
    rolloutsPerSecond: z.number(),
    verifierShare: z.number(),
    workerShare: z.number(),
    policyShare: z.number(),
  }),
  paper: z.unknown(),
  notes: z.array(z.string()),
});
export type ArcaneTable = z.infer<typeof ArcaneTableSchema>;

const f3 = (x: number) => x.toFixed(3);
const ms = (v: MeanStd, seeds: number) => (seeds > 1 ? `${f3(v.mean)} ± ${f3(v.std)}` : f3(v.mean));

/** `table.md`: the tables of a run, the paper's numbers beside ours, and the notes. */
export function arcaneMarkdown(table: ArcaneTable): string {
  const seeds = (table.config["seeds"] as number[]).length;
  const labels = methodLabels(table);
  const lines: string[] = [];
  lines.push(`# ARCANE in the rubric gym${table.config["quick"] ? " (quick)" : ""}`, "", `> ${table.simulation}`, "");
  lines.push(
    `${table.tasks.train} training tasks, ${table.tasks.eval} eval tasks, ${seeds} seed${seeds === 1 ? "" : "s"}${seeds > 1 ? " (± is the standard deviation over seeds)" : ""}; ${table.timing.seconds.toFixed(0)} s.`,
    "",
  );
  lines.push(
    "## Mean return (U* of the selected output)",
    "",
    "| Method | N=1 | N=8 | paper N=1 | paper N=8 |",
    "|---|---|---|---|---|",
  );
  for (const m of ARCANE_METHODS)
    lines.push(
      `| ${labels[m]} | ${ms(table.meanReturn[m].n1, seeds)} | ${ms(table.meanReturn[m].n8, seeds)} | ${PAPER.meanReturn[m].n1.toFixed(2)} | ${PAPER.meanReturn[m].n8.toFixed(2)} |`,
    );
  const test = (t: ArcaneTable["wilcoxon"]["gspoVsSft"]) =>
    t.pValue === null
      ? "not defined (no task differs)"
      : `${t.meanDifference >= 0 ? "+" : ""}${f3(t.meanDifference)}, p = ${t.pValue.toPrecision(2)}`;
  lines.push(
    "",
    "## Controls: does the dialogue help?",
    "",
    `Each control against ${labels.gspo} at N=8: the mean difference ${labels.gspo} − control over the eval tasks (per-task returns averaged over seeds) and its Wilcoxon signed-rank p, whichever way it comes out. The paper reports no such rows.`,
    "",
    `| Control | N=1 | N=8 | ${labels.gspo} − control at N=8 |`,
    "|---|---|---|---|",
  );
  for (const c of ARCANE_CONTROLS)
    lines.push(
      `| ${labels[c]} | ${ms(table.meanReturn[c].n1, seeds)} | ${ms(table.meanReturn[c].n8, seeds)} | ${c === "oracleNoisy" ? "—" : test(table.wilcoxon.gspoVsControls[c])} |`,
    );
  const voi = table.valueOfInformation;
  lines.push(
    "",
    "## Value of information",
    "",
    "U* at best-of-N of the best rubric written without dialogue (the fixed rubric, chosen on training tasks) and of one written from the stakeholder's full preferences (the oracle rubric): the most a dialogue could add in this environment.",
    "",
    "| | no dialogue | full preferences | gap |",
    "|---|---|---|---|",
    `| N=1 | ${f3(voi.n1.noDialogue)} | ${f3(voi.n1.fullPreferences)} | ${f3(voi.n1.gap)} |`,
    `| N=8 | ${f3(voi.n8.noDialogue)} | ${f3(voi.n8.fullPreferences)} | ${f3(voi.n8.gap)} |`,
    "",
    ...table.fixedRubrics.map(
      (f) =>
        `Seed ${f.seed}'s fixed rubric (${f.criteria.length} criteria): ${f.criteria.join("; ") || "none helped"}.`,
    ),
  );
  lines.push(
    "",
    "## Sensitivity to the clipping band",
    "",
    `${labels.gspo} trained from the same SFT policy under each band (the first is this run's); "clipped" is the mean share of sequences outside the band at the last of a batch's ${table.config["stepsPerBatch"]} steps.`,
    "",
    "| ε_low / ε_high | clipped | N=1 | N=8 |",
    "|---|---|---|---|",
    ...table.epsSensitivity.map(
      (e) =>
        `| ${e.epsLow} / ${e.epsHigh} | ${(100 * e.clippedFraction).toFixed(0)}% | ${ms(e.n1, seeds)} | ${ms(e.n8, seeds)} |`,
    ),
  );
  lines.push(
    "",
    "## Best-of-N scaling",
    "",
    `| Method | ${table.scaling.ns.map((n) => `N=${n}`).join(" | ")} | slope per doubling |`,
    `|---|${table.scaling.ns.map(() => "---|").join("")}---|`,
  );
  for (const [m, label] of Object.entries(labels) as [ArcaneRow, string][])
    lines.push(
      `| ${label} | ${table.scaling.curves[m].map((c) => f3(c.mean)).join(" | ")} | ${table.scaling.slopePerDoubling[m] >= 0 ? "+" : ""}${f3(table.scaling.slopePerDoubling[m])} |`,
    );
  lines.push(
    "",
    "## NDCG@8 of each rubric's ranking of 8 candidates against U*",
    "",
    "| Rubric | NDCG@8 | paper |",
    "|---|---|---|",
  );
  lines.push(
    `| No dialogue (SFT policy, no questions) | ${ms(table.ndcg8.noDialogue, seeds)} | ${PAPER.ndcg8.noDialogue} |`,
  );
  lines.push(`| SFT | ${ms(table.ndcg8.sft, seeds)} | ${PAPER.ndcg8.sft} |`);
  lines.push(`| ${labels.gspo} | ${ms(table.ndcg8.gspo, seeds)} | ${PAPER.ndcg8.gspo} |`);
  const w = table.wilcoxon.gspoVsSft;
  lines.push(
    "",
    `## ${labels.gspo} vs SFT`,
    "",
    w.pValue === null
      ? `Wilcoxon signed-rank over ${table.tasks.eval} eval tasks at N=8: not defined — every task's return is the same under both methods (0 non-zero differences), so there is nothing to test.`
      : `Wilcoxon signed-rank over ${table.tasks.eval} eval tasks at N=8 (per-task returns averaged over seeds): statistic ${w.statistic}, p = ${w.pValue.toPrecision(3)} (${w.method}, ${w.n} non-zero differences), mean difference ${w.meanDifference >= 0 ? "+" : ""}${f3(w.meanDifference)}.`,
  );
  lines.push(
    "",
    "## Rubrics",
    "",
    "| Rubric | criteria per rubric | tokens per criterion | read as a rule | written with a copied term (per rubric) | of those, held by U* | questions asked |",
    "|---|---|---|---|---|---|---|",
  );
  for (const m of ["sft", "gspo", "oracle", "sftOracle", "fixedRubric"] as const) {
    const s = table.rubricStats[m];
    lines.push(
      `| ${labels[m]} | ${s.criteriaPerRubric.toFixed(1)} | ${s.tokensPerCriterion.toFixed(1)} | ${(100 * s.readAsRule).toFixed(0)}% | ${s.writtenPerRubric.toFixed(2)} | ${s.writtenHeld === null ? "—" : `${(100 * s.writtenHeld).toFixed(0)}%`} | ${s.questionsAsked === undefined ? "—" : s.questionsAsked.toFixed(2)} |`,
    );
  }
  lines.push(
    "",
    "## Per sector (N=8)",
    "",
    `| Sector | tasks | No Rubric | SFT | ${labels.gspo} | Oracle |`,
    "|---|---|---|---|---|---|",
  );
  for (const s of table.perSector)
    lines.push(`| ${s.sector} | ${s.tasks} | ${f3(s.noRubric)} | ${f3(s.sft)} | ${f3(s.gspo)} | ${f3(s.oracle)} |`);
  lines.push(
    "",
    "## Training",
    "",
    `| Seed | SFT loss first → last | ${labels.gspo} batch reward first → last |`,
    "|---|---|---|",
  );
  for (const t of table.training)
    lines.push(
      `| ${t.seed} | ${t.sftLoss ? `${f3(t.sftLoss.first)} → ${f3(t.sftLoss.last)}` : "—"} | ${t.gspoReward ? `${f3(t.gspoReward.first)} → ${f3(t.gspoReward.last)}` : "—"} |`,
    );
  const tm = table.timing;
  lines.push(
    "",
    `Training: ${tm.trainingRollouts} rollouts, ${tm.rolloutsPerSecond.toFixed(0)} rollouts/s; time shares — verifiers ${(100 * tm.verifierShare).toFixed(0)}%, worker ${(100 * tm.workerShare).toFixed(0)}%, policy math ${(100 * tm.policyShare).toFixed(0)}%.`,
  );
  lines.push("", "## Notes", "", ...table.notes.map((n) => `- ${n}`), "");
  return lines.join("\n");
}
