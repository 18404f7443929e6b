import { FlatRubricSchema, formatZodIssues, type FlatRubric } from "@rubric/core";
import { runEffect } from "@rubric/core/effect";
import { Duration, Effect } from "effect";
import {
  DialogueInputError,
  QuestionBudgetExceededError,
  RoleOutputError,
  RoleTimeoutError,
  TurnLimitError,
} from "./errors.js";
import type { Manager } from "../roles/manager/manager.js";
import type { Answer, Stakeholder } from "../roles/stakeholder/stakeholder.js";
import type { Difficulty, DialogueState, Question, Spend, TaskBrief } from "./dialogue.js";
import type { Turn } from "./transcript.js";

/** USD per million tokens, by model id. */
export type PriceTable = Readonly<
  Record<string, { readonly inputPerMillion: number; readonly outputPerMillion: number }>
>;

export interface EpisodeOptions {
  readonly task: TaskBrief;
  readonly manager: Manager;
  readonly stakeholder: Stakeholder;
  /** Questions the manager may ask (default 5). */
  readonly questionBudget?: number;
  /** Manager moves in all, questions and the submission (default questionBudget + 1). */
  readonly turnLimit?: number;
  /** Per role call (default 120 s). */
  readonly timeoutMs?: number;
  /** C_clarify weight of a question by difficulty; unlabelled questions weigh 1. Default: every question 1. */
  readonly difficultyWeights?: Readonly<Record<Difficulty, number>>;
  readonly prices?: PriceTable;
  /** Called with every turn as it happens, e.g. `appendTurnsTo(path)`. */
  readonly onTurn?: (turn: Turn) => void;
  readonly signal?: AbortSignal;
}

export interface EpisodeCosts {
  readonly questions: number;
  /** C_clarify: questions, weighted by difficulty when a table is given. */
  readonly clarify: number;
  /** C_compute in tokens, both roles. */
  readonly tokens: number;
  /** C_compute in USD: reported by the roles or priced from the table. */
  readonly usd: number;
}

export interface EpisodeResult {
  readonly transcript: readonly Turn[];
  /** The submitted rubric, or null when the episode ended in an error. */
  readonly rubric: FlatRubric | null;
  readonly error?: {
    readonly name: string;
    readonly message: string;
    readonly role: "manager" | "stakeholder" | "engine";
  };
  readonly costs: EpisodeCosts;
}

function spendFields(spend: Spend): Spend {
  return {
    usage: spend.usage,
    costUsd: spend.costUsd,
    model: spend.model,
  };
}

/** Runs a role call with a timeout; resolves to the value or to the error, never rejects. */
async function call<T>(
  work: (signal: AbortSignal) => Promise<T>,
  timeoutMs: number,
  what: string,
  signal?: AbortSignal,
): Promise<{ ok: true; value: T } | { ok: false; error: Error }> {
  const effect = Effect.tryPromise({ try: work, catch: (e) => (e instanceof Error ? e : new Error(String(e))) }).pipe(
    Effect.timeoutFail({
      duration: Duration.millis(timeoutMs),
      onTimeout: () => new RoleTimeoutError(`${what} did not answer within ${timeoutMs} ms`),
    }),
  );
  try {
    return { ok: true, value: await runEffect(effect, signal) };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error : new Error(String(error)) };
  }
}

/**
 * Runs one manager–stakeholder episode: the manager asks (within a question budget and a turn
 * limit) and the stakeholder answers, until the manager submits a rubric, validated by core's
 * schema. Every turn goes to `onTurn` as it happens. A role that fails, times out, returns
 * malformed output or breaks the budget ends the episode with a typed error in the transcript;
 * nothing already said is lost. Roles hold no state the engine shares, so episodes may run
 * concurrently with separate role objects.
 *
 * @example
 * const { rubric, costs, transcript } = await runEpisode({ task, manager, stakeholder, questionBudget: 3, onTurn: appendTurnsTo("t.jsonl") });
 */
