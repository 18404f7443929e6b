import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { sharedPath } from "../__fixtures__/shared.js";
import { rubricJsonSchema } from "./json-schema.js";

const ajv = new Ajv2020({ allErrors: true, strict: false });

describe("rubricJsonSchema", () => {
  it("accepts every shipped GDPval record, and rejects a negative weight", () => {
    const validate = ajv.compile(rubricJsonSchema("staged-record"));
    const lines = ["rubrics-train.jsonl", "rubrics-eval.jsonl"].flatMap((f) =>
      readFileSync(sharedPath(`data/gdpval/${f}`), "utf8")
        .split("\n")
        .filter((l) => l.trim() !== ""),
    );
    expect(lines).toHaveLength(219);
    for (const line of lines) expect(validate(JSON.parse(line)), JSON.stringify(validate.errors)).toBe(true);
    const bad = JSON.parse(lines[0]!);
    bad.rubric.stages[0].rules[0].weight = -2;
    expect(validate(bad)).toBe(false);
    expect(validate.errors?.map((e) => e.instancePath)).toContain("/rubric/stages/0/rules/0/weight");
  });

  it("describes the flat form: required fields, strictness, defaults optional", () => {
    const validate = ajv.compile(rubricJsonSchema("flat"));
    const ok = { id: "r", criteria: [{ id: "c", text: "t", weight: 1, verifier: { kind: "regex", pattern: "x" } }] };
    expect(validate(ok)).toBe(true);
    expect(validate({ ...ok, extra: 1 })).toBe(false);
    expect(validate({ id: "r", criteria: [] })).toBe(false);
    expect(validate({ id: "r", criteria: [{ ...ok.criteria[0], polarity: "bonus" }] })).toBe(false);
  });

  it("matches the committed schemas/ files (run `pnpm --filter @rubric/core run schemas` after a change)", () => {
    for (const [name, file] of [
      ["flat", "flat-rubric"],
      ["staged", "staged-rubric"],
      ["staged-record", "staged-rubric-record"],
    ] as const) {
      const committed = JSON.parse(readFileSync(new URL(`../../schemas/${file}.schema.json`, import.meta.url), "utf8"));
      expect(committed).toEqual(rubricJsonSchema(name));
    }
  });
});
