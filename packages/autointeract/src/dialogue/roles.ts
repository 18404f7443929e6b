import type { FlatRubric, TokenUsage } from "@rubric/core";

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

export interface Answer extends Spend {
  readonly text: string;
}

export type ManagerMove = (
  | { readonly type: "ask"; readonly question: Question }
  | { readonly type: "submit"; readonly rubric: FlatRubric }
) &
  Spend;

/** The exchange so far, as the roles see it. */
export interface DialogueState {
  readonly task: TaskBrief;
  readonly exchanges: readonly { readonly question: Question; readonly answer: string }[];
  readonly questionsLeft: number;
  readonly turnsLeft: number;
  readonly signal?: AbortSignal;
}

/** Holds the true utility U*; answers the manager's questions about it. */
export interface Stakeholder {
  readonly name: string;
  answer(question: Question, state: DialogueState): Promise<Answer>;
}

/** Asks questions, then writes the rubric. */
export interface Manager {
  readonly name: string;
  next(state: DialogueState): Promise<ManagerMove>;
}

export interface WorkerOutput extends Spend {
  readonly text: string;
}

/** Produces outputs for a task, steered by a rubric when given one. */
export interface Worker {
  readonly name: string;
  produce(
    task: TaskBrief,
    rubric: FlatRubric | undefined,
    n: number,
    options: { readonly seed: number; readonly signal?: AbortSignal },
  ): Promise<WorkerOutput[]>;
}
