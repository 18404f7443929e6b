import type { VerificationInput } from "../verifier/verifier.js";
import { scaleValues, type Scale } from "./scale.js";

/** What one criterion asks of the judge. */
export interface JudgedCriterion {
  readonly id: string;
  readonly text: string;
  readonly prompt?: string;
  readonly expectation?: string;
  readonly scale: Scale;
}

export const JUDGE_SYSTEM_PROMPT =
  "You are a strict, fair evaluator. You judge whether a response satisfies each criterion you are given, " +
  "using only the evidence in the response. Think briefly, then reply with JSON exactly matching the schema you are given, and nothing else.";

function describeScale(scale: Scale): string {
  const values = scaleValues(scale);
  const step = values.length > 1 ? Number((values[1]! - values[0]!).toFixed(10)) : 1;
  return `a number from ${scale.min} (not satisfied at all) to ${scale.max} (fully satisfied), in steps of ${step}`;
}

function describeCriterion(c: JudgedCriterion): string {
  const parts = [c.text];
  if (c.prompt && c.prompt.trim() !== c.text.trim()) parts.push(`Instructions:\n${c.prompt}`);
  if (c.expectation) parts.push(`What a good response does: ${c.expectation}`);
  parts.push(`Score: ${describeScale(c.scale)}.`);
  return parts.join("\n\n");
}

function describeOutput(input: VerificationInput): string {
  const sections: string[] = [];
  if (input.input) sections.push(`## Task given to the author\n${input.input}`);
  sections.push(`## Response to judge\n${input.output === "" ? "(empty)" : input.output}`);
  if (input.files && input.files.length > 0)
    sections.push(
      `## Files delivered with the response\n${input.files.map((f) => `- ${f.name}`).join("\n")}\n(Only their names are shown here.)`,
    );
  return sections.join("\n\n");
}

/** The user message for judging one criterion. */
export function singleCriterionPrompt(criterion: JudgedCriterion, input: VerificationInput): string {
  return `${describeOutput(input)}\n\n## Criterion\n${describeCriterion(criterion)}\n\nReply with JSON: {"rationale": "<one or two sentences>", "score": <number>}.`;
}

/** The user message for judging several criteria of one response in one call. */
export function batchedPrompt(criteria: readonly JudgedCriterion[], input: VerificationInput): string {
  const list = criteria.map((c) => `### Criterion "${c.id}"\n${describeCriterion(c)}`).join("\n\n");
  return `${describeOutput(input)}\n\n## Criteria\n${list}\n\nReply with JSON: an object with one key per criterion id, each {"rationale": "<one or two sentences>", "score": <number>}.`;
}

/**
 * JSON schema of a single verdict; `score` last so the model reasons before it grades.
 * `rationaleMaxLength` bounds the rationale (see `LlmJudgeOptions.rationaleMaxLength`).
 */
export function verdictSchema(scale: Scale, rationaleMaxLength?: number): Record<string, unknown> {
  const rationale =
    rationaleMaxLength === undefined ? { type: "string" } : { type: "string", maxLength: rationaleMaxLength };
  return {
    type: "object",
    properties: { rationale, score: { enum: scaleValues(scale) } },
    required: ["rationale", "score"],
    additionalProperties: false,
  };
}

// The same rubric is judged on every output: its schema is built once.
const batchedSchemas = new Map<string, Record<string, unknown>>();

export function batchedSchema(
  criteria: readonly JudgedCriterion[],
  rationaleMaxLength?: number,
): Record<string, unknown> {
  const key = JSON.stringify([
    rationaleMaxLength ?? null,
    criteria.map((c) => [c.id, c.scale.min, c.scale.max, c.scale.step ?? null]),
  ]);
  let schema = batchedSchemas.get(key);
  if (!schema) {
    schema = buildBatchedSchema(criteria, rationaleMaxLength);
    if (batchedSchemas.size < 1000) batchedSchemas.set(key, schema);
  }
  return schema;
}

function buildBatchedSchema(
  criteria: readonly JudgedCriterion[],
  rationaleMaxLength: number | undefined,
): Record<string, unknown> {
  return {
    type: "object",
    properties: Object.fromEntries(criteria.map((c) => [c.id, verdictSchema(c.scale, rationaleMaxLength)])),
    required: criteria.map((c) => c.id),
    additionalProperties: false,
  };
}
