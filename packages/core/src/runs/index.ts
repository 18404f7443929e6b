/**
 * `@rubric/core/runs` — the run directory every trainer writes and resumes from (GSPO's stages,
 * ARCO's co-evolution). A subpath of its own, not the main door: it reads and writes files, and
 * core's main door stays free of Node's file system for users who only score rubrics.
 */
export {
  RUN_CHECKPOINTS_DIR,
  RUN_LATEST_FILE,
  RUN_LOG_FILE,
  type ResumePoint,
  type RunDirectory,
  type RunPointer,
  RunPointerSchema,
  type RunSpec,
  readRunFile,
  readRunJson,
  TrainingRun,
} from "./training-run.js";
export { RunError, RunExistsError, RunFileError, RunSettingsError } from "./errors.js";
