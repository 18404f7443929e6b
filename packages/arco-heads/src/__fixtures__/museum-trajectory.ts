import type { Trajectory } from "../step/step.js";

/** A three-step QA trajectory with a reward of 1, shared by the step, prompt and annotation tests. */
export const museumTrajectory: Trajectory = {
  id: "q7",
  task: "Which city hosts the museum founded by X?",
  outcome: 1,
  turns: [
    { action: "Search[museum founded by X]", observation: "The Y Museum was founded by X.", budgetLeft: 3 },
    { action: "Search[Y Museum location]", observation: "The Y Museum is in Lyon.", budgetLeft: 2 },
    { action: "Finish[Lyon]", observation: "Episode finished.", budgetLeft: 1 },
  ],
};
