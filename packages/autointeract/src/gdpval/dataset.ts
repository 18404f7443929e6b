import { join } from "node:path";
import { formatRubricIssue, formatZodIssues, readRubricJsonl, type StagedRubric } from "@rubric/core";
import { readInputText } from "@rubric/core/files";
import { z } from "zod";
import { GdpvalDataError, parseGdpvalTasks, type GdpvalTask } from "./tasks.js";

const SplitMetadataSchema = z.object({
  total_rubrics: z.number().int(),
  train_count: z.number().int(),
  eval_count: z.number().int(),
  seed: z.number().int(),
});

/** A GDPval task with its gold staged rubric and the split it belongs to. */
export interface GdpvalExample {
  readonly task: GdpvalTask;
  readonly rubric: StagedRubric;
  readonly split: "train" | "eval";
}

export interface GdpvalDataset {
  readonly train: readonly GdpvalExample[];
  readonly eval: readonly GdpvalExample[];
  /** Every task of `tasks.jsonl`, with or without a gold rubric. */
  readonly tasks: readonly GdpvalTask[];
  /** Tasks that have no gold rubric in either split (the data ships 220 tasks and 219 rubrics). */
  readonly withoutRubric: readonly GdpvalTask[];
  readonly split: { readonly seed: number; readonly train: number; readonly eval: number };
}

/**
 * Loads the GDPval tasks and the ARCANE paper's gold staged rubrics from a directory holding
 * `tasks.jsonl`, `rubrics-train.jsonl`, `rubrics-eval.jsonl` and `split_metadata.json`
 * (the project's `../shared/data/gdpval`), joined by task id, in the paper's 175/44 split.
 *
 * @example
 * const gdpval = await loadGdpval("../shared/data/gdpval");
 * gdpval.eval.length; // 44
 * @throws a `file.*` error of `@rubric/core/files` when a file cannot be read; GdpvalDataError when a file is malformed, a rubric names an unknown task, or the split sizes disagree with split_metadata.json.
 */
export async function loadGdpval(dir: string): Promise<GdpvalDataset> {
  // Core's reader: a regular file of at most 256 MiB, else a `file.*` error naming it (a FIFO or
  // `/dev/zero` named as one of the files is refused before anything is read).
  const read = (name: string) => readInputText(join(dir, name));
  const tasks = parseGdpvalTasks(read("tasks.jsonl"), join(dir, "tasks.jsonl"));
  const byId = new Map(tasks.map((t) => [t.task_id, t]));
  const metadata = SplitMetadataSchema.safeParse(JSON.parse(read("split_metadata.json")));
  if (!metadata.success)
    throw new GdpvalDataError(formatZodIssues(metadata.error, { source: join(dir, "split_metadata.json"), limit: 1 }));
  const splits = { train: [] as GdpvalExample[], eval: [] as GdpvalExample[] };
  for (const split of ["train", "eval"] as const) {
    const file = join(dir, `rubrics-${split}.jsonl`);
    const document = readRubricJsonl(read(`rubrics-${split}.jsonl`), { source: file });
    if (document.issues.length > 0)
      throw new GdpvalDataError(
        `${file}: ${document.issues.length} invalid rubric(s), first: ${formatRubricIssue(document.issues[0]!)}`,
      );
    for (const loaded of document.rubrics) {
      if (loaded.kind !== "staged" || loaded.rubric.taskId === undefined)
        throw new GdpvalDataError(`${file}:${loaded.line}: expected a {task_id, rubric} record`);
      const task = byId.get(loaded.rubric.taskId);
      if (!task)
        throw new GdpvalDataError(`${file}:${loaded.line}: task_id ${loaded.rubric.taskId} is not in tasks.jsonl`);
      splits[split].push({ task, rubric: loaded.rubric, split });
    }
  }
  const expected = { train: metadata.data.train_count, eval: metadata.data.eval_count };
  for (const split of ["train", "eval"] as const)
    if (splits[split].length !== expected[split])
      throw new GdpvalDataError(
        `rubrics-${split}.jsonl holds ${splits[split].length} rubrics; split_metadata.json says ${expected[split]}`,
      );
  const withRubric = new Set([...splits.train, ...splits.eval].map((e) => e.task.task_id));
  return {
    train: splits.train,
    eval: splits.eval,
    tasks,
    withoutRubric: tasks.filter((t) => !withRubric.has(t.task_id)),
    split: { seed: metadata.data.seed, ...expected },
  };
}
