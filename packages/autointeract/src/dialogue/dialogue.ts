import type { TokenUsage } from "@rubric/core";

/*
 * What every role of a dialogue shares: the task brief, the questions, what a move cost, and the
 * state of the exchange. Each role's own interface (Stakeholder, Manager, Worker) lives in its
 * folder under roles/, beside the models, people and policies that play it.
 */

/** What everyone in an episode knows about the task. */
export interface TaskBrief {
  readonly id: string;
  readonly prompt: string;
  readonly sector?: string;
  readonly occupation?: string;
}

export type Difficulty = "easy" | "medium" | "hard";

export interface Question {
  readonly text: string;
  /** How hard the question is for the stakeholder to answer; weights C_clarify when a table is given. */
  readonly difficulty?: Difficulty;
}

/** Tokens and money a role spent on one move. */
export interface Spend {
  readonly usage?: TokenUsage;
  /** USD, when the role knows it; otherwise the engine prices `usage` with its price table. */
  readonly costUsd?: number;
  /** Model id, for pricing. */
  readonly model?: string;
}

/** The exchange so far, as the roles see it. */
export interface DialogueState {
  readonly task: TaskBrief;
  readonly exchanges: readonly { readonly question: Question; readonly answer: string }[];
  readonly questionsLeft: number;
  readonly turnsLeft: number;
  readonly signal?: AbortSignal;
}
