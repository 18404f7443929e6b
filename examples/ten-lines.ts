// The README's "Ten lines of it", runnable: `pnpm --filter @rubric/examples ten-lines`.
import { parseFlatRubric, reweight, scoreRubric } from "@rubric/core";

const rubric = parseFlatRubric({
  id: "memo",
  criteria: [
    {
      id: "numbers",
      text: "States Q3 revenue of 4.2M",
      weight: 4,
      verifier: { kind: "numeric", expected: 4.2, tolerance: 0.05 },
    },
    { id: "blame", text: "Blames a named employee", weight: 3, polarity: "penalty", verifier: { kind: "llm-judge" } },
  ],
});
const score = scoreRubric(rubric, { numbers: 1, blame: 1 }); // met the numbers, and blamed someone
const edited = reweight(score, { blame: 6 }); // test-time edit, no verifier re-run
console.log(`normalized ${score.normalized.toFixed(4)}; with blame weighted 6: ${edited.normalized.toFixed(4)}`);
