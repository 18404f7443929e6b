import { rubricJsonSchema, rubricSchemaNames, type RubricSchemaName } from "@rubric/core";
import { UsageError, type CliIO } from "../io.js";

export const schemaHelp = `rubric schema <${rubricSchemaNames.join("|")}>

Prints the JSON Schema (draft 2020-12) of a rubric file form, for editors and other languages.`;

export function schema(name: string | undefined, io: CliIO): number {
  if (name === undefined || !rubricSchemaNames.includes(name as RubricSchemaName))
    throw new UsageError(
      `schema needs one of ${rubricSchemaNames.join(", ")}${name === undefined ? "" : `, got ${JSON.stringify(name)}`}`,
    );
  io.out(`${JSON.stringify(rubricJsonSchema(name as RubricSchemaName), null, 2)}\n`);
  return 0;
}
