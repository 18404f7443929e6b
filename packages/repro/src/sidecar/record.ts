// What a table records of the sidecar that trained its models: torch's floating-point sums depend
// on its intra-op thread count, so a μ (and what π learns from it) is reproduced to the bit only on
// as many threads as it was trained on.
import type { SidecarClient } from "@rubric/sidecar";
import { z } from "zod";

/** The sidecar's torch and its intra-op threads, as `health` reports them. */
export const SidecarRecordSchema = z.strictObject({ torch: z.string(), threads: z.int() });
export type SidecarRecord = z.infer<typeof SidecarRecordSchema>;

/** Asks the running sidecar for what a table records of it. */
export async function sidecarRecord(client: SidecarClient): Promise<SidecarRecord> {
  const { torch, threads } = await client.request("health", {});
  return { torch, threads };
}

/** The lines of `table.md` that say which `--threads` reproduces a run; none without a record. */
export function sidecarRecordLines(record: SidecarRecord | undefined): string[] {
  if (record === undefined) return [];
  return [
    `μ was trained by torch ${record.torch} on ${record.threads} thread(s). torch's sums depend on the thread count: run with --threads ${record.threads} to reproduce μ, and what π learns from it, exactly.`,
    "",
  ];
}
