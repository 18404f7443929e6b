import type { GenerateRequest } from "@rubric/core";
import { z } from "zod";
import { openingFence } from "@rubric/verifiers";
import { HackbenchError } from "../errors.js";

/**
 * What `llmJudge` of @rubric/verifiers asks a model, read back from the request: the task, the
 * response, and each criterion with the scores it may be given. The biased judge grades from this.
 */
export interface JudgeRequest {
  readonly input?: string;
  readonly response: string;
  /** One call, several criteria (`llmJudge`'s default batched mode). */
  readonly batched: boolean;
  readonly criteria: readonly { readonly id: string; readonly reading: string; readonly values: readonly number[] }[];
}

/** A request that is not an `llmJudge` judgement: no response section, no score schema. */
export class JudgeRequestError extends HackbenchError {
  override readonly name = "JudgeRequestError";
  readonly code = "hackbench.judge-request";
}

const ScoreEnumSchema = z.looseObject({ score: z.looseObject({ enum: z.array(z.number()).min(2) }) });
const SingleSchema = z.looseObject({ properties: ScoreEnumSchema });
const BatchedSchema = z.looseObject({
  properties: z.record(z.string(), z.looseObject({ properties: ScoreEnumSchema })),
});

const TASK = "## Task given to the author\n";
const RESPONSE = "## Response to judge\n";
const REPLY = "\n\nReply with JSON";

/** The criterion as the judge reads it: its text and instructions, without the scale line. */
function reading(block: string): string {
  return block
    .split("\n\n")
    .filter((part) => !part.startsWith("Score: "))
    .join("\n\n")
    .trim();
}

/**
 * Reads an `llmJudge` request (single-criterion or batched).
 * @throws JudgeRequestError when the request has no response section or no score schema.
 */
export function parseJudgeRequest(request: GenerateRequest): JudgeRequest {
  const prompt = [...request.messages].reverse().find((m) => m.role === "user")?.content;
  const schema = request.responseFormat?.schema;
  if (prompt === undefined || schema === undefined)
    throw new JudgeRequestError("expected a user message and a JSON-schema response format, as llmJudge sends");
  const single = SingleSchema.safeParse(schema);
  const batched = single.success ? undefined : BatchedSchema.safeParse(schema);
  if (!single.success && !batched?.success)
    throw new JudgeRequestError("the response format is neither a verdict schema nor a batch of verdict schemas");
  const criteriaMarker = single.success ? "\n\n## Criterion\n" : "\n\n## Criteria\n";
  const criteriaAt = prompt.lastIndexOf(criteriaMarker);
  // The task and the response are fenced (see the verifiers' judge prompts); read each fence
  // whole, so that a heading forged inside the response is read as the response it is.
  let input: string | undefined;
  let after = prompt;
  const taskAt = prompt.indexOf(TASK);
  const responseFirstAt = prompt.indexOf(RESPONSE);
  if (taskAt >= 0 && (responseFirstAt < 0 || taskAt < responseFirstAt)) {
    const task = openingFence(prompt.slice(taskAt + TASK.length));
    if (task !== undefined) {
      input = task.data;
      after = task.rest;
    }
  }
  const responseAt = after.indexOf(RESPONSE);
  if (responseAt < 0 || criteriaAt < 0)
    throw new JudgeRequestError(`expected "${RESPONSE.trim()}" followed by "${criteriaMarker.trim()}" in the prompt`);
  const fenced = openingFence(after.slice(responseAt + RESPONSE.length));
  const response = fenced?.data ?? "";
  let section = prompt.slice(criteriaAt + criteriaMarker.length);
  const replyAt = section.lastIndexOf(REPLY);
  if (replyAt >= 0) section = section.slice(0, replyAt);
  const base = { input, response };
  if (single.success) {
    // The single-criterion schema carries no id; the engine knows which criterion it asked about.
    return {
      ...base,
      batched: false,
      criteria: [{ id: "criterion", reading: reading(section), values: single.data.properties.score.enum }],
    };
  }
  const entries = Object.entries(batched!.data!.properties);
  const starts = entries.map(([id]) => section.indexOf(`### Criterion "${id}"\n`));
  return {
    ...base,
    batched: true,
    criteria: entries.map(([id, property], i) => {
      const start = starts[i]!;
      if (start < 0)
        throw new JudgeRequestError(`criterion ${JSON.stringify(id)} is in the schema but not in the prompt`);
      const next = Math.min(...starts.filter((s) => s > start), section.length);
      return {
        id,
        reading: reading(section.slice(start + `### Criterion "${id}"\n`.length, next)),
        values: property.properties.score.enum,
      };
    }),
  };
}
