/**
 * Test material from real HotpotQA rows (../shared/data/hotpotqa): the questions, their gold
 * answers, and views whose history holds the two gold supporting paragraphs, retrieved in the
 * order the row's context lists them. The environment's own reader lives in src/hotpotqa; this
 * parses lines directly so the policy's tests do not depend on it.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { AgentView } from "../../../environment/environment.js";

export const SHARED_DIR =
  process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../../../shared/", import.meta.url));

export interface GoldRow {
  readonly id: string;
  readonly question: string;
  readonly answer: string;
  readonly goldTitles: readonly string[];
  readonly context: readonly (readonly [string, readonly string[]])[];
}

/** The rows of `train.jsonl` or `dev.jsonl`; dev's gold titles come from its supporting facts. */
export function readGoldRows(split: "train" | "dev"): GoldRow[] {
  const text = readFileSync(`${SHARED_DIR}data/hotpotqa/${split}.jsonl`, "utf8");
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const row = JSON.parse(line) as {
        _id: string;
        question: string;
        answer: string;
        supporting_titles?: string[];
        supporting_facts?: [string, number][];
        context: [string, string[]][];
      };
      const titles = row.supporting_titles ?? [...new Set((row.supporting_facts ?? []).map(([t]) => t))];
      return { id: row._id, question: row.question, answer: row.answer, goldTitles: titles, context: row.context };
    });
}

/** A paragraph as a successful search observes it: its sentences joined, no title. */
export function paragraphText(row: GoldRow, title: string): string {
  const found = row.context.find(([t]) => t === title);
  if (found === undefined) throw new Error(`row ${row.id} has no paragraph titled ${JSON.stringify(title)}`);
  return found[1].join(" ");
}

/**
 * The view after searching both gold paragraphs (in context order): with `mustFinish` only an
 * answer is allowed, the single Finish step the learning test rewards.
 */
export function goldView(row: GoldRow, options: { readonly mustFinish: boolean }): AgentView {
  const titles = row.context.map(([t]) => t).filter((t) => row.goldTitles.includes(t));
  return {
    taskId: row.id,
    task: row.question,
    history: titles.map((title) => ({ action: `Search[${title}]`, observation: paragraphText(row, title) })),
    budgetLeft: options.mustFinish ? 0 : 1,
    mustFinish: options.mustFinish,
  };
}
