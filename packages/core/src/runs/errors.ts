import { RubricError } from "../errors/rubric-error.js";

/** A run directory's failures: its files, an earlier run in the way, settings that changed. */
export abstract class RunError extends RubricError {}

/**
 * A file of a run directory (`log.jsonl`, `checkpoints/latest.json`) that does not read: missing
 * where it must be, not a regular file, not JSON, or a line or field its schema refuses. The
 * message names the file (and line); nothing has been restored or rewritten when it is thrown.
 */
export class RunFileError extends RunError {
  override readonly name = "RunFileError";
  readonly code = "run.file";
  constructor(
    readonly file: string,
    readonly problem: string,
    /** The problem already starts with the file (a formatted issue names its source and line). */
    options: { readonly prefixed?: boolean } = {},
  ) {
    super(options.prefixed ? problem : `${file}: ${problem}`);
  }
}

/** A fresh start asked of a directory that holds a run of the same stage, where the trainer refuses to replace one. */
export class RunExistsError extends RunError {
  override readonly name = "RunExistsError";
  readonly code = "run.exists";
  constructor(readonly dir: string) {
    super(`${dir} holds a run; pass resume to continue it, or choose another directory`);
  }
}

/** A resume with settings other than those the run was started with. */
export class RunSettingsError extends RunError {
  override readonly name = "RunSettingsError";
  readonly code = "run.settings";
  /** `detail` says which setting differs and how, where the caller knows. */
  constructor(
    readonly file: string,
    detail?: string,
  ) {
    super(
      `${file}: settings differ from this run's${detail === undefined ? "" : ` (${detail})`}: resume with the settings it was started with`,
    );
  }
}
