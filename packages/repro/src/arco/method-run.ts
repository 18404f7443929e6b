import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { formatRubricIssue, readJsonLines } from "@rubric/core";
import { RUN_LOG_FILE, RunFileError, readRunFile, readRunJson } from "@rubric/core/runs";
import { type TrainerLogLine, TrainerLogLineSchema } from "@rubric/rlxar";
import { z } from "zod";
import type { ArcoConfig } from "./config.js";
import { checkRunConfig, checkRunSidecar } from "../resume/settings.js";
import type { SidecarRecord } from "../sidecar/record.js";

/** What one method's run on one seed gave: the table is built from these. */
export interface MethodRun {
  readonly metrics: Record<string, number>;
  /** The final greedy evaluation per question, in the evaluation set's order. */
  readonly perQuestion: readonly { readonly id: string; readonly em: number; readonly f1: number }[];
  readonly curve: { epoch: number; em: number; f1: number }[];
  readonly log: readonly TrainerLogLine[];
  readonly rollouts: number;
  readonly ms: number;
  readonly diagnostics?: Record<string, unknown>;
}

/** `result.json` in a method's directory: the run's results but its log, which is `log.jsonl` beside it. */
const MethodResultSchema = z.strictObject({
  metrics: z.record(z.string(), z.number()),
  perQuestion: z.array(z.strictObject({ id: z.string(), em: z.number(), f1: z.number() })),
  curve: z.array(z.strictObject({ epoch: z.int(), em: z.number(), f1: z.number() })),
  rollouts: z.int().min(0),
  ms: z.number(),
  diagnostics: z.record(z.string(), z.unknown()).optional(),
});
export const METHOD_RESULT_FILE = "result.json";
/** The configuration a run was started with, beside its seeds: a resume must use the same. */
export const ARCO_CONFIG_FILE = "arco-config.json";
/** The sidecar a run trains in (`SidecarRecord`), kept for a resume to compare. */
export const ARCO_SIDECAR_FILE = "arco-sidecar.json";

/** Written when a method's run is finished, so a resume keeps it instead of training it again. */
export async function writeMethodRun(dir: string, run: MethodRun): Promise<void> {
  const { log: _log, ...result } = run;
  await writeFile(join(dir, METHOD_RESULT_FILE), `${JSON.stringify(result, null, 2)}\n`);
}

/**
 * A finished method's run, read back for a resume (undefined when it did not finish): its
 * `result.json` and `log.jsonl`, each through its schema, regular files only.
 */
export async function readMethodRun(dir: string): Promise<MethodRun | undefined> {
  const result = await readRunJson(join(dir, METHOD_RESULT_FILE), MethodResultSchema);
  if (result === undefined) return undefined;
  const logFile = join(dir, RUN_LOG_FILE);
  const logText = await readRunFile(logFile);
  if (logText === undefined)
    throw new RunFileError(logFile, `missing, though ${METHOD_RESULT_FILE} says the run finished`);
  const { records, issues } = readJsonLines(logText, TrainerLogLineSchema, { source: logFile });
  if (issues.length > 0) throw new RunFileError(logFile, formatRubricIssue(issues[0]!), { prefixed: true });
  return { ...result, log: records.map((record) => record.value) };
}

/** `checkRunConfig` on the run's `arco-config.json`. */
export async function checkArcoConfig(out: string, config: ArcoConfig, resume: boolean): Promise<void> {
  await checkRunConfig(join(out, ARCO_CONFIG_FILE), config, resume);
}

/** `checkRunSidecar` on the run's `arco-sidecar.json`. */
export async function checkArcoSidecar(out: string, sidecar: SidecarRecord, resume: boolean): Promise<void> {
  await checkRunSidecar(join(out, ARCO_SIDECAR_FILE), sidecar, resume);
}
