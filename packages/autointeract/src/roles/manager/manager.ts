import type { FlatRubric } from "@rubric/core";
import type { DialogueState, Question, Spend } from "../../dialogue/dialogue.js";

export type ManagerMove = (
  | { readonly type: "ask"; readonly question: Question }
  | { readonly type: "submit"; readonly rubric: FlatRubric }
) &
  Spend;

/** Asks questions, then writes the rubric. */
export interface Manager {
  readonly name: string;
  next(state: DialogueState): Promise<ManagerMove>;
}
