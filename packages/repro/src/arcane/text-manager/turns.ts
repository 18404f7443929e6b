import {
  MANAGER_SYSTEM_PROMPT,
  briefTerms,
  writtenCriterionVerifier,
  type GymTask,
  type SftExample,
} from "@rubric/autointeract";
import { approximateTokens, formatZodIssues, type FlatRubric } from "@rubric/core";
import { z } from "zod";

/**
 * Where a manager episode's questions turn ends and its rubric turn starts, in the sequences the
 * trainer sees: no id of any vocabulary (ids are non-negative), with log-probability 0 under
 * every policy, and never sent to the sidecar.
 */
export const TURN_BREAK = -1;

/** The questions turn the causal LM writes: `{"questions": [...]}` (none is a valid choice). */
export const QuestionsTurnSchema = z.strictObject({ questions: z.array(z.string().min(1).max(300)).max(8) });
/** The rubric turn: `{"criteria": [{"text", "weight"}]}`, the JSON of `@rubric/autointeract`'s SFT corpus. */
export const RubricTurnSchema = z.strictObject({
  criteria: z
    .array(z.strictObject({ text: z.string().min(1).max(300), weight: z.number().min(1).max(5) }))
    .min(1)
    .max(20),
});

/** How many characters of a task's prompt the manager reads (a small model has few positions), before its key terms. */
const TASK_CHARS = 200;

/** The task as the LLM manager reads it: the start of its prompt, then its salient words (which a brief-term criterion copies). */
export function taskDigest(task: GymTask): string {
  const head = task.prompt.replace(/\s+/g, " ").trim();
  const cut = head.length > TASK_CHARS ? `${head.slice(0, TASK_CHARS)}…` : head;
  return `${cut}\nKey terms: ${briefTerms(task.prompt, 8).join(", ")}`;
}

/** The questions turn's prompt: the manager's instructions and the task. */
export function questionsPrompt(task: GymTask): string {
  return `${MANAGER_SYSTEM_PROMPT}\nTask: ${taskDigest(task)}\nQuestions: `;
}

/** The rubric turn's prompt: the questions turn's, what was asked, what the stakeholder said. */
export function rubricPrompt(
  task: GymTask,
  questionsText: string,
  exchanges: readonly { readonly question: string; readonly answer: string }[],
): string {
  const heard = exchanges.map((e, i) => `Q${i + 1}: ${e.question}\nA${i + 1}: ${e.answer}`).join("\n");
  return `${questionsPrompt(task)}${questionsText}\n${heard === "" ? "(no questions)" : heard}\nRubric: `;
}

/** A rubric turn read back: the gym rubric (each criterion's rule from its text), or why it is not one. */
export type ReadRubric =
  | { readonly ok: true; readonly rubric: FlatRubric; readonly judged: number }
  | { readonly ok: false; readonly reason: string };

/**
 * Parses and validates a rubric turn: JSON, then `RubricTurnSchema`, then each criterion's
 * verifier as `writtenCriterionVerifier` reads its text. A criterion that reads as no rule would
 * need a judge, which the gym has not: it is left out and counted (`judged`); a rubric with no
 * rule left is not a rubric.
 */
export function readRubricTurn(text: string, id: string): ReadRubric {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `not JSON: ${(error as Error).message}` };
  }
  const parsed = RubricTurnSchema.safeParse(json);
  if (!parsed.success) return { ok: false, reason: formatZodIssues(parsed.error, { limit: 1 }) };
  const criteria: FlatRubric["criteria"][number][] = [];
  let judged = 0;
  parsed.data.criteria.forEach((c, i) => {
    const read = writtenCriterionVerifier(c.text);
    if (read.kind !== "rule") {
      judged++;
      return;
    }
    criteria.push({ id: `c${i + 1}`, text: c.text, weight: c.weight, polarity: "reward", verifier: read.verifier });
  });
  if (criteria.length === 0) return { ok: false, reason: `none of its ${judged} criteria reads as a rule` };
  return { ok: true, rubric: { id, criteria }, judged };
}

/** One manager episode as text: the questions it asked (parsed, or none when the turn does not parse) and its rubric turn. */
export interface ManagerEpisode {
  readonly questions: readonly string[];
  /** False when the questions turn did not parse (it then asked nothing). */
  readonly questionsParsed: boolean;
  readonly rubricText: string;
}

/**
 * A teacher dialogue's two turns as the LLM manager writes them: the questions (assistant turns
 * `{"question"}`) as one questions turn, the stakeholder's answers, and the final rubric turn.
 */
export function teacherTurns(example: SftExample): {
  questionsText: string;
  exchanges: { question: string; answer: string }[];
  rubricText: string;
} {
  const assistant = example.messages.filter((m) => m.role === "assistant");
  const answers = example.messages.filter((m) => m.role === "user").slice(1);
  const questions = assistant.slice(0, -1).map((m) => (JSON.parse(m.content) as { question: string }).question);
  return {
    questionsText: JSON.stringify({ questions }),
    exchanges: questions.map((question, q) => ({ question, answer: answers[q]?.content ?? "" })),
    rubricText: assistant.at(-1)!.content,
  };
}

/** What an episode costs in tokens: the questions asked, and the rubric's criteria (as `gymReward` counts them). */
export function episodeTokens(episode: ManagerEpisode, rubric: FlatRubric | undefined) {
  return {
    questions: episode.questions.reduce((n, q) => n + approximateTokens(q), 0),
    rubric: (rubric?.criteria ?? []).reduce((n, c) => n + approximateTokens(c.text), 0),
  };
}
