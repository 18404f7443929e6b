import type { TaskBrief } from "../dialogue/dialogue.js";

/** A task of the gym: a GDPval task, whose sector decides which criteria its stakeholder favours. */
export interface GymTask extends TaskBrief {
  readonly sector: string;
  readonly occupation: string;
}

/** A GDPval task as the gym (and every role) sees it. */
export function gymTask(task: {
  readonly task_id: string;
  readonly prompt: string;
  readonly sector: string;
  readonly occupation: string;
}): GymTask {
  return { id: task.task_id, prompt: task.prompt, sector: task.sector, occupation: task.occupation };
}
