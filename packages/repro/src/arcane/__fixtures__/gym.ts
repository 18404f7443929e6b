import { fileURLToPath } from "node:url";
import { arcaneConfig } from "../config.js";

/** GDPval in the shared data (`RUBRIC_SHARED_DIR`, else the `shared/` beside the checkout). */
export const GDPVAL = `${process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../../shared/", import.meta.url))}/data/gdpval`;

/** A few tasks, two SFT epochs and one small GSPO batch: seconds, for tests that need trained managers, not good ones. */
export const SMALL_GYM_CONFIG = arcaneConfig({
  quick: true,
  seeds: 1,
  trainTasks: 10,
  sftEpochs: 2,
  gspoBatches: 1,
  promptsPerBatch: 2,
  groupSize: 2,
  stepsPerBatch: 1,
});
