/**
 * @rubric/autointeract — stakeholders, managers and workers, the dialogue engine, GDPval tasks
 * and the rubric gym. This file is the package's only public door.
 *
 * So far: the GDPval loader. The roles, the dialogue engine and the gym land next (issue #4).
 */
export { GdpvalDataError, GdpvalTaskSchema, parseGdpvalTasks, type GdpvalTask } from "./gdpval/tasks.js";
export { loadGdpval, type GdpvalDataset, type GdpvalExample } from "./gdpval/dataset.js";
