import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sharedPath } from "../__fixtures__/shared.js";
import { parseStagedRubric, readRubricJsonl } from "../rubric/parse.js";
import type { StagedRubric } from "../rubric/staged.js";
import { scoreWithReference, type OracleCase } from "./__fixtures__/reference-oracle.js";
import { scoreRubric } from "./score.js";

/**
 * Differential tests: our staged scoring against an independent Python transcription of the
 * reference code's control flow, on the shipped rubrics and on random ones, for arbitrary
 * verdicts. Totals must agree to the last bit.
 */

function ruleIds(rubric: StagedRubric): string[] {
  return rubric.stages.flatMap((s) => s.rules.map((r) => r.id));
}

function compare(rubrics: StagedRubric[], cases: OracleCase[]) {
  const expected = scoreWithReference(cases);
  cases.forEach((c, i) => {
    const ours = scoreRubric(rubrics[i]!, c.fractions, { ignoreGates: c.ignore_gates ?? false });
    const ref = expected[i]!;
    const label = `case ${i} (${rubrics[i]!.taskId ?? rubrics[i]!.category_name})`;
    expect({ label, total: ours.total, normalized: ours.normalized, max: ours.max, stoppedAt: ours.stoppedAt }).toEqual(
      {
        label,
        total: ref.total,
        normalized: ref.normalized,
        max: ref.max,
        stoppedAt: ref.stopped_at,
      },
    );
    expect(ours.stages.map((s) => [s.name, s.score, s.maxPoints, s.passed])).toEqual(
      ref.stages.map((s) => [s.name, s.score, s.max_points, s.passed]),
    );
  });
}

// Fractions a verifier really returns: all-or-nothing, common partial credits, and arbitrary ones.
const fraction = fc.oneof(fc.constantFrom(0, 1, 0.5, 0.25, 0.75, 0.8), fc.double({ min: 0, max: 1, noNaN: true }));

describe("staged scoring matches the reference algorithm", () => {
  const gdpval = ["rubrics-train.jsonl", "rubrics-eval.jsonl"].flatMap((file) =>
    readRubricJsonl(readFileSync(sharedPath(`data/gdpval/${file}`), "utf8")).rubrics.map(
      (r) => r.rubric as StagedRubric,
    ),
  );

  it("on all 219 shipped GDPval rubrics, for all-pass, all-fail, threshold-exact and random verdicts", () => {
    expect(gdpval).toHaveLength(219);
    const rubrics: StagedRubric[] = [];
    const cases: OracleCase[] = [];
    const add = (rubric: StagedRubric, fractions: Record<string, number>, ignoreGates = false) => {
      rubrics.push(rubric);
      cases.push({
        rubric: { task_id: rubric.taskId, rubric: { ...rubric, taskId: undefined } },
        fractions,
        ignore_gates: ignoreGates,
      });
    };
    gdpval.forEach((rubric, k) => {
      const ids = ruleIds(rubric);
      add(rubric, Object.fromEntries(ids.map((id) => [id, 1])));
      add(rubric, Object.fromEntries(ids.map((id) => [id, 0])));
      add(rubric, Object.fromEntries(ids.map((id) => [id, 0])), true);
      // Every rule at the fraction that puts its stage exactly on the pass mark: tests `≥`.
      const atThreshold: Record<string, number> = {};
      for (const stage of rubric.stages) {
        const w = stage.rules.reduce((sum, r) => sum + r.weight, 0);
        for (const rule of stage.rules) atThreshold[rule.id] = w > 0 ? Math.min(1, stage.min_score_to_pass / w) : 0;
      }
      add(rubric, atThreshold);
      const samples = fc.sample(fc.array(fraction, { minLength: ids.length, maxLength: ids.length }), {
        seed: 1000 + k,
        numRuns: 6,
      });
      samples.forEach((values, j) =>
        add(rubric, Object.fromEntries(ids.map((id, i) => [id, values[i]!])), j % 3 === 0),
      );
    });
    compare(rubrics, cases);
  });

  // Random rubrics reach what the shipped ones never do: skip_remaining gates, stage maxima over
  // the category maximum (rescaling), pass marks above the stage maximum (auto-correction).
  const rule = fc.record({
    type: fc.constantFrom("code", "llm_judge"),
    weight: fc.oneof(fc.constantFrom(0, 1, 2, 2.5, 4), fc.double({ min: 0, max: 5, noNaN: true })),
  });
  const stage = fc.record({
    is_required: fc.boolean(),
    max_points: fc.oneof(fc.constantFrom(1, 2.5, 3, 4, 5), fc.double({ min: 0.1, max: 8, noNaN: true })),
    min_score_to_pass: fc.oneof(fc.constantFrom(0, 1, 2.4, 3), fc.double({ min: 0, max: 10, noNaN: true })),
    on_failure_action: fc.constantFrom("skip_remaining", "zero_category", "continue"),
    on_failure_score: fc.constantFrom(0, 0.5, 1),
    rules: fc.array(rule, { minLength: 1, maxLength: 5 }),
  });
  const rubricArb = fc.record({
    max_total_score: fc.oneof(fc.constantFrom(5, 10, 11.7, 20), fc.double({ min: 2, max: 30, noNaN: true })),
    stages: fc.array(stage, { minLength: 1, maxLength: 4 }),
  });

  it("on random rubrics, including rescaled stages and corrected pass marks", () => {
    const raws = fc.sample(rubricArb, { seed: 424242, numRuns: 400 });
    const rubrics: StagedRubric[] = [];
    const cases: OracleCase[] = [];
    let rescaled = 0;
    let corrected = 0;
    raws.forEach((raw, k) => {
      const document = {
        category_name: `random ${k}`,
        max_total_score: raw.max_total_score,
        stages: raw.stages.map((s, i) => ({
          name: `stage ${i}`,
          description: "",
          ...s,
          rules: s.rules.map((r, j) =>
            r.type === "code"
              ? { type: "code", name: `r${j}`, description: "", weight: r.weight, code: "" }
              : { type: "llm_judge", name: `r${j}`, description: "", weight: r.weight, judge_prompt: "" },
          ),
        })),
      };
      const rubric = parseStagedRubric(document);
      if (rubric.stages.some((s, i) => s.max_points !== raw.stages[i]!.max_points)) rescaled++;
      if (rubric.stages.some((s, i) => s.min_score_to_pass !== raw.stages[i]!.min_score_to_pass)) corrected++;
      const ids = ruleIds(rubric);
      for (const [j, values] of fc
        .sample(fc.array(fraction, { minLength: ids.length, maxLength: ids.length }), { seed: k, numRuns: 3 })
        .entries()) {
        rubrics.push(rubric);
        cases.push({
          rubric: document,
          fractions: Object.fromEntries(ids.map((id, i) => [id, values[i]!])),
          ignore_gates: j === 2,
        });
      }
    });
    // The sample must really exercise the load-time rules, or this test proves little.
    expect(rescaled).toBeGreaterThan(50);
    expect(corrected).toBeGreaterThan(50);
    compare(rubrics, cases);
  });
});
