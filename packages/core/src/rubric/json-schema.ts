import { z } from "zod";
import { FlatRubricSchema } from "./flat.js";
import { StagedRubricRecordSchema, StagedRubricSchema } from "./staged.js";

export type RubricSchemaName = "flat" | "staged" | "staged-record";

const SCHEMAS = {
  flat: { schema: FlatRubricSchema, title: "Flat weighted rubric (@rubric/core)" },
  staged: { schema: StagedRubricSchema, title: "Staged rubric, ARCANE reference format (@rubric/core)" },
  "staged-record": { schema: StagedRubricRecordSchema, title: "GDPval rubric record {task_id, rubric} (@rubric/core)" },
} as const;

/**
 * JSON Schema (draft 2020-12) of a rubric file form, for editors and other languages. It
 * describes what a file may contain (defaults optional); cross-field rules such as unique ids
 * are enforced only by the loader.
 *
 * @example
 * const schema = rubricJsonSchema("flat");
 * schema.required; // ["id", "criteria"]
 */
export function rubricJsonSchema(name: RubricSchemaName): Record<string, unknown> {
  const { schema, title } = SCHEMAS[name];
  return { ...z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }), title } as Record<string, unknown>;
}

/** The names {@link rubricJsonSchema} accepts. */
export const rubricSchemaNames: readonly RubricSchemaName[] = ["flat", "staged", "staged-record"];
