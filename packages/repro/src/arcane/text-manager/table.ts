import { z } from "zod";
import { PAPER } from "../table.js";

/** What parsed and what did not, over a set of episodes. */
const CountsSchema = z.strictObject({
  episodes: z.number().int(),
  /** Rubric turns that were not JSON, failed the schema, or held no criterion that reads as a rule: U* = the floor. */
  unparseable: z.number().int(),
  /** Questions turns that did not parse (the episode then asked nothing). */
  questionsUnparsed: z.number().int(),
  /** Criteria left out because their text reads as no rule (the gym has no judge). */
  judgedCriteria: z.number().int(),
});
export type SidecarManagerCounts = z.infer<typeof CountsSchema>;
type Counts = SidecarManagerCounts;
/** Counts at zero, for {@link sidecarManagerReward}. */
export const emptyCounts = (): Counts => ({ episodes: 0, unparseable: 0, questionsUnparsed: 0, judgedCriteria: 0 });

const RowSchema = z.strictObject({ n: z.array(z.number().int()), meanReturn: z.array(z.number()) });
const WrittenSchema = z.strictObject({
  counts: CountsSchema,
  criteriaPerRubric: z.number(),
  tokensPerCriterion: z.number(),
  questionsAsked: z.number(),
  /** Mean U* of the pick per N over the episodes whose rubric parsed (null when none did): what the floor hides. */
  meanReturnWhenParsed: z.array(z.number()).nullable(),
  /** The first eval tasks' rubric turns as written, for reading. */
  examples: z.array(z.strictObject({ taskId: z.string(), questions: z.array(z.string()), rubric: z.string() })),
});

/** `table.json` of `rubric repro arcane --manager sidecar`. */
export const SidecarManagerTableSchema = z.strictObject({
  kind: z.literal("arcane-sidecar-manager"),
  simulation: z.string(),
  config: z.record(z.string(), z.unknown()),
  model: z.strictObject({
    /** "sidecar-tiny" (the small transformer), or the transformers model's name or directory. */
    name: z.string(),
    parameters: z.number().int(),
    vocabularySize: z.number().int(),
    /** torch's device the policy trained on. */
    device: z.string(),
  }),
  tasks: z.strictObject({ train: z.number().int(), eval: z.number().int() }),
  /** Mean U* of the pick over the eval tasks, per N; an unparseable rubric's episode counts at the floor. */
  rows: z.strictObject({ noRubric: RowSchema, sft: RowSchema, gspo: RowSchema, oracle: RowSchema }),
  written: z.strictObject({ sft: WrittenSchema, gspo: WrittenSchema }),
  training: z.strictObject({
    /** Teacher dialogues SFT trained on (training tasks × teacher stakeholders). */
    sftDialogues: z.number().int(),
    sftLoss: z.array(z.number()),
    /** Per GSPO batch: mean reward, and the rubric turns of the batch's rollouts that did not parse. */
    gspo: z.array(
      z.strictObject({
        batch: z.number().int(),
        meanReward: z.number(),
        clippedFraction: z.number(),
        /** The KL to the SFT policy (k3 estimate) at the batch's last step. */
        kl: z.number(),
        counts: CountsSchema,
      }),
    ),
    /** The longest teacher dialogue in tokens (prompt + turn, per turn), against the model's positions. */
    longestTurn: z.number().int(),
  }),
  seconds: z.strictObject({ sft: z.number(), gspo: z.number(), evaluation: z.number(), total: z.number() }),
  notes: z.array(z.string()),
});
export type SidecarManagerTable = z.infer<typeof SidecarManagerTableSchema>;

