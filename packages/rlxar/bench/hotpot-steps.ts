import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Step, type Trajectory, stepsOf } from "@rubric/arco-heads";

/**
 * Trajectories of ARCO's QA agent shape, built from real HotpotQA training questions for the
 * benchmarks (not a measurement of any policy): three searches, each observing one of the
 * question's own paragraphs (the two supporting ones, then a distractor), then Finish with the
 * gold answer. 64 of them give 256 steps: the "batch of 64 trajectories (≈ 250 steps)".
 */
export function hotpotTrajectories(sharedDir: string, count: number, offset = 0): Trajectory[] {
  const rows = readFileSync(join(sharedDir, "data", "hotpotqa", "train.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map(
      (line) =>
        JSON.parse(line) as {
          _id: string;
          question: string;
          answer: string;
          supporting_titles: string[];
          context: [string, string[]][];
        },
    )
    .slice(offset, offset + count);
  return rows.map((row) => {
    const paragraph = (title: string) => row.context.find(([t]) => t === title)?.[1].join(" ") ?? "";
    const distractor = row.context.find(([t]) => !row.supporting_titles.includes(t))?.[0] ?? row.context[0]![0];
    const searches = [...row.supporting_titles.slice(0, 2), distractor];
    return {
      id: row._id,
      task: row.question,
      outcome: 1,
      turns: [
        ...searches.map((title, i) => ({
          action: `Search[${title}]`,
          observation: paragraph(title),
          budgetLeft: 3 - i,
        })),
        { action: `Finish[${row.answer}]`, observation: "Episode finished.", budgetLeft: 0 },
      ],
    };
  });
}

export const hotpotSteps = (sharedDir: string, count: number, offset = 0): Step[] =>
  hotpotTrajectories(sharedDir, count, offset).flatMap(stepsOf);

/** Teacher-like criteria of ARCO's length (3 short phrases), varied by step: what a trained μ writes, for the benchmarks. */
export function teacherCriteria(step: Step): string[] {
  const kind = step.action.startsWith("Finish") ? "answer" : `search ${step.history.length + 1}`;
  return [`Targets what the ${kind} still needs`, "Builds on the evidence so far", "Avoids repeated or vague queries"];
}
