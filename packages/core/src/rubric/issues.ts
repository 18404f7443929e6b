import type { z } from "zod";
import { formatZodPath } from "../records/zod-issues.js";
import type { RubricIssue } from "./errors.js";

function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "number") return Number.isNaN(value) ? "NaN" : String(value);
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (value === null) return "null";
  return typeof value === "object" ? "an object" : String(value);
}

// zod's default messages name neither the value nor the bound in a stable form; the CLI and
// the tests promise `expected ≥ 0, got -2`, so the message is rebuilt from the issue's data.
function describeIssue(issue: z.core.$ZodIssue): string {
  const got = "input" in issue ? describeValue(issue.input) : undefined;
  const gotPart = got === undefined ? "" : `, got ${got}`;
  switch (issue.code) {
    case "too_small": {
      if (issue.origin === "array")
        return `expected at least ${String(issue.minimum)} item${issue.minimum === 1 ? "" : "s"}, got ${Array.isArray(issue.input) ? issue.input.length : "fewer"}`;
      if (issue.origin === "string") return `expected a non-empty string${gotPart}`;
      return `expected ${issue.inclusive ? "≥" : ">"} ${String(issue.minimum)}${gotPart}`;
    }
    case "too_big":
      return `expected ${issue.inclusive ? "≤" : "<"} ${String(issue.maximum)}${gotPart}`;
    case "invalid_type":
      if (issue.expected === "number" && typeof issue.input === "number") return `expected a finite number${gotPart}`;
      return `expected ${issue.expected}${gotPart}`;
    case "invalid_value":
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}${gotPart}`;
    case "unrecognized_keys":
      return `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => JSON.stringify(k)).join(", ")}`;
    case "invalid_union": {
      // A discriminated union reports the whole object; the reader needs the discriminator's value.
      const key = issue.path[issue.path.length - 1];
      const input = "input" in issue ? issue.input : undefined;
      if (typeof key === "string" && typeof input === "object" && input !== null && key in input) {
        const expected = /Expected (.*)$/.exec(issue.message)?.[1];
        const value = describeValue((input as Record<string, unknown>)[key]);
        return expected ? `expected ${expected}, got ${value}` : `unknown ${key} ${value}`;
      }
      return `${issue.message}${gotPart}`;
    }
    default:
      return issue.message;
  }
}

/** Converts zod issues to rubric issues, keeping their paths below `prefix`. */
export function toRubricIssues(
  issues: readonly z.core.$ZodIssue[],
  prefix: readonly PropertyKey[] = [],
): RubricIssue[] {
  return issues.map((issue) => {
    const path = [...prefix, ...issue.path];
    // An unknown key is reported at the key itself, which is where a reader looks for it.
    if (issue.code === "unrecognized_keys" && issue.keys.length === 1) {
      return { path: formatZodPath([...path, issue.keys[0]!]), message: "unknown field" };
    }
    return { path: formatZodPath(path), message: describeIssue(issue) };
  });
}
