// What a resumable run records beside its results, so that a resume continues the same experiment:
// its configuration, and the sidecar that trains its models.
import { writeFile } from "node:fs/promises";
import { RunSettingsError, readRunFile, readRunJson } from "@rubric/core/runs";
import { type SidecarRecord, SidecarRecordSchema } from "../sidecar/record.js";

/**
 * Records `config` in `file` on a fresh start; on a resume, refuses one that differs from the
 * recorded one (other questions, methods or settings would mix two experiments in one table).
 */
export async function checkRunConfig(file: string, config: unknown, resume: boolean): Promise<void> {
  const written = `${JSON.stringify(config, null, 2)}\n`;
  const earlier = resume ? await readRunFile(file) : undefined;
  if (earlier !== undefined && earlier !== written) throw new RunSettingsError(file);
  await writeFile(file, written);
}

/**
 * Records the sidecar that trains the run (torch, its threads) in `file` on a fresh start; on a
 * resume, refuses another: torch's sums depend on its thread count, so a run resumed on other
 * threads would train its later models otherwise than its earlier ones, in one table. A run
 * started before the file was kept has none, and resumes.
 */
export async function checkRunSidecar(file: string, sidecar: SidecarRecord, resume: boolean): Promise<void> {
  const earlier = resume ? await readRunJson(file, SidecarRecordSchema) : undefined;
  if (earlier !== undefined && (earlier.torch !== sidecar.torch || earlier.threads !== sidecar.threads))
    throw new RunSettingsError(
      file,
      `started on torch ${earlier.torch} with ${earlier.threads} thread(s), resumed on torch ${sidecar.torch} with ${sidecar.threads}; --threads sets them`,
    );
  await writeFile(file, `${JSON.stringify(sidecar)}\n`);
}
