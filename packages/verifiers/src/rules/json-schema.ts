import { Ajv2020 } from "ajv/dist/2020.js";
import { z } from "zod";
import { extractJson } from "@rubric/core";
import { errorDraft, okDraft, type VerdictDraft, type Verifier } from "../verifier/verifier.js";
import { re2SchemaRegExp, schemaPatternIssues } from "./json-schema-patterns.js";

export const JsonSchemaSpecSchema = z
  .strictObject({
    kind: z.literal("json-schema"),
    /**
     * A JSON Schema (draft 2020-12) the output must satisfy. Its `pattern`s and `patternProperties`
     * run on RE2, like regex rules, in time linear in the output; one RE2 cannot run is refused here.
     */
    schema: z.record(z.string(), z.unknown()),
    /**
     * `whole`: the output itself must be JSON; `embedded` (default): JSON inside it counts too —
     * a fenced block, or the first balanced object or array amid prose.
     */
    extract: z.enum(["whole", "embedded"]).default("embedded"),
  })
  .superRefine((spec, ctx) => {
    // Named at the pattern's own path, so `rubric validate` points at it.
    const patterns = schemaPatternIssues(spec.schema);
    for (const issue of patterns)
      ctx.addIssue({ code: "custom", path: ["schema", ...issue.path], message: issue.message });
    if (patterns.length > 0) return;
    // What the walk cannot see (a `$ref` into any corner of the document, a schema ajv refuses)
    // still fails here, when the rubric is read, rather than as every output's error verdict.
    const compiled = compileSchema(spec.schema);
    if (!compiled.ok) ctx.addIssue({ code: "custom", path: ["schema"], message: compiled.message });
  });
export type JsonSchemaSpec = z.output<typeof JsonSchemaSpecSchema>;

// Every pattern ajv compiles goes through RE2: those the spec check names, and any it might miss.
const ajv = new Ajv2020({ allErrors: true, strict: false, code: { regExp: re2SchemaRegExp } });
// Compiling a schema costs far more than validating with it; rubrics reuse the same spec object,
// and the spec check compiles the very object that its parse returns.
const compiled = new WeakMap<object, ReturnType<typeof ajv.compile>>();

function compileSchema(
  schema: Record<string, unknown>,
): { ok: true; validate: ReturnType<typeof ajv.compile> } | { ok: false; message: string } {
  let validate = compiled.get(schema);
  if (!validate) {
    try {
      validate = ajv.compile(schema);
      // ajv keeps a compiled schema under its `$id`, and refuses a second schema with that id:
      // each parse of a rubric is a new object, so the second parse would fail. The compiled
      // function does not need the entry.
      ajv.removeSchema(schema);
    } catch (error) {
      return { ok: false, message: `invalid JSON Schema: ${(error as Error).message}` };
    }
    compiled.set(schema, validate);
  }
  return { ok: true, validate };
}

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
  const schema = compileSchema(spec.schema);
  // A broken schema (reaching here only past the spec check) is the rubric's fault, not the
  // output's: an error, not a 0.
  if (!schema.ok) return errorDraft(`${schema.message} in the rubric`);
  const { validate } = schema;
  const parsed = parseOutput(output, spec.extract);
  if (!parsed.ok) return okDraft(0, "the output is not JSON");
  if (validate(parsed.value)) return okDraft(1, "valid against the schema");
  const problems = (validate.errors ?? []).map((e) => `${e.instancePath || "(root)"} ${e.message ?? ""}`.trim());
  return okDraft(0, `invalid: ${problems.slice(0, 5).join("; ")}`, { errors: problems });
}
