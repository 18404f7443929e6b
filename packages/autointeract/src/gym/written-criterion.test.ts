import type { FlatRubric } from "@rubric/core";
import { createVerifierRegistry, scoreOutputs } from "@rubric/verifiers";
import { describe, expect, it } from "vitest";
import { CRITERIA_BANK } from "./bank.js";
import { writtenCriterionVerifier } from "./written-criterion.js";

const registry = createVerifierRegistry({ python: false, js: false });

/** Whether the rule a written criterion maps to passes on `text`, run by the real verifiers. */
async function holds(criterion: string, text: string): Promise<boolean> {
  const read = writtenCriterionVerifier(criterion);
  if (read.kind !== "rule") throw new Error(`${criterion}: no rule`);
  const rubric: FlatRubric = {
    id: "r",
    criteria: [{ id: "c", text: criterion, weight: 1, polarity: "reward", verifier: read.verifier }],
  };
  const [scored] = await scoreOutputs(rubric, [{ id: "o", input: "", output: text }], { registry });
  return scored!.score!.normalized === 1;
}

const table = "| a | b |\n|---|---|\n| 1 | 2 |\n";
const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(" ");

describe("writtenCriterionVerifier", () => {
  it("maps every bank criterion's text to the bank's own verifier", () => {
    for (const c of CRITERIA_BANK)
      expect(writtenCriterionVerifier(c.text)).toEqual({
        kind: "rule",
        verifier: c.verifier,
        template: `bank:${c.id}`,
      });
  });

  it("reads the bank's wording with other numbers, names and terms, and the rules it gives hold on real text", async () => {
    expect(await holds("Includes at least three tables", `# T\n\n${table}\n${table}\n${table}`)).toBe(true);
    expect(await holds("Includes at least three tables", `# T\n\n${table}\n${table}`)).toBe(false);
    expect(await holds('Has a "Methodology" section', "# T\n\n## Methodology\n\nText.")).toBe(true);
    expect(await holds('Has a "Methodology" section', "# T\n\n## Method\n\nText.")).toBe(false);
    expect(await holds("Is between 100 and 200 words long", words(150))).toBe(true);
    expect(await holds("Is between 100 and 200 words long", words(250))).toBe(false);
    expect(await holds("Cites at least four sources", "A [1], b [2], c [3] and d [4].")).toBe(true);
    expect(await holds("Cites at least four sources", "A [1], b [2] and c [3].")).toBe(false);
    expect(await holds('Addresses "tariff" from the brief', "The tariff rises.")).toBe(true);
    expect(await holds('Addresses "tariff" from the brief', "Prices rise.")).toBe(false);
    expect(await holds('Avoids "synergy" and "leverage"', "Plain words only.")).toBe(true);
    expect(await holds('Avoids "synergy" and "leverage"', "We leverage data.")).toBe(false);
  });

  it("agrees with the bank where a template reads a bank criterion in other words", () => {
    const bank = (id: string) => CRITERIA_BANK.find((c) => c.id === id)!.verifier;
    const rule = (text: string) => {
      const read = writtenCriterionVerifier(text);
      return read.kind === "rule" ? read.verifier : undefined;
    };
    expect(rule("includes at least 2 tables.")).toEqual(bank("table-2"));
    expect(rule("Cites at least 3 sources")).toEqual(bank("cite-3"));
    expect(rule("Keeps to at most twenty-five sentences")).toBeUndefined();
    expect(rule("Keeps to at most 25 sentences.")).toEqual(bank("sentences-max-25"));
    expect(rule('Has an "Appendix"  section')).toEqual(bank("section-appendix"));
  });

  it("leaves to the judge what no template reads, or reads as nonsense", () => {
    expect(writtenCriterionVerifier("Sounds confident and warm")).toEqual({ kind: "judge" });
    expect(writtenCriterionVerifier("Is between 300 and 200 words long")).toEqual({ kind: "judge" });
  });
});
