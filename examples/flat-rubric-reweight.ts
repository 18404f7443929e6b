/**
 * A flat weighted rubric end to end: load it (with a precise error when it is wrong), score
 * stored verdicts, edit weights at test time without re-running a verifier, and see how an
 * error verdict is handled. No model is needed: the verdicts are written out by hand.
 *
 *   pnpm --filter @rubric/examples flat-rubric
 */
import {
  CriterionErrorsError,
  RubricValidationError,
  formatRubricIssue,
  parseFlatRubric,
  reweight,
  scoreRubric,
  type Verdict,
} from "@rubric/core";

const rubric = parseFlatRubric({
  id: "board-memo",
  title: "Quarterly board memo",
  criteria: [
    {
      id: "numbers",
      text: "Revenue and margin figures match the attached CSV",
      weight: 4,
      verifier: { kind: "numeric" },
    },
    { id: "sources", text: "Cites at least two internal reports", weight: 2, verifier: { kind: "citations", min: 2 } },
    {
      id: "length",
      text: "Fits on one page (≤ 450 words)",
      weight: 1,
      verifier: { kind: "length", unit: "words", max: 450 },
    },
    {
      id: "blame",
      text: "Blames a named employee for a miss",
      weight: 3,
      polarity: "penalty",
      verifier: { kind: "llm-judge" },
    },
  ],
});

// Three candidate memos, their verdicts stored once (fractions in [0, 1]).
const candidates: Record<string, Record<string, number>> = {
  A: { numbers: 1, sources: 0.5, length: 1, blame: 0 },
  B: { numbers: 1, sources: 1, length: 0, blame: 1 },
  C: { numbers: 0.5, sources: 1, length: 1, blame: 0 },
};
const scores = Object.entries(candidates).map(([name, verdicts]) => ({ name, score: scoreRubric(rubric, verdicts) }));
const show = (label: string, rows: { name: string; normalized: number }[]) =>
  console.log(`${label.padEnd(34)} ${rows.map((r) => `${r.name} ${r.normalized.toFixed(3)}`).join("   ")}`);

show(
  "as written (û = Σ w·ν / Σ w_reward):",
  scores.map(({ name, score }) => ({ name, normalized: score.normalized })),
);
console.log(`  B's penalty pulls it down: unclipped ${scores[1]!.score.unclipped.toFixed(3)}`);

// The stakeholder decides sources matter most and length not at all: recompute, zero verifier calls.
const edited = { sources: 6, length: 0 };
show(
  "after editing weights:",
  scores.map(({ name, score }) => ({ name, normalized: reweight(score, edited).normalized })),
);

// An error verdict never passes as a 0: it fails loudly unless a policy says otherwise.
const withError: Verdict[] = [
  { criterionId: "numbers", score: null, status: "error", error: "CSV not attached" },
  { criterionId: "sources", score: 1, status: "ok" },
  { criterionId: "length", score: 1, status: "ok" },
  { criterionId: "blame", score: 0, status: "ok" },
];
try {
  scoreRubric(rubric, withError);
} catch (error) {
  if (!(error instanceof CriterionErrorsError)) throw error;
  console.log(
    `\nerror verdict → ${error.name}: ${error.failures.map((f) => `${f.criterionId}: ${f.reason}`).join("; ")}`,
  );
}
console.log(
  `  errorsAs "renormalize": ${scoreRubric(rubric, withError, { errorsAs: "renormalize" }).normalized.toFixed(3)} (numbers left out)`,
);
console.log(`  errorsAs "zero":        ${scoreRubric(rubric, withError, { errorsAs: "zero" }).normalized.toFixed(3)}`);

// A broken rubric file is refused with the path and value of each problem.
try {
  parseFlatRubric({
    id: "broken",
    criteria: [{ id: "x", text: "t", weight: -2, verifier: { kind: "regex" }, colour: "red" }],
  });
} catch (error) {
  if (!(error instanceof RubricValidationError)) throw error;
  console.log(`\n${error.name}:\n${error.issues.map((i) => `  ${formatRubricIssue(i)}`).join("\n")}`);
}
