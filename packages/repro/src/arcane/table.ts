import { z } from "zod";

export const ARCANE_METHODS = ["noRubric", "sft", "gspo", "oracle"] as const;
export type ArcaneMethod = (typeof ARCANE_METHODS)[number];

export const METHOD_LABELS: Record<ArcaneMethod, string> = {
  noRubric: "No Rubric",
  sft: "SFT",
  gspo: "GSPO",
  oracle: "Oracle rubric",
};

const OBJECTIVE_LABELS: Record<string, string> = { gspo: "GSPO", grpo: "GRPO", "dr-grpo": "Dr.GRPO" };

/** Row labels of a run: the trained row (key `gspo`) is named after the objective it was trained with. */
export function methodLabels(table: { config: Record<string, unknown> }): Record<ArcaneMethod, string> {
  return { ...METHOD_LABELS, gspo: OBJECTIVE_LABELS[String(table.config["objective"] ?? "gspo")] ?? "GSPO" };
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
const perMethod = <T extends z.ZodType>(schema: T) =>
  z.strictObject({ noRubric: schema, sft: schema, gspo: schema, oracle: schema });
const RubricStatsSchema = z.strictObject({
  criteriaPerRubric: z.number(),
  tokensPerCriterion: z.number(),
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
  meanReturn: perMethod(z.strictObject({ n1: MeanStdSchema, n8: MeanStdSchema })),
  scaling: z.strictObject({
    ns: z.array(z.number().int().positive()),
    curves: perMethod(z.array(MeanStdSchema)),
    slopePerDoubling: perMethod(z.number()),
  }),
  ndcg8: z.strictObject({ noDialogue: MeanStdSchema, sft: MeanStdSchema, gspo: MeanStdSchema }),
  wilcoxon: z.strictObject({
    gspoVsSft: z.strictObject({
      /** Null when no task's return differs between the two: the test is not defined (scipy refuses it too). */
      statistic: z.number().nullable(),
      pValue: z.number().nullable(),
      n: z.number().int(),
      method: z.enum(["exact", "approx", "none"]),
      meanDifference: z.number(),
    }),
  }),
  rubricStats: z.strictObject({ sft: RubricStatsSchema, gspo: RubricStatsSchema, oracle: RubricStatsSchema }),
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
  for (const [m, label] of Object.entries(labels) as [ArcaneMethod, string][])
    lines.push(
      `| ${label} | ${ms(table.meanReturn[m].n1, seeds)} | ${ms(table.meanReturn[m].n8, seeds)} | ${PAPER.meanReturn[m].n1.toFixed(2)} | ${PAPER.meanReturn[m].n8.toFixed(2)} |`,
    );
  lines.push(
    "",
    "## Best-of-N scaling",
    "",
    `| Method | ${table.scaling.ns.map((n) => `N=${n}`).join(" | ")} | slope per doubling |`,
    `|---|${table.scaling.ns.map(() => "---|").join("")}---|`,
  );
  for (const [m, label] of Object.entries(labels) as [ArcaneMethod, string][])
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
    "| Rubric | criteria per rubric | tokens per criterion | questions asked |",
    "|---|---|---|---|",
  );
  for (const m of ["sft", "gspo", "oracle"] as const) {
    const s = table.rubricStats[m];
    lines.push(
      `| ${labels[m]} | ${s.criteriaPerRubric.toFixed(1)} | ${s.tokensPerCriterion.toFixed(1)} | ${s.questionsAsked === undefined ? "—" : s.questionsAsked.toFixed(2)} |`,
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
