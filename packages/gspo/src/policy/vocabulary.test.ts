import { describe, expect, it } from "vitest";
import { PolicyTemplateError } from "../errors.js";
import { PolicyVocabulary } from "./vocabulary.js";

describe("PolicyVocabulary", () => {
  it("refuses a template without exactly one {term} slot, naming it", () => {
    for (const [templates, message] of [
      [
        ["Addresses {term}", "Cites a source"],
        'options.templates[1] needs exactly one {term} slot, got "Cites a source"',
      ],
      [
        ["Compares {term} with {term}"],
        'options.templates[0] needs exactly one {term} slot, got "Compares {term} with {term}"',
      ],
    ] as const) {
      expect(() => new PolicyVocabulary({ templates })).toThrow(PolicyTemplateError);
      expect(() => new PolicyVocabulary({ templates })).toThrow(
        expect.objectContaining({ code: "policy.template", message }),
      );
    }
  });
});
