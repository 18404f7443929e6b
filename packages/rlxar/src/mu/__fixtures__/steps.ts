// μ's test steps: a three-step HotpotQA-like trajectory and a one-step yes/no question, and μ-SFT
// examples that teach one list of criteria for every step.
import { criteriaTarget, type MuSftExample, type Step, stepPrompt, stepsOf } from "@rubric/arco-heads";

export const STEPS: Step[] = [
  ...stepsOf({
    id: "q1",
    task: "Which river flows through the capital of the country where Tarn Hall was built?",
    outcome: 1,
    turns: [
      {
        action: "Search[Tarn Hall]",
        observation: "Tarn Hall is a manor house in Norland, built in 1702.",
        budgetLeft: 3,
      },
      {
        action: "Search[capital of Norland]",
        observation: "Vessby is the capital of Norland, on the river Aln.",
        budgetLeft: 2,
      },
      { action: "Finish[Aln]", observation: "Episode finished.", budgetLeft: 1 },
    ],
  }),
  { task: "Is Mount Orr taller than Mount Bel?", history: [], budgetLeft: 3, action: "Finish[yes]" },
];

export const CRITERIA = ["Finds the country", "Targets the capital", "Avoids repeats"];

/** One μ-SFT example per step: its prompt (at K = 3 unless `k` says), `criteria`, and the same K `scores`. */
export function sftExamples(
  steps: readonly Step[],
  criteria: readonly string[],
  scores: readonly number[],
  k?: number,
): MuSftExample[] {
  return steps.map((step, t) => ({
    id: `q#${t}`,
    trajectory: "q",
    step: t,
    messages: stepPrompt(step, k === undefined ? {} : { k }),
    target: criteriaTarget(criteria),
    criteria: [...criteria],
    scores: [...scores],
    outcome: 1,
  }));
}
