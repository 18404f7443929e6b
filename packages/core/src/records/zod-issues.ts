import type { z } from "zod";

/**
 * Writes a zod issue path the way a reader would type it into the value: keys joined by dots,
 * array indices in brackets; the empty path is `(root)`.
 *
 * @example
 * formatZodPath(["stages", 1, "rules", 0, "weight"]); // "stages[1].rules[0].weight"
 * formatZodPath([]); // "(root)"
 */
export function formatZodPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out === "" ? "(root)" : out;
}

/** How `formatZodIssues` lays its lines out. */
export interface ZodIssueFormat {
  /** Keys put before every issue's path, e.g. `["options"]` writes `options.seed: …`. */
  readonly prefix?: readonly PropertyKey[];
  /** Written before every line, e.g. the file the value came from: `card.json: seed: …`. */
  readonly source?: string;
  /** At most this many issues, in zod's order; all of them by default. */
  readonly limit?: number;
  /** Between the lines; a newline by default. */
  readonly separator?: string;
}

/**
 * Formats zod issues as `path.to.field[2]: message` lines, with zod's own messages. Every
 * package's errors use it, so a fault reads the same wherever it is reported.
 *
 * @example
 * const parsed = z.object({ seed: z.number() }).safeParse({ seed: "1" });
 * if (!parsed.success) formatZodIssues(parsed.error, { source: "run.json", prefix: ["options"] });
 * // "run.json: options.seed: Invalid input: expected number, received string"
 */
export function formatZodIssues(issues: z.ZodError | readonly z.core.$ZodIssue[], format: ZodIssueFormat = {}): string {
  const list = "issues" in issues ? issues.issues : issues;
  const { prefix = [], source, limit = list.length, separator = "\n" } = format;
  return list
    .slice(0, limit)
    .map(
      (issue) =>
        `${source === undefined ? "" : `${source}: `}${formatZodPath([...prefix, ...issue.path])}: ${issue.message}`,
    )
    .join(separator);
}
