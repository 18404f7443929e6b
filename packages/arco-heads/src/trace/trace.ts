import { toJsonLines } from "@rubric/core";
import { z } from "zod";
import { ArcoInputError } from "../errors.js";
import { readRecords } from "../records/read-records.js";

// s_t is written for people reading a trace; the reader recomputes it from the scores and refuses
// a line where they disagree. The slack is float32's: a backend that averages in float32 (the ONNX
// graphs do) lands within a few 1e-8 of the double mean of the same scores.
const MEAN_TOLERANCE = 1e-6;

/**
 * One scored step, for diagnosis: the criteria μ wrote, its K scores d_t and s_t = mean_k d_t,k.
 * `criteria` is empty when μ scored without a rubric (the "no rubric" ablation, K = 1).
 */
export const StepTraceSchema = z
  .strictObject({
    /** The step's id, unique in a file (e.g. `<trajectory>#<t>`). */
    id: z.string().min(1),
    criteria: z.array(z.string()),
    scores: z.array(z.number().min(-1).max(1)).min(1),
    s: z.number().min(-1).max(1),
    /** Set when μ's generation was padded or cut to K, or held no criteria object (see `GeneratedCriteria`). */
    adjusted: z.enum(["padded", "truncated", "unparsed"]).optional(),
    /** Oldest history turns left out of the prompt to fit the model, when any were. */
    droppedTurns: z.int().min(1).optional(),
  })
  .superRefine((trace, context) => {
    if (trace.criteria.length !== 0 && trace.criteria.length !== trace.scores.length) {
      context.addIssue({
        code: "custom",
        path: ["criteria"],
        message: `expected ${trace.scores.length} criteria (one per score) or none, got ${trace.criteria.length}`,
      });
    }
    const mean = meanOf(trace.scores);
    if (Math.abs(trace.s - mean) > MEAN_TOLERANCE) {
      context.addIssue({
        code: "custom",
        path: ["s"],
        message: `expected the mean of scores, ${mean}, got ${trace.s}`,
      });
    }
  });
export type StepTrace = z.infer<typeof StepTraceSchema>;

function meanOf(values: readonly number[]): number {
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

/**
 * The trace of one scored step, with s computed from the scores.
 *
 * @example
 * stepTrace("q1#0", ["Targets the first hop", "Specific query", "No repeat"], [0.5, 0.25, 0]);
 * // { id: "q1#0", criteria: [...], scores: [0.5, 0.25, 0], s: 0.25 }
 */
export function stepTrace(id: string, criteria: readonly string[], scores: readonly number[]): StepTrace {
  if (scores.length === 0) throw new ArcoInputError("scores", "expected at least one score, got none");
  return StepTraceSchema.parse({ id, criteria: [...criteria], scores: [...scores], s: meanOf(scores) });
}

/**
 * Traces as JSON lines, one step per line, newline-terminated (append-safe: a training loop
 * appends each batch's traces to `epoch_N.jsonl`).
 *
 * @example
 * appendFileSync("traces/epoch_1.jsonl", traceJsonLines(traces));
 */
export function traceJsonLines(traces: readonly StepTrace[]): string {
  return toJsonLines(traces.map((trace) => StepTraceSchema.parse(trace)));
}

/**
 * The traces of a JSON-lines file; an `ArcoFileError` lists every bad line (numbered, with the
 * field) and every repeated id.
 *
 * @example
 * const traces = readTraces(readInputText("traces/epoch_1.jsonl"), "traces/epoch_1.jsonl");
 */
export function readTraces(text: string, source: string): StepTrace[] {
  return readRecords(text, StepTraceSchema, source, (trace) => trace.id);
}
