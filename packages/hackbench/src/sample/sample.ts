import { formatRubricIssue, readJsonLines } from "@rubric/core";
import { z } from "zod";
import { HackbenchError } from "../errors.js";

/** One honest output to probe: what the author was asked (`input`) and what they wrote. */
export const HackSampleSchema = z.strictObject({
  id: z.union([z.string().min(1), z.number().int()]).transform(String),
  input: z.string().optional(),
  output: z.string(),
});
export type HackSample = z.output<typeof HackSampleSchema>;

/** A samples file that is not one valid, uniquely identified `{"id", "input"?, "output"}` per line. */
export class SampleFileError extends HackbenchError {
  override readonly name = "SampleFileError";
  readonly code = "hackbench.sample-file";
}

/**
 * Reads a samples JSONL text: one `{"id", "input"?, "output"}` object per line, blank lines
 * ignored. Every problem is reported at once, each with its file and line.
 *
 * @example
 * parseSamples('{"id": "a", "input": "Summarise Q3", "output": "Revenue rose 4%."}\n', "samples.jsonl");
 * // [{ id: "a", input: "Summarise Q3", output: "Revenue rose 4%." }]
 * @throws SampleFileError naming `source:line N: path: problem` for every bad line, and a file with no samples.
 */
export function parseSamples(text: string, source = "samples"): HackSample[] {
  const { records, issues } = readJsonLines(text, HackSampleSchema, { source, idOf: (sample) => sample.id });
  const samples = records.map((r) => r.value);
  if (issues.length > 0)
    throw new SampleFileError(
      `${source}: ${issues.length} problem(s)\n${issues.map((i) => `  ${formatRubricIssue(i)}`).join("\n")}`,
    );
  if (samples.length === 0)
    throw new SampleFileError(`${source}: no samples (expected one {"id", "input"?, "output"} per line)`);
  return samples;
}
