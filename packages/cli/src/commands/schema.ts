import { rubricJsonSchema, rubricSchemaNames, type RubricSchemaName } from "@rubric/core";
import { z } from "zod";
import { defineCommand } from "../flags/command.js";
import type { CliIO } from "../io.js";

export const schemaCommand = defineCommand({
  name: "schema",
  usage: `<${rubricSchemaNames.join("|")}>`,
  description: "Prints the JSON Schema (draft 2020-12) of a rubric file form, for editors and other languages.",
  positional: {
    key: "form",
    label: `<${rubricSchemaNames.join("|")}>`,
    description: "the rubric file form",
    schema: z.array(z.string()).transform((given, context) => {
      const name = given[0];
      if (given.length === 1 && rubricSchemaNames.includes(name as RubricSchemaName)) return name as RubricSchemaName;
      context.addIssue({
        code: "custom",
        message: `needs one of ${rubricSchemaNames.join(", ")}${given.length === 0 ? "" : `, got ${given.map((g) => JSON.stringify(g)).join(" ")}`}`,
      });
      return z.NEVER;
    }),
  },
  flags: {},
  run: ({ form }, { io }) => schema(form, io),
});

export function schema(name: RubricSchemaName, io: CliIO): number {
  io.out(`${JSON.stringify(rubricJsonSchema(name), null, 2)}\n`);
  return 0;
}
