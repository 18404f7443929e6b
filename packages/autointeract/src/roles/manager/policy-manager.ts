import { formatZodIssues, type FlatRubric } from "@rubric/core";
import { readInputText } from "@rubric/core/files";
import { z } from "zod";
import type { DialogueState } from "../../dialogue/dialogue.js";
import { ManagerPolicyFileError } from "../../dialogue/errors.js";
import { CRITERIA_BANK, briefCriterion, briefTerms, type BankCriterion } from "../../gym/bank.js";
import type { Manager, ManagerMove } from "./manager.js";

/**
 * A manager policy as data: the questions to ask, in order, and how to turn answers into a rubric
 * over the gym's criteria bank. It is the gym's transparent baseline (and the format `rubric
 * elicit --manager policy:<file>` reads); learned managers replace it.
 */
export const ManagerPolicySchema = z.strictObject({
  name: z.string().min(1).default("policy"),
  questions: z.array(z.string().min(3)).min(1),
  /** Weights given to a criterion by how strongly the answer stated it. */
  emphasis: z
    .strictObject({
      essential: z.number().positive(),
      wanted: z.number().positive(),
      nice: z.number().positive(),
      mentioned: z.number().positive(),
    })
    .default({ essential: 5, wanted: 3, nice: 2, mentioned: 2 }),
  maxCriteria: z.number().int().min(1).max(40).default(14),
});
export type ManagerPolicy = z.output<typeof ManagerPolicySchema>;

export const DEFAULT_POLICY: ManagerPolicy = ManagerPolicySchema.parse({
  name: "family-questions",
  questions: [
    "What should the document cover, and which topics from the brief matter most?",
    "How should it be structured and organised: which sections, in what order?",
    "Any preferences on format, such as lists or tables, and on length?",
    "What evidence, sources or figures do you expect to see?",
    "What tone and wording should it have, and should it end with a recommendation?",
  ],
});

/**
 * Reads a policy file. @throws ManagerPolicyFileError naming the file and the path of the fault, or
 * core's input-file fault (`file.*`) when the file cannot be read.
 */
export function readManagerPolicy(path: string): ManagerPolicy {
  const text = readInputText(path);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ManagerPolicyFileError(`${path}: ${(error as Error).message}`);
  }
  const parsed = ManagerPolicySchema.safeParse(value);
  if (!parsed.success) throw new ManagerPolicyFileError(formatZodIssues(parsed.error, { source: path, limit: 1 }));
  return parsed.data;
}

function lowerFirst(text: string): string {
  return text[0]!.toLowerCase() + text.slice(1);
}

/**
 * Reads bank criteria out of answers: a criterion counts when its statement appears in an
 * answer; the phrase before it ("Essential:", "I'd like this:", …) sets its weight.
 */
function criteriaFromAnswers(
  answers: readonly string[],
  terms: readonly string[],
  policy: ManagerPolicy,
): { criterion: BankCriterion; weight: number }[] {
  const found = new Map<string, { criterion: BankCriterion; weight: number }>();
  const candidates = [...CRITERIA_BANK, ...terms.map(briefCriterion)];
  for (const answer of answers)
    for (const sentence of answer.split(/(?<=\.)\s+/)) {
      for (const criterion of candidates) {
        if (!sentence.includes(lowerFirst(criterion.text)) && !sentence.startsWith(criterion.text)) continue;
        const weight = sentence.startsWith("Essential")
          ? policy.emphasis.essential
          : sentence.startsWith("I'd like")
            ? policy.emphasis.wanted
            : sentence.startsWith("Nice")
              ? policy.emphasis.nice
              : policy.emphasis.mentioned;
        const previous = found.get(criterion.id);
        if (!previous || previous.weight < weight) found.set(criterion.id, { criterion, weight });
      }
    }
  return [...found.values()].slice(0, policy.maxCriteria);
}

/** A manager that follows a policy: asks its questions (within the budget), then writes the rubric it heard. */
export function policyManager(policy: ManagerPolicy = DEFAULT_POLICY): Manager {
  return {
    name: `policy:${policy.name}`,
    async next(state: DialogueState): Promise<ManagerMove> {
      const asked = state.exchanges.length;
      if (asked < policy.questions.length && state.questionsLeft > 0 && state.turnsLeft > 1)
        return { type: "ask", question: { text: policy.questions[asked]! } };
      const heard = criteriaFromAnswers(
        state.exchanges.map((e) => e.answer),
        briefTerms(state.task.prompt, 6),
        policy,
      );
      // With nothing heard, fall back to the one thing every brief wants: address its main topic.
      const chosen =
        heard.length > 0
          ? heard
          : [{ criterion: briefCriterion(briefTerms(state.task.prompt, 1)[0] ?? "the task"), weight: 1 }];
      const rubric: FlatRubric = {
        id: `${state.task.id}-rubric`,
        criteria: chosen.map(({ criterion, weight }) => ({
          id: criterion.id,
          text: criterion.text,
          weight,
          polarity: "reward",
          verifier: criterion.verifier,
        })),
      };
      return { type: "submit", rubric };
    },
  };
}
