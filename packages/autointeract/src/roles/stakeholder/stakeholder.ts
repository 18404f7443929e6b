import type { DialogueState, Question, Spend } from "../../dialogue/dialogue.js";

export interface Answer extends Spend {
  readonly text: string;
}

/** Holds the true utility U*; answers the manager's questions about it. */
export interface Stakeholder {
  readonly name: string;
  answer(question: Question, state: DialogueState): Promise<Answer>;
}
