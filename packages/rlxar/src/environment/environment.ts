import type { Turn } from "@rubric/arco-heads";

/**
 * What an agent sees before it acts: the task, every earlier turn with its observation, the
 * budget left, and whether the environment now insists on a final answer. It is the same
 * information μ's step prompt holds (arco-heads' `Step`, less the action), so a policy and μ read
 * one state.
 */
export interface AgentView {
  /** The environment's name for the task (a question id), for logs and seeds. */
  readonly taskId: string;
  /** The task as the agent reads it (ARCO: the question). */
  readonly task: string;
  readonly history: readonly Turn[];
  /** Budget left before this action (ARCO: searches remaining). */
  readonly budgetLeft: number;
  /** The budget is spent and the environment asks for a final answer (ARCO's forced-finish prompt). */
  readonly mustFinish: boolean;
}

/** An action the grammar recognised: its name (`Search`, `Finish`) and its argument text. */
export interface ParsedAction {
  readonly name: string;
  readonly argument: string;
}

/**
 * How an environment's actions are written and read. `parse` is tolerant the way a model's output
 * needs (it finds the first valid action in free text); `format` writes the canonical form, which
 * is what the history and μ record.
 */
export interface ActionGrammar {
  /** The actions' written forms for a prompt, e.g. `Search[query]`, `Finish[answer]`. */
  readonly forms: readonly string[];
  /** The first valid action in a model's raw output, or undefined when there is none. */
  parse(output: string): ParsedAction | undefined;
  /** The canonical text of an action, e.g. `Search[Ed Wood]`. */
  format(action: ParsedAction): string;
}

/**
 * What one step was, for credit assignment: a `tool` call spent budget and returned an
 * observation (ARCO: a Search); `finish` ended the episode with an answer; `invalid` was
 * unparseable (ARCO charges it one unit of budget); `violation` ended the episode without an
 * answer (ARCO: a search after the forced-finish prompt).
 */
export type StepKind = "tool" | "finish" | "invalid" | "violation";

/** The environment's answer to one action. */
export interface Transition {
  /** The action as the grammar read it; undefined for an invalid step. */
  readonly action: ParsedAction | undefined;
  /** The action as it enters the history: the canonical form, or the raw output when invalid. */
  readonly actionText: string;
  readonly kind: StepKind;
  readonly observation: string;
  readonly done: boolean;
  /** The reward of this step (ARCO: EM on the finishing step, 0 elsewhere). */
  readonly reward: number;
  /** Environment-specific facts about the step (the retrieved paragraph, the gold answer at the end). */
  readonly info: Readonly<Record<string, unknown>>;
}

/** One episode in progress: read `view()`, then `step(output)` until `done`. */
export interface EnvironmentEpisode {
  readonly done: boolean;
  /** The agent's view now; throws once the episode is done. */
  view(): AgentView;
  /** Applies a model's raw output; throws `EpisodeDoneError` when the episode has ended. */
  step(output: string): Transition;
}

/**
 * A multi-step environment that users implement for their own tools: `reset(task)` starts an
 * episode, whose `step(output)` parses the output with `grammar` and answers. ARCO's HotpotQA
 * environment is one (`hotpotQa`).
 */
export interface Environment<Task> {
  readonly name: string;
  readonly grammar: ActionGrammar;
  /** The most steps an episode can take, so rollouts can bound their loops. */
  readonly maxSteps: number;
  /** A description of the environment and its actions for a policy's or μ's system prompt. */
  readonly description: string;
  /** The task's id (a question id). */
  taskId(task: Task): string;
  reset(task: Task): EnvironmentEpisode;
}
