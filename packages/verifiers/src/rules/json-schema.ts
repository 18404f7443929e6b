import { Ajv2020 } from "ajv/dist/2020.js";
import { z } from "zod";
import { extractJson } from "@rubric/core";
import { errorDraft, okDraft, type VerdictDraft, type Verifier } from "../verifier/verifier.js";

export const JsonSchemaSpecSchema = z.strictObject({
  kind: z.literal("json-schema"),
  /** A JSON Schema (draft 2020-12) the output must satisfy. */
  schema: z.record(z.string(), z.unknown()),
  /**
   * `whole`: the output itself must be JSON; `embedded` (default): JSON inside it counts too —
   * a fenced block, or the first balanced object or array amid prose.
   */
  extract: z.enum(["whole", "embedded"]).default("embedded"),
});
export type JsonSchemaSpec = z.output<typeof JsonSchemaSpecSchema>;

const ajv = new Ajv2020({ allErrors: true, strict: false });
// Compiling a schema costs far more than validating with it; rubrics reuse the same spec object.
const compiled = new WeakMap<object, ReturnType<typeof ajv.compile>>();

function parseOutput(output: string, extract: JsonSchemaSpec["extract"]): { ok: true; value: unknown } | { ok: false } {
  if (extract === "embedded") {
    const value = extractJson(output);
    return value === undefined ? { ok: false } : { ok: true, value };
  }
  try {
    return { ok: true, value: JSON.parse(output.trim()) };
  } catch {
    return { ok: false };
  }
}

/** The output (or the JSON embedded in it) must parse and satisfy a JSON Schema; all or nothing. */
export const jsonSchemaVerifier: Verifier<JsonSchemaSpec> = {
  kind: "json-schema",
  specSchema: JsonSchemaSpecSchema,
  cheap: true,
  async verify(_criterion, spec, input) {
    return checkJsonSchema(spec, input.output);
  },
  check: (spec, input) => checkJsonSchema(spec, input.output),
};

function checkJsonSchema(spec: JsonSchemaSpec, output: string): VerdictDraft {
  let validate = compiled.get(spec.schema);
  if (!validate) {
    try {
      validate = ajv.compile(spec.schema);
    } catch (error) {
      // A broken schema is the rubric's fault, not the output's: an error, not a 0.
      return errorDraft(`invalid JSON Schema in the rubric: ${(error as Error).message}`);
    }
    compiled.set(spec.schema, validate);
  }
  const parsed = parseOutput(output, spec.extract);
  if (!parsed.ok) return okDraft(0, "the output is not JSON");
  if (validate(parsed.value)) return okDraft(1, "valid against the schema");
  const problems = (validate.errors ?? []).map((e) => `${e.instancePath || "(root)"} ${e.message ?? ""}`.trim());
  return okDraft(0, `invalid: ${problems.slice(0, 5).join("; ")}`, { errors: problems });
}