export async function runEpisode(options: EpisodeOptions): Promise<EpisodeResult> {
  const budget = options.questionBudget ?? 5;
  const turnLimit = options.turnLimit ?? budget + 1;
  const timeoutMs = options.timeoutMs ?? 120_000;
  if (!Number.isInteger(budget) || budget < 0)
    throw new DialogueInputError(`questionBudget must be an integer ≥ 0, got ${budget}`);
  if (!Number.isInteger(turnLimit) || turnLimit < 1)
    throw new DialogueInputError(`turnLimit must be an integer ≥ 1, got ${turnLimit}`);
  const transcript: Turn[] = [];
  const emit = (turn: Turn) => {
    transcript.push(turn);
    options.onTurn?.(turn);
  };
  const exchanges: { question: Question; answer: string }[] = [];
  const costs = { questions: 0, clarify: 0, tokens: 0, usd: 0 };
  const account = (spend: Spend) => {
    if (spend.usage) costs.tokens += spend.usage.inputTokens + spend.usage.outputTokens;
    if (spend.costUsd !== undefined) costs.usd += spend.costUsd;
    else if (spend.usage && spend.model && options.prices?.[spend.model]) {
      const price = options.prices[spend.model]!;
      costs.usd +=
        (spend.usage.inputTokens * price.inputPerMillion + spend.usage.outputTokens * price.outputPerMillion) / 1e6;
    }
  };
  const finish = (rubric: FlatRubric | null, error?: EpisodeResult["error"]): EpisodeResult => {
    if (error) emit({ type: "error", role: error.role, error: { name: error.name, message: error.message } });
    emit({ type: "end", reason: error ? "error" : "submitted", costs: { ...costs } });
    return { transcript, rubric, error, costs: { ...costs } };
  };

  emit({
    type: "task",
    task: {
      id: options.task.id,
      prompt: options.task.prompt,
      sector: options.task.sector,
      occupation: options.task.occupation,
    },
    manager: options.manager.name,
    stakeholder: options.stakeholder.name,
    budget: { questions: budget, turns: turnLimit },
  });
  for (let turn = 0; ; turn++) {
    if (turn >= turnLimit)
      return finish(null, {
        role: "engine",
        name: "TurnLimitError",
        message: new TurnLimitError(`no rubric after ${turnLimit} manager turn(s)`).message,
      });
    const state: DialogueState = {
      task: options.task,
      exchanges: exchanges.map((e) => ({ question: e.question, answer: e.answer })),
      questionsLeft: budget - costs.questions,
      turnsLeft: turnLimit - turn,
      signal: options.signal,
    };
    const move = await call(
      () => options.manager.next(state),
      timeoutMs,
      `manager ${options.manager.name}`,
      options.signal,
    );
    if (!move.ok) return finish(null, { role: "manager", name: move.error.name, message: move.error.message });
    const m = move.value;
    account(m);
    if (m.type === "submit") {
      const checked = FlatRubricSchema.safeParse(m.rubric);
      if (!checked.success) {
        const error = new RoleOutputError(
          `the submitted rubric is invalid at ${formatZodIssues(checked.error, { limit: 1 })}`,
        );
        return finish(null, { role: "manager", name: error.name, message: error.message });
      }
      emit({ type: "rubric", rubric: checked.data, ...spendFields(m) });
      return finish(checked.data);
    }
    if (m.type !== "ask" || typeof m.question?.text !== "string" || m.question.text.trim() === "") {
      const error = new RoleOutputError(
        `manager ${options.manager.name} returned no valid move (expected ask with a question, or submit)`,
      );
      return finish(null, { role: "manager", name: error.name, message: error.message });
    }
    if (costs.questions >= budget) {
      const error = new QuestionBudgetExceededError(`question ${costs.questions + 1} exceeds the budget of ${budget}`);
      return finish(null, { role: "manager", name: error.name, message: error.message });
    }
    const index = costs.questions;
    costs.questions++;
    costs.clarify +=
      m.question.difficulty && options.difficultyWeights ? options.difficultyWeights[m.question.difficulty] : 1;
    emit({
      type: "question",
      index,
      text: m.question.text,
      difficulty: m.question.difficulty,
      ...spendFields(m),
    });
    const answer = await call<Answer>(
      () => options.stakeholder.answer(m.question, state),
      timeoutMs,
      `stakeholder ${options.stakeholder.name}`,
      options.signal,
    );
    if (!answer.ok)
      return finish(null, { role: "stakeholder", name: answer.error.name, message: answer.error.message });
    if (typeof answer.value?.text !== "string") {
      const error = new RoleOutputError(`stakeholder ${options.stakeholder.name} returned no answer text`);
      return finish(null, { role: "stakeholder", name: error.name, message: error.message });
    }
    account(answer.value);
    emit({ type: "answer", index, text: answer.value.text, ...spendFields(answer.value) });
    exchanges.push({ question: m.question, answer: answer.value.text });
  }
}
