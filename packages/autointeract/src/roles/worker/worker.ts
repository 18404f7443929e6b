import type { FlatRubric } from "@rubric/core";
import type { Spend, TaskBrief } from "../../dialogue/dialogue.js";

export interface WorkerOutput extends Spend {
  readonly text: string;
}

/** Produces outputs for a task, steered by a rubric when given one. */
export interface Worker {
  readonly name: string;
  produce(
    task: TaskBrief,
    rubric: FlatRubric | undefined,
    n: number,
    options: { readonly seed: number; readonly signal?: AbortSignal },
  ): Promise<WorkerOutput[]>;
}
