import type { RegExpEngine } from "ajv/dist/types/index.js";
import { compileRulePattern } from "./regex-engine.js";
import { RegexUnsupportedError } from "./re2-syntax.js";

/*
 * A JSON Schema carries regular expressions of its own (`pattern`, the keys of
 * `patternProperties`), and the output it is checked against is written by the policy. They run
 * on the regex rules' engine, RE2, so that no pattern a rubric can carry takes time more than
 * linear in the output: `^(a+)+$` on 34 `a`s and a `!` ran past 60 s on JavaScript's engine.
 * Unlike the `regex` rule there is no `engine: "js"` here; a pattern RE2 cannot run is refused.
 */

/** What the json-schema rule tells an author whose pattern RE2 cannot run. */
const REMEDY = "JSON Schema patterns run on RE2 alone (linear time); rewrite it without that";

/**
 * The regex engine ajv compiles a schema's patterns with (its `code.regExp` option): RE2 through
 * {@link compileRulePattern}, with JavaScript's syntax and the `u` flag ajv asks for.
 * @throws RegexUnsupportedError for a pattern RE2 cannot run, SyntaxError for an invalid one;
 * ajv's `compile` passes either on.
 */
export const re2SchemaRegExp: RegExpEngine = Object.assign(
  (pattern: string, flags: string) => {
    let compiled: ReturnType<typeof compileRulePattern>;
    try {
      compiled = compileRulePattern(pattern, flags);
    } catch (error) {
      if (error instanceof RegexUnsupportedError) throw new RegexUnsupportedError(pattern, error.feature, REMEDY);
      throw error;
    }
    return {
      test: (text: string) => compiled.count(text, 1) > 0,
      // ajv keys the compiled patterns of one schema by this string: it must differ per pattern.
      toString: () => `/${pattern}/${flags} (RE2)`,
    };
  },
  // Only ajv's standalone code generation reads `code`; this package never generates code.
  { code: "rubricRe2SchemaRegExp" },
);

/** A pattern in a schema and where it sits: the keys from the schema's root. */
export interface SchemaPattern {
  readonly path: readonly (string | number)[];
  readonly pattern: string;
}

// Keywords whose value is one subschema, a map of subschemas, or an array of them (draft 2020-12,
// with the draft-07 spellings ajv also reads). Values of other keywords (`const`, `enum`,
// `default`, `examples`…) are data, and a `pattern` inside them is not a pattern.
const ONE_SCHEMA = new Set([
  "not",
  "if",
  "then",
  "else",
  "contains",
  "items",
  "additionalItems",
  "additionalProperties",
  "unevaluatedItems",
  "unevaluatedProperties",
  "propertyNames",
]);
const SCHEMA_MAP = new Set([
  "properties",
  "patternProperties",
  "$defs",
  "definitions",
  "dependentSchemas",
  "dependencies",
]);
const SCHEMA_ARRAY = new Set(["allOf", "anyOf", "oneOf", "prefixItems", "items"]);

/**
 * Every regular expression in a JSON Schema: `pattern` values and `patternProperties` keys, with
 * their paths, in document order. Iterative, so a deeply nested schema cannot exhaust the stack.
 *
 * @example
 * schemaPatterns({ properties: { id: { pattern: "^[a-z]+$" } } });
 * // [{ path: ["properties", "id", "pattern"], pattern: "^[a-z]+$" }]
 */
export function schemaPatterns(schema: unknown): SchemaPattern[] {
  type Step = { node: unknown; path: (string | number)[] } | SchemaPattern;
  const found: SchemaPattern[] = [];
  const pending: Step[] = [{ node: schema, path: [] }];
  while (pending.length > 0) {
    const step = pending.pop()!;
    if ("pattern" in step) {
      found.push(step);
      continue;
    }
    const { node, path } = step;
    if (!isObject(node)) continue;
    const next: Step[] = [];
    for (const [key, value] of Object.entries(node)) {
      const at = [...path, key];
      if (key === "pattern" && typeof value === "string") next.push({ path: at, pattern: value });
      if (key === "patternProperties" && isObject(value))
        for (const pattern of Object.keys(value)) next.push({ path: [...at, pattern], pattern });
      if (ONE_SCHEMA.has(key)) next.push({ node: value, path: at });
      if (SCHEMA_ARRAY.has(key) && Array.isArray(value))
        value.forEach((item, i) => next.push({ node: item, path: [...at, i] }));
      if (SCHEMA_MAP.has(key) && isObject(value))
        for (const [name, sub] of Object.entries(value)) next.push({ node: sub, path: [...at, name] });
    }
    // Reversed onto the stack, so findings come in the document's order.
    pending.push(...next.reverse());
  }
  return found;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The first problem with each of a schema's patterns, for the spec-time check: RE2 cannot run it
 * (the construct named), or it is not a valid JavaScript regular expression.
 */
export function schemaPatternIssues(schema: unknown): { path: (string | number)[]; message: string }[] {
  return schemaPatterns(schema).flatMap(({ path, pattern }) => {
    try {
      re2SchemaRegExp(pattern, "u");
      return [];
    } catch (error) {
      const message =
        error instanceof RegexUnsupportedError
          ? error.message
          : `invalid regular expression: ${(error as Error).message}`;
      return [{ path: [...path], message }];
    }
  });
}
