import { mean } from "@rubric/core";
import { z } from "zod";
import { PAPER } from "../table.js";

/** The methods of an LLM-roles run, in table order. */
export const ARCANE_LLM_METHODS = ["noRubric", "manager", "sft", "gspo", "oracle"] as const;
export type ArcaneLlmMethod = (typeof ARCANE_LLM_METHODS)[number];

const nullableNumbers = z.array(z.number().nullable());
const perMethod = <T extends z.ZodType>(schema: T) =>
  z.strictObject({ noRubric: schema, manager: schema, sft: schema, gspo: schema, oracle: schema });
const N1N8 = z.strictObject({ n1: z.number().nullable(), n8: z.number().nullable() });

/** `table.json` of `rubric repro arcane --provider`: LLM roles on real GDPval eval tasks, scored against the gold rubrics. */
export const ArcaneLlmTableSchema = z.strictObject({
  kind: z.literal("arcane-llm"),
  model: z.string(),
  seed: z.number().int(),
  ns: z.array(z.number().int().positive()),
  /** How error verdicts of the gold rubric count: `fail` (no U*) or `renormalize` (dropped, weights rescaled). */
  errorsAs: z.enum(["fail", "renormalize"]),
  /** The gym-trained managers deployed here (null when none were given). */
  training: z
    .strictObject({
      seed: z.number().int(),
      sftEpochs: z.number().int(),
      gspoBatches: z.number().int(),
      objective: z.string(),
      seconds: z.number(),
    })
    .nullable(),
  tasks: z.array(
    z.strictObject({
      taskId: z.string(),
      sector: z.string(),
      /** Questions each manager asked. */
      questions: z.strictObject({
        manager: z.number().int(),
        sft: z.number().int().nullable(),
        gspo: z.number().int().nullable(),
      }),
      /** The rubrics the managers wrote (null where none was written). */
      rubrics: z.strictObject({
        manager: z.unknown().nullable(),
        sft: z.unknown().nullable(),
        gspo: z.unknown().nullable(),
      }),
      /** U* (the gold rubric's normalised score) of the selected output per N; null where it could not be scored. */
      returns: perMethod(nullableNumbers),
      ndcg8: z.strictObject({
        noDialogue: z.number().nullable(),
        manager: z.number().nullable(),
        sft: z.number().nullable(),
        gspo: z.number().nullable(),
      }),
      errors: z.array(z.string()),
      /** What is worth knowing about a task's numbers that is not an error (e.g. why an NDCG is undefined). */
      notes: z.array(z.string()),
      seconds: z.number(),
    }),
  ),
  /** Mean U* per method over the paired tasks (null for a method that did not run, or no paired task). */
  meanReturn: perMethod(N1N8),
  /** How many tasks the means are over: those where every method that ran has a return at that N. */
  pairedTasks: z.strictObject({ n1: z.number().int(), n8: z.number().int() }),
  notes: z.array(z.string()),
});
export type ArcaneLlmTable = z.infer<typeof ArcaneLlmTableSchema>;
export type TaskRow = ArcaneLlmTable["tasks"][number];

/**
 * Mean return per method at N=1 and N=8 over the tasks where every method in `methods` has a
 * return at that N: a task one method could not score leaves every method's mean, so that no
 * method looks better for having skipped a hard task. Methods not in `methods` are null.
 */
export function pairedMeans(
  tasks: readonly Pick<TaskRow, "returns">[],
  ns: readonly number[],
  methods: readonly ArcaneLlmMethod[],
): { meanReturn: ArcaneLlmTable["meanReturn"]; pairedTasks: ArcaneLlmTable["pairedTasks"] } {
  const at = (n: number) => {
    const k = ns.indexOf(n);
    const paired =
      k < 0 ? [] : tasks.filter((t) => methods.every((m) => t.returns[m][k] !== null && t.returns[m][k] !== undefined));
    const meanOf = (m: ArcaneLlmMethod) =>
      !methods.includes(m) || paired.length === 0 ? null : mean(paired.map((t) => t.returns[m][k]!));
    return { count: paired.length, mean: meanOf };
  };
  const [one, eight] = [at(1), at(8)];
  const meanReturn = Object.fromEntries(
    ARCANE_LLM_METHODS.map((m) => [m, { n1: one.mean(m), n8: eight.mean(m) }]),
  ) as ArcaneLlmTable["meanReturn"];
  return { meanReturn, pairedTasks: { n1: one.count, n8: eight.count } };
}

const LABELS: Record<ArcaneLlmMethod, string> = {
  noRubric: "No Rubric",
  manager: "LLM manager (untrained)",
  sft: "SFT (gym-trained)",
  gspo: "GSPO (gym-trained)",
  oracle: "Oracle (gold rubric)",
};

/** Markdown for an LLM-roles run. */
export function arcaneLlmMarkdown(table: ArcaneLlmTable): string {
  const f = (v: number | null) => (v === null ? "—" : v.toFixed(3));
  const paper = (m: ArcaneLlmMethod, n: "n1" | "n8") => (m === "manager" ? "—" : PAPER.meanReturn[m][n].toFixed(2));
  const lines = [
    `# ARCANE with LLM roles (${table.model})`,
    "",
    ...table.notes.map((n) => `> ${n}`),
    "",
    "## Mean return (gold-rubric U* of the selected output)",
    "",
    "| Method | N=1 | N=8 | paper N=1 | paper N=8 |",
    "|---|---|---|---|---|",
  ];
  for (const m of ARCANE_LLM_METHODS)
    lines.push(
      `| ${LABELS[m]} | ${f(table.meanReturn[m].n1)} | ${f(table.meanReturn[m].n8)} | ${paper(m, "n1")} | ${paper(m, "n8")} |`,
    );
  lines.push(
    "",
    `Means over ${table.pairedTasks.n1} task(s) at N=1 and ${table.pairedTasks.n8} at N=8: those where every method's pick could be scored.`,
  );
  lines.push(
    "",
    "## Per task (U* per N)",
    "",
    `| Task | sector | method | questions | ${table.ns.map((n) => `N=${n}`).join(" | ")} | NDCG@8 |`,
    `|---|---|---|---|${table.ns.map(() => "---|").join("")}---|`,
  );
  for (const t of table.tasks) {
    for (const m of ARCANE_LLM_METHODS) {
      const questions = m === "manager" || m === "sft" || m === "gspo" ? String(t.questions[m] ?? "—") : "";
      const ndcg = m === "noRubric" ? `${f(t.ndcg8.noDialogue)} (no dialogue)` : m === "oracle" ? "" : f(t.ndcg8[m]);
      lines.push(
        `| ${t.taskId.slice(0, 8)} | ${t.sector} | ${LABELS[m]} | ${questions} | ${t.returns[m].map(f).join(" | ")} | ${ndcg} |`,
      );
    }
  }
  lines.push(
    "",
    `Seconds per task: ${table.tasks.map((t) => `${t.taskId.slice(0, 8)} ${t.seconds.toFixed(0)}`).join(", ")}.`,
  );
  const notes = table.tasks.flatMap((t) => t.notes.map((n) => `- ${t.taskId.slice(0, 8)}: ${n}`));
  if (notes.length > 0) lines.push("", "## Notes", "", ...notes);
  const errors = table.tasks.flatMap((t) => t.errors.map((e) => `- ${t.taskId.slice(0, 8)}: ${e}`));
  if (errors.length > 0) lines.push("", "## Errors", "", ...errors);
  return `${lines.join("\n")}\n`;
}
