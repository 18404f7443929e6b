/**
 * Writes the JSON Schemas of the rubric file forms to packages/core/schemas/, where editors
 * (`"$schema": ".../flat-rubric.schema.json"`) and other languages pick them up.
 * Run: pnpm --filter @rubric/core run schemas
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { rubricJsonSchema, rubricSchemaNames } from "../src/index.js";

for (const name of rubricSchemaNames) {
  const path = fileURLToPath(new URL(`../schemas/${schemaFileName(name)}`, import.meta.url));
  writeFileSync(path, `${JSON.stringify(rubricJsonSchema(name), null, 2)}\n`);
  console.log(`wrote ${path}`);
}

function schemaFileName(name: string): string {
  return `${name === "flat" ? "flat-rubric" : name === "staged" ? "staged-rubric" : "staged-rubric-record"}.schema.json`;
}