/** `table.md` of a sidecar-manager run. */
export function sidecarManagerMarkdown(table: SidecarManagerTable): string {
  const f3 = (x: number) => x.toFixed(3);
  // The paper's column stays beside ours (its LLM manager, on GDPval), for orientation only.
  const header = `| Method | ${table.rows.sft.n.map((n) => `N=${n}`).join(" | ")} | paper N=1 | paper N=8 |`;
  const line = (label: string, row: { meanReturn: number[] }, paper: { n1: number; n8: number }) =>
    `| ${label} | ${row.meanReturn.map(f3).join(" | ")} | ${paper.n1} | ${paper.n8} |`;
  const written = (label: string, w: SidecarManagerTable["written"]["sft"]) =>
    `| ${label} | ${w.counts.unparseable} / ${w.counts.episodes} | ${w.counts.questionsUnparsed} | ${w.counts.judgedCriteria} | ${w.criteriaPerRubric.toFixed(1)} | ${w.tokensPerCriterion.toFixed(1)} | ${w.questionsAsked.toFixed(2)} | ${w.meanReturnWhenParsed === null ? "—" : w.meanReturnWhenParsed.map(f3).join(" / ")} |`;
  return [
    `# ARCANE with an LLM manager trained end to end (${table.config["quick"] ? "quick" : "full"})`,
    "",
    `> ${table.simulation}`,
    "",
    `The manager: ${table.model.name === "sidecar-tiny" ? `a ${table.model.parameters.toLocaleString("en")}-parameter causal transformer in the torch sidecar, byte-level BPE of ${table.model.vocabularySize} ids` : `${table.model.name} (${table.model.parameters.toLocaleString("en")} parameters, its own tokenizer of ${table.model.vocabularySize} ids)`} on ${table.model.device}; SFT on ${table.training.sftDialogues} teacher dialogues of ${table.tasks.train} training tasks, GSPO on those tasks, ${table.tasks.eval} eval tasks; ${table.seconds.total.toFixed(0)} s (SFT ${table.seconds.sft.toFixed(0)} s, GSPO ${table.seconds.gspo.toFixed(0)} s, evaluation ${table.seconds.evaluation.toFixed(0)} s).`,
    "",
    "## Mean return (U* of the selected output)",
    "",
    header,
    `|---|${table.rows.sft.n.map(() => "---").join("|")}|---|---|`,
    line("No Rubric", table.rows.noRubric, PAPER.meanReturn.noRubric),
    line("LLM manager, SFT", table.rows.sft, PAPER.meanReturn.sft),
    line("LLM manager, GSPO", table.rows.gspo, PAPER.meanReturn.gspo),
    line("Oracle rubric", table.rows.oracle, PAPER.meanReturn.oracle),
    "",
    "## What the manager wrote (eval tasks)",
    "",
    `| Manager | rubric turns not parsed | questions turns not parsed | criteria read as no rule (left out) | criteria per rubric | tokens per criterion | questions asked | mean return when parsed (N=${table.rows.sft.n.join(" / N=")}) |`,
    "|---|---|---|---|---|---|---|---|",
    written("SFT", table.written.sft),
    written("GSPO", table.written.gspo),
    "",
    ...table.written.gspo.examples.flatMap((e) => [
      `GSPO on ${e.taskId}: asked ${e.questions.length === 0 ? "nothing" : e.questions.map((q) => `“${q}”`).join(", ")}; wrote \`${e.rubric.slice(0, 400)}\``,
      "",
    ]),
    "## Training",
    "",
    `SFT loss per epoch: ${table.training.sftLoss.map((l) => l.toFixed(3)).join(", ")}.`,
    "",
    "| GSPO batch | mean reward | clipped | KL to SFT | rubric turns not parsed |",
    "|---|---|---|---|---|",
    ...table.training.gspo.map(
      (b) =>
        `| ${b.batch} | ${f3(b.meanReward)} | ${(100 * b.clippedFraction).toFixed(0)}% | ${b.kl.toFixed(4)} | ${b.counts.unparseable} / ${b.counts.episodes} |`,
    ),
    "",
    "## Notes",
    "",
    ...table.notes.map((n) => `- ${n}`),
    "",
  ].join("\n");
}
