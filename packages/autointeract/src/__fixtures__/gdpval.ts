import { fileURLToPath } from "node:url";
import type { GdpvalTask } from "../gdpval/tasks.js";
import { gymTask, type GymTask } from "../gym/task.js";

/** The shared GDPval data the gym and role tests read (never copied into the repo). */
export const GDPVAL_DIR = `${process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../shared/", import.meta.url))}/data/gdpval`;

/** A GDPval example's task as the gym's brief. */
export const asTask = (e: { task: GdpvalTask }): GymTask => gymTask(e.task);
