// What a gym run keeps of itself as it goes, so that a resume loses nothing already computed: each
// finished method run (per H and seed) and each μ warm-up's record, one file each under `runs/`.
import { mkdir, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { readRunJson } from "@rubric/core/runs";
import { z } from "zod";
import { type ArcoGymMethod, CreditSummarySchema, type MuWarmupRecord, MuWarmupRecordSchema } from "./table.js";

/** The directory of `out` that holds a run's finished pieces. */
export const GYM_RUNS_DIR = "runs";
/** The configuration a run was started with: a resume must use the same. */
export const GYM_CONFIG_FILE = "arco-gym-config.json";
/** The sidecar that trains the run's μ, kept for a resume to compare. */
export const GYM_SIDECAR_FILE = "arco-gym-sidecar.json";

/** One method's run on one hop count and seed: its success per evaluation task, its learning curve, its credit. */
export const GymMethodRunSchema = z.strictObject({
  perTask: z.array(z.number()),
  curve: z.array(z.strictObject({ rollouts: z.int(), success: z.number() })),
  /** The critic's credit on the seed's probe (critics only), every probe step's point kept for the plot. */
  credit: CreditSummarySchema.extend({
    points: z.array(z.strictObject({ advantage: z.number(), s: z.number() })),
  }).optional(),
  /** How long it took, so a resumed table's timing still counts it. */
  ms: z.number(),
});
export type GymMethodRun = z.infer<typeof GymMethodRunSchema>;

const methodFile = (out: string, hops: number, seed: number, method: ArcoGymMethod) =>
  join(out, GYM_RUNS_DIR, `h${hops}-s${seed}-${method}.json`);
const muFile = (out: string, hops: number, key: string) => join(out, GYM_RUNS_DIR, `mu-h${hops}-${key}.json`);

// Written whole or not at all: a run stopped mid-write leaves no half file for a resume to trip on.
async function write(file: string, value: unknown): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(`${file}.partial`, `${JSON.stringify(value)}\n`);
  await rename(`${file}.partial`, file);
}

/** Kept when the run finishes, so a resume keeps it instead of training it again. */
export async function writeGymMethodRun(
  out: string,
  at: { hops: number; seed: number; method: ArcoGymMethod },
  run: GymMethodRun,
): Promise<void> {
  await write(methodFile(out, at.hops, at.seed, at.method), run);
}

/** A finished run, read back through its schema (undefined when it did not finish). */
export async function readGymMethodRun(
  out: string,
  at: { hops: number; seed: number; method: ArcoGymMethod },
): Promise<GymMethodRun | undefined> {
  return readRunJson(methodFile(out, at.hops, at.seed, at.method), GymMethodRunSchema);
}

/** A μ warm-up's record, kept so that a resume that needs no more of that μ still tables it. */
export async function writeMuWarmupRecord(out: string, key: string, record: MuWarmupRecord): Promise<void> {
  await write(muFile(out, record.hops, key), record);
}

export async function readMuWarmupRecord(out: string, hops: number, key: string): Promise<MuWarmupRecord | undefined> {
  return readRunJson(muFile(out, hops, key), MuWarmupRecordSchema);
}
