import { describe, expect, it } from "vitest";
import { z } from "zod";
import { formatZodIssues, formatZodPath } from "./zod-issues.js";

const Schema = z.strictObject({
  seed: z.number(),
  stages: z.array(z.strictObject({ rules: z.array(z.strictObject({ weight: z.number().min(0) })) })),
});

const failure = (value: unknown) => {
  const parsed = Schema.safeParse(value);
  if (parsed.success) throw new Error("expected the value to fail");
  return parsed.error;
};

describe("formatZodPath", () => {
  it("joins keys with dots and writes indices in brackets", () => {
    expect(formatZodPath(["stages", 1, "rules", 0, "weight"])).toBe("stages[1].rules[0].weight");
    expect(formatZodPath([0, "id"])).toBe("[0].id");
    expect(formatZodPath([])).toBe("(root)");
  });
});

describe("formatZodIssues", () => {
  const error = failure({ seed: "1", stages: [{ rules: [{ weight: 1 }, { weight: -2 }] }] });

  it("writes one `path: message` line per issue with zod's messages", () => {
    expect(formatZodIssues(error)).toBe(
      [
        "seed: Invalid input: expected number, received string",
        "stages[0].rules[1].weight: Too small: expected number to be >=0",
      ].join("\n"),
    );
  });

  it("takes the issues array as well as the error, and lays lines out as asked", () => {
    expect(formatZodIssues(error.issues, { source: "run.json", prefix: ["options"], limit: 1 })).toBe(
      "run.json: options.seed: Invalid input: expected number, received string",
    );
    expect(formatZodIssues(error, { separator: "; " })).toMatch(/^seed: .*; stages\[0\]\.rules\[1\]\.weight: /);
  });

  it("names the root of a value that is wrong as a whole", () => {
    expect(formatZodIssues(failure(3))).toBe("(root): Invalid input: expected object, received number");
    expect(formatZodIssues(failure(3), { prefix: ["options"] })).toBe(
      "options: Invalid input: expected object, received number",
    );
  });
});
